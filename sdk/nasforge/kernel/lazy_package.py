"""A package whose names load on first use, so importing one light submodule of it does not
import every heavy one.

``nasforge.tools.export.input_shape`` holds constants the command line needs to declare
its options, and a plugin's ``plugin`` module is what the command line loads to find the
plugin's commands; if the package's ``__init__`` imported its ONNX, training or network
modules eagerly, the command line would pay torch's import (seconds) to print ``--help``.
A package that uses this keeps its public names as they were; type checkers see them
through imports under ``TYPE_CHECKING``, and those same imports say where each name loads
from at run time (read from the package's source), so each name is written once.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class LazyPackage(types.ModuleType):
    """A package module whose public names are looked up in ``_lazy_where`` when first asked
    for (and kept), and whose other missing attributes are tried as submodules."""

    _lazy_where: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        package = self.__name__
        module = self._lazy_where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Loading a submodule binds it on its package under its own name; where a public
        # name is spelt like its submodule (``supernet`` in ``supernet.py``), the name keeps
        # meaning the public object, as it did when the package imported it eagerly.
        if (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and self._lazy_where.get(name) == value.__name__
        ):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*vars(self), *self._lazy_where})


def lazy_package(package: str, where: Mapping[str, str] | None = None) -> None:
    """Make the (already imported) package ``package`` lazy: public name ``n`` comes from
    module ``where[n]`` (a full dotted name) when first asked for; by default, from the
    module its ``__init__`` imports it from under ``if TYPE_CHECKING:``."""
    module = sys.modules[package]
    if where is None:
        where = typed_imports(Path(str(module.__file__)))
    module.__class__ = LazyPackage
    types.ModuleType.__setattr__(module, "_lazy_where", dict(where))


def typed_imports(path: Path) -> dict[str, str]:
    """``{name: module}`` of each ``from module import name`` (absolute) in the top-level
    ``if TYPE_CHECKING:`` blocks of the source file ``path``."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
                    found.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    return found
