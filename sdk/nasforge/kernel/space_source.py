"""A space named by where its code is, with no packaging: ``PATH.py:NAME`` or ``package.module:NAME``.

Wherever a space is named (``--space``, ``nasforge.api``), a name holding a colon is a
source: the file (or importable module) before it and the class after it, usually a
:class:`~nasforge.kernel.declared_space.DeclaredSpace`. The registry loads it on first
use (:meth:`~nasforge.kernel.registry.Registry.get`), so every command and every part of a
run reaches it as it reaches a registered space. A run records the source, with a file's
path made absolute, and a digest of the file (:func:`source_record`); a resume loads it
again and refuses, in one line, a file that changed since (:func:`check_source`), since
the genotypes in its journal might mean other networks now.

Whatever goes wrong (no such file, a module that does not import, a file that raises as
it runs, no such name in it, a name that is no space) is one line naming the path or the
name, a :class:`~nasforge.kernel.declared_choices.DeclarationError`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from nasforge.kernel.declared_choices import DeclarationError
from nasforge.kernel.errors import first_line, show

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_QUALNAME = _MODULE
#: Prefix of the module names source files are loaded under (never a real package's).
LOADED_PREFIX = "nasforge_space_source_"


def is_source(name: Any) -> bool:
    """Whether ``name`` names a space by its code: ``PATH.py:NAME`` or ``package.module:NAME``."""
    if not isinstance(name, str) or ":" not in name:
        return False
    where, _, attr = name.rpartition(":")
    if not where or not _QUALNAME.match(attr):
        return False
    return where.endswith(".py") or bool(_MODULE.match(where))


def split(ref: str) -> tuple[str, str, bool]:
    """(file or module, attribute path, whether it is a file)."""
    where, _, attr = ref.rpartition(":")
    return where, attr, where.endswith(".py")


def canonical(ref: str) -> str:
    """``ref`` with a file's path absolute (so a resume elsewhere finds it); a file that
    is not there is refused by the path as given."""
    where, attr, is_file = split(ref)
    if not is_file:
        return ref
    if not Path(where).expanduser().is_file():
        raise DeclarationError(f"no such file: {where}")
    return f"{Path(where).expanduser().resolve()}:{attr}"


def load(ref: str) -> Any:
    """The object ``ref`` names (see the module docstring for what is refused)."""
    where, attr, is_file = split(ref)
    module = _load_file(where) if is_file else _import(where)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            defined = sorted(
                n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__
            )
            listing = f" (it defines {', '.join(defined)})" if defined else ""
            raise DeclarationError(f"{where} has no '{attr}'{listing}")
        obj = getattr(obj, part)
    return obj


def load_space_class(ref: str) -> type:
    """The search-space class ``ref`` names."""
    from nasforge.kernel.search_space import SearchSpace

    obj = load(ref)
    if not (isinstance(obj, type) and issubclass(obj, SearchSpace)):
        raise DeclarationError(
            f"{ref} is {show(obj)}, not a search space (a DeclaredSpace or SearchSpace subclass)"
        )
    if not isinstance(getattr(obj, "name", None), str):
        raise DeclarationError(f"{ref} has no name")
    return obj


def module_name(path: Path) -> str:
    """The module name a source file is loaded under: its absolute path, spelt in hex, so
    that another process (a worker a space is pickled to) finds the file from the name alone
    (:func:`spec_of`, which ``import nasforge`` puts on the import path)."""
    return LOADED_PREFIX + str(path.resolve()).encode("utf-8").hex()


def spec_of(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of a source file's module by its name (:func:`module_name`), or None."""
    try:
        path = bytes.fromhex(name.removeprefix(LOADED_PREFIX)).decode("utf-8")
    except ValueError:
        return None
    return importlib.util.spec_from_file_location(name, path) if Path(path).is_file() else None


def _load_file(path: str) -> Any:
    file = Path(path).expanduser()
    if not file.is_file():
        raise DeclarationError(f"no such file: {path}")
    name = module_name(file)
    if name in sys.modules:
        return sys.modules[name]
    spec = spec_of(name)
    if spec is None or spec.loader is None:
        raise DeclarationError(f"{path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses, pickling and typing look classes up by module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise DeclarationError(f"{path} failed as it ran: {type(exc).__name__}: {first_line(exc)}") from exc
    return module


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        why = f"{type(exc).__name__}: {first_line(exc)}"
        raise DeclarationError(f"module {name} does not import: {why}") from exc


def reference_of(cls: type) -> str:
    """The source a run records for a space class handed over as an object: its module's
    file and its name there (a class made inside a function has none, and is refused)."""
    qualname = cls.__qualname__
    if "<locals>" in qualname:
        raise DeclarationError(
            f"space class {qualname} is defined inside a function; a run records where its space "
            "is, so define it at the top level of a file or module"
        )
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    if file and str(file).endswith(".py"):
        return f"{Path(file).resolve()}:{qualname}"
    if cls.__module__ != "__main__" and importlib.util.find_spec(cls.__module__) is not None:
        return f"{cls.__module__}:{qualname}"
    raise DeclarationError(f"space class {qualname} comes from no file or module a run could load again")


def loaded_source(cls: type) -> str | None:
    """Where a space class loaded from its file came from (``PATH.py:NAME``), else None."""
    if not cls.__module__.startswith(LOADED_PREFIX):
        return None
    return reference_of(cls)


def space_header(space: Any, named: str) -> dict[str, Any]:
    """What a journal header records of the run's space: its name and version, and where
    it came from when ``named`` is its code (:func:`source_record`)."""
    source = source_record(named) if is_source(named) else {}
    return {"name": space.name, "version": space.version, **source}


def file_digest(ref: str) -> str | None:
    """sha256 of the code ``ref`` names (its file, or its module's file), or None."""
    where, _, is_file = split(ref)
    if is_file:
        path = Path(where).expanduser()
    else:
        spec = importlib.util.find_spec(where.split(".")[0]) and importlib.util.find_spec(where)
        if spec is None or spec.origin is None or not Path(spec.origin).is_file():
            return None
        path = Path(spec.origin)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def source_record(ref: str) -> dict[str, str]:
    """What a run records of a space named by its code: the source and its digest."""
    digest = file_digest(ref)
    return {"source": ref, **({"digest": digest} if digest is not None else {})}


def check_source(recorded: Any, *, run_dir: Any) -> None:
    """Refuse to continue a run whose space's code changed since it was recorded."""
    if not isinstance(recorded, dict) or "source" not in recorded or "digest" not in recorded:
        return
    now = file_digest(str(recorded["source"]))
    if now != recorded["digest"]:
        where = split(str(recorded["source"]))[0]
        state = "is gone" if now is None else "changed since the run started"
        raise DeclarationError(
            f"the run in {run_dir} searched the space in {where}, which {state}; its genotypes may "
            "mean other networks now: start a new run (or restore the file)"
        )


__all__ = [
    "LOADED_PREFIX",
    "canonical",
    "check_source",
    "file_digest",
    "is_source",
    "load",
    "load_space_class",
    "loaded_source",
    "module_name",
    "spec_of",
    "reference_of",
    "source_record",
    "space_header",
]
