"""The rules the layering test holds the code to, as functions of a source tree.

Each rule reads Python files (never imports them) and returns its violations as lines
(``path:line: what``), so the test can run every rule on the real tree and, to show the
rule can fail at all, on a throw-away tree with one violation planted.

The core (``sdk/nasforge``) is three layers, each importing only the ones below it:
kernel < run < tools (``nasforge/__init__.py`` and the ``api``/``__main__`` faces sit
outside them). Imports count wherever they are written: inside functions
and under ``TYPE_CHECKING`` too, since a deferred import hides a dependency from Python's
import system, not from a reader; and a module imported by its name as a string
(``importlib.import_module("nasforge.run.x")``, ``__import__``, the core's ``require``)
counts as imported, where the string is written in the call or bound to a module-level
constant, since a string hides a dependency from both.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

LAYERS = {"kernel": 0, "run": 1, "tools": 2}


class Source:
    """One Python file of a tree, its module name and its syntax tree."""

    def __init__(self, path: Path, module: str, root: Path) -> None:
        self.path, self.module, self.root = path, module, root
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.is_package = path.name == "__init__.py"

    def where(self, line: int) -> str:
        return f"{self.path.relative_to(self.root)}:{line}"

    def imports(self) -> Iterator[tuple[int, str, tuple[str, ...]]]:
        """(line, module, names) of every absolute import, deferred ones and imports by name
        (:meth:`imports_by_name`) included."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node.lineno, alias.name, ()
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield node.lineno, node.module, tuple(a.name for a in node.names)
        for line, module in self.imports_by_name():
            yield line, module, ()

    def imports_by_name(self) -> Iterator[tuple[int, str]]:
        """(line, module) of each call that imports a module named by a string: the string
        written in the call, or a module-level constant holding it."""
        constants = _string_constants(self.tree)
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and node.args and _callee(node) in IMPORTS_BY_NAME):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                module = arg.value
            elif isinstance(arg, ast.Name) and arg.id in constants:
                module = constants[arg.id]
            else:
                continue  # a name computed at run time: no rule can follow it
            if module and not module.startswith("."):
                yield node.lineno, module


