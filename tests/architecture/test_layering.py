"""The seams hold in spirit, not only in letter (issue 9).

- the core imports no plugin and names first-party plugin components only in
  ``nasforge/defaults.py``;
- no plugin names another plugin's components or branches on a space's name;
- plugins import only the core's public API: ``nasforge`` itself and the documented
  submodules in ``nasforge.PUBLIC_MODULES``.

Component names are read from the live registry, so a new plugin is covered with no
change here. Each check collects every violation, so a failure lists them all.
"""

from __future__ import annotations

import ast
import importlib
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import nasforge
from nasforge.kernel.registry import BUILTIN_PLUGIN, KINDS, get_registry

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "sdk" / "nasforge"
PLUGINS = ROOT / "plugins"
DEFAULTS = CORE / "run" / "defaults.py"


def _python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


def _plugin_package(path: Path) -> str:
    return path.relative_to(PLUGINS).parts[0]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _code_strings(path: Path) -> Iterator[tuple[int, str]]:
    """String constants of the code: not docstrings, not ``help=``/``description=`` texts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in {"help", "description", "epilog"}:
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # ``from package import module`` imports that module
                sub = f"{node.module}.{alias.name}"
                yield node.lineno, sub if _is_module(node.module, alias.name) else node.module


def _is_module(package: str, name: str) -> bool:
    """Whether ``from package import name`` names a module (not a function of that name)."""
    try:
        value = getattr(importlib.import_module(package), name, None)
    except ImportError:
        return False
    return isinstance(value, types.ModuleType)


def _components_by_plugin() -> dict[str, set[str]]:
    """Plugin package (e.g. ``nasforge_nb201``) -> names of the components it registers."""
    registry = get_registry()
    out: dict[str, set[str]] = {}
    for kind in KINDS:
        for name, component in registry.items(kind):
            origin = registry.origin(kind, name)
            if origin == BUILTIN_PLUGIN:
                continue
            module = getattr(component, "__module__", None) or type(component).__module__
            out.setdefault(module.split(".")[0], set()).add(name)
    return {package: names for package, names in out.items() if package.startswith("nasforge_")}


COMPONENTS = _components_by_plugin()
#: Ordinary words that happen to name a component, so code uses them as plain values too:
#: "random" is the random-search strategy and also a mode value (NASI's and the scorers'
#: labels "true" | "random"). Flagging it would force odd spellings on unrelated options,
#: while naming the strategy through it stays rare. "ensemble" is the zero-cost plugin's
#: rank-ensemble metric and also the core's own result (``SearchOutcome.ensemble``, the
#: journal's, ``--json``'s and ``inspect``'s ``ensemble`` keys, issue 13). Keep this set to
#: such words only.
ORDINARY_WORDS = frozenset({"random", "ensemble"})
FIRST_PARTY_NAMES = {name for names in COMPONENTS.values() for name in names} - ORDINARY_WORDS


def test_the_registry_knows_the_first_party_plugins() -> None:
    assert {"nasforge_nb201", "nasforge_search", "nasforge_darts", "nasforge_zerocost"} <= set(COMPONENTS)
    assert {"nb201", "rea", "nb201-table", "darts", "synflow"} <= FIRST_PARTY_NAMES


def core_imports_of_plugins() -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in _python_files(CORE)
        for line, module in _imports(path)
        if module.split(".")[0].startswith("nasforge_")
    ]


def core_names_of_plugin_components() -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: names '{text}'"
        for path in _python_files(CORE)
        if path != DEFAULTS
        for line, text in _code_strings(path)
        if text in FIRST_PARTY_NAMES
    ]


def plugin_names_of_other_plugins() -> list[str]:
    out = []
    for path in _python_files(PLUGINS):
        own = COMPONENTS.get(_plugin_package(path), set())
        foreign = FIRST_PARTY_NAMES - own
        out.extend(
            f"{path.relative_to(ROOT)}:{line}: names '{text}' of another plugin"
            for line, text in _code_strings(path)
            if text in foreign
        )
    return out


def plugin_imports_of_other_plugins() -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in _python_files(PLUGINS)
        for line, module in _imports(path)
        if module.split(".")[0].startswith("nasforge_") and module.split(".")[0] != _plugin_package(path)
    ]


def _is_name_of_something(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "name"


def plugin_branches_on_space_names() -> list[str]:
    """``x.name == "literal"`` (or ``in (...)``) where x is a space: a one-shot method must
    meet spaces through the supernet contract, never through their names."""
    out = []
    for path in _python_files(PLUGINS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            named = [s for s in sides if _is_name_of_something(s)]
            literal = any(isinstance(s, ast.Constant | ast.Tuple | ast.List | ast.Set) for s in sides)
            if named and literal and any("space" in ast.unparse(s.value).lower() for s in named):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return out


def plugin_imports_of_private_core() -> list[str]:
    public = set(nasforge.PUBLIC_MODULES)
    return [
        f"{path.relative_to(ROOT)}:{line}: imports {module}, not public API"
        for path in _python_files(PLUGINS)
        for line, module in _imports(path)
        if module.split(".")[0] == "nasforge" and module != "nasforge" and module not in public
    ]


CHECKS = [
    core_imports_of_plugins,
    core_names_of_plugin_components,
    plugin_names_of_other_plugins,
    plugin_imports_of_other_plugins,
    plugin_branches_on_space_names,
    plugin_imports_of_private_core,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_layering(check) -> None:
    violations = check()
    assert violations == [], "\n".join(violations)


def test_public_modules_exist() -> None:
    import importlib

    for module in nasforge.PUBLIC_MODULES:
        importlib.import_module(module)
