"""The registry loads the core's built-in plugin; nothing that plugin imports may import
the registry back (issue 9: ``registry -> builtin_plugin -> short_train -> registry``).

Checked on the source, with imports inside functions too: a deferred import hides a
cycle from Python's import system, not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nasforge

PACKAGE = Path(nasforge.__file__).resolve().parent


def _module_file(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] != "nasforge":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(name: str) -> set[str]:
    """The nasforge modules ``name`` imports (``from nasforge import x`` names module x
    where x is one, else the package itself)."""
    path = _module_file(name)
    assert path is not None, name
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "nasforge")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "nasforge":
                continue
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if _module_file(sub) is not None else node.module)
    return {m for m in out if _module_file(m) is not None}


def _reachable(start: str) -> dict[str, str]:
    """Every module reachable from ``start``, each with the module that first imports it."""
    seen: dict[str, str] = {start: ""}
    todo = [start]
    while todo:
        current = todo.pop()
        for module in sorted(_imports(current)):
            if module not in seen:
                seen[module] = current
                todo.append(module)
    return seen


def _path_to(seen: dict[str, str], module: str) -> list[str]:
    chain = [module]
    while seen[chain[-1]]:
        chain.append(seen[chain[-1]])
    return chain[::-1]


def test_the_builtin_plugin_never_imports_the_registry() -> None:
    seen = _reachable("nasforge.tools.builtin_plugin")
    assert "nasforge.tools.short_train" in seen and "nasforge.kernel.datasets" in seen  # the walk works
    for back in ("nasforge.kernel.registry", "nasforge"):
        assert back not in seen, " -> ".join(_path_to(seen, back))