#: Functions that import the module their first argument names (``require``: the core's
#: import of an optional extra, :mod:`nasforge.kernel.optional`).
IMPORTS_BY_NAME = frozenset({"import_module", "__import__", "require"})


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string literal (``BUILTIN_MODULE = "nasforge.tools..."``)."""
    out: dict[str, str] = {}
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[union-attr]
        out.update((t.id, value.value) for t in targets if isinstance(t, ast.Name))
    return out


def sources(root: Path, top: Path) -> list[Source]:
    """Every Python file under ``top`` (a folder of ``root``), named as a module from ``top``'s parent."""
    out = []
    for path in sorted(top.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(top.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out.append(Source(path, ".".join(parts), root))
    return out


def imported_modules(src: Source, known: set[str] | dict[str, set[str]]) -> Iterator[tuple[int, str]]:
    """(line, module) of each import, ``from package import module`` naming that module
    (``known``: the tree's modules; as a mapping, each to the names it binds, so a package
    that binds a name its submodule also has, ``backends.spectrum``, gives the name)."""
    bound = known if isinstance(known, dict) else {}
    for line, module, names in src.imports():
        hits = [f"{module}.{n}" for n in names if f"{module}.{n}" in known and n not in bound.get(module, ())]
        yield from ((line, hit) for hit in hits)
        if len(hits) < len(names) or not names:
            yield line, module


def bindings(files: Iterable[Source]) -> dict[str, set[str]]:
    """Each module of ``files`` -> the names its top level binds (imports, defs, assignments)."""
    out: dict[str, set[str]] = {}
    for s in files:
        names: set[str] = set()
        for node in s.tree.body:
            if isinstance(node, ast.ImportFrom | ast.Import):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        out[s.module] = names
    return out


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 and parts[0] == "nasforge" else None


# --- rules of the core -------------------------------------------------------------------
def core_imports_of_plugins(core: list[Source]) -> list[str]:
    return [
        f"{s.where(line)}: imports {module}"
        for s in core
        for line, module, _ in s.imports()
        if module.split(".")[0].startswith("nasforge_")
    ]


#: (importer, module) pairs that are plugin loading, not dependencies (see the layering test).
Edges = frozenset[tuple[str, str]] | set[tuple[str, str]]


def upward_imports(core: list[Source], plugin_loading: Edges = frozenset()) -> list[str]:
    """An import from a layer of one below it (kernel from run or tools, run from tools),
    except the ``plugin_loading`` edges: a plugin module loaded by name like an entry point."""
    known = {s.module for s in core}
    out = []
    for s in core:
        mine = layer(s.module)
        for line, module in imported_modules(s, known):
            theirs = layer(module)
            if (s.module, module) in plugin_loading:
                continue
            if mine is not None and theirs is not None and theirs > mine:
                out.append(f"{s.where(line)}: {s.module} (layer {mine}) imports {module} (layer {theirs})")
    return out


def import_cycles(core: list[Source], plugin_loading: Edges = frozenset()) -> list[str]:
    """Modules that import each other in a loop (package ``__init__`` modules left out:
    importing a package's module runs its ``__init__``, which is no dependency of ours;
    and the ``plugin_loading`` edges, as in :func:`upward_imports`)."""
    modules = {s.module: s for s in core if not s.is_package}
    graph: dict[str, set[str]] = {}
    known = {s.module for s in core}
    for name, s in modules.items():
        targets = {
            _module_of(module, modules, known)
            for _, module in imported_modules(s, known)
            if (name, module) not in plugin_loading
        }
        graph[name] = {t for t in targets if t is not None and t != name}
    return [" -> ".join([*component, component[0]]) for component in _strongly_connected(graph)]


def _module_of(name: str, modules: dict[str, Source], known: set[str]) -> str | None:
    """The module (not package) of the tree that ``name`` is or lies in, if any."""
    while name:
        if name in modules:
            return name
        if name in known:
            return None  # a package: its __init__ is left out
        name = name.rpartition(".")[0]
    return None


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


# --- rules of the plugins ----------------------------------------------------------------
def plugin_package(src: Source) -> str:
    return src.module.split(".")[0]


def plugin_imports_of_other_plugins(plugins: list[Source]) -> list[str]:
    return [
        f"{s.where(line)}: imports {module}"
        for s in plugins
        for line, module, _ in s.imports()
        if module.split(".")[0].startswith("nasforge_") and module.split(".")[0] != plugin_package(s)
    ]


def plugin_imports_of_private_core(
    plugins: list[Source], public: Iterable[str], known: set[str] | dict[str, set[str]]
) -> list[str]:
    public = set(public)
    return [
        f"{s.where(line)}: imports {module}, not public API"
        for s in plugins
        for line, module in imported_modules(s, known)
        if module.split(".")[0] == "nasforge" and module != "nasforge" and module not in public
    ]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def code_strings(src: Source) -> Iterator[tuple[int, str]]:
    """String constants of the code: not docstrings, not ``help=``/``description=`` texts."""
    skip = _docstring_nodes(src.tree)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.keyword) and node.arg in {"help", "description", "epilog"}:
            skip.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def core_names_of_plugin_components(core: list[Source], names: set[str], allowed: Path) -> list[str]:
    return [
        f"{s.where(line)}: names '{text}'"
        for s in core
        if s.path != allowed
        for line, text in code_strings(s)
        if text in names
    ]


def plugin_names_of_other_plugins(
    plugins: list[Source], components: dict[str, set[str]], names: set[str]
) -> list[str]:
    out = []
    for s in plugins:
        foreign = names - components.get(plugin_package(s), set())
        out.extend(
            f"{s.where(line)}: names '{text}' of another plugin"
            for line, text in code_strings(s)
            if text in foreign
        )
    return out


def _is_name_of_something(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "name"


def plugin_branches_on_space_names(plugins: list[Source]) -> list[str]:
    """``x.name == "literal"`` (or ``in (...)``) where x is a space: a one-shot method must
    meet spaces through the supernet contract, never through their names."""
    out = []
    for s in plugins:
        for node in ast.walk(s.tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            named = [side for side in sides if _is_name_of_something(side)]
            literal = any(isinstance(side, ast.Constant | ast.Tuple | ast.List | ast.Set) for side in sides)
            if named and literal and any("space" in ast.unparse(side.value).lower() for side in named):
                out.append(f"{s.where(node.lineno)}: {ast.unparse(node)}")
    return out
