"""Plugin discovery and the name -> component registry.

Every plugin, first-party or not, arrives through the entry-point group ``nasforge``.
Each entry point is loaded on its own, and each registration hook is called on its own,
so that one broken plugin is reported (``nasforge plugins`` shows the error) and never
stops the others from registering. A plugin that fails (its module does not import, a
registration hook raises, or a component has a mistake a run would only meet later: see
:func:`component_mistake`) registers nothing, and asking for one of its components says
which plugin failed and why.

Every component is also known by its qualified name, ``plugin:name``. Order is
deterministic: the core's built-ins first, then nasforge's own (first-party) entry points,
then every other distribution's, each group sorted by entry-point name. A bare name two
plugins register is a clash (:mod:`nasforge.kernel.name_clashes`): it keeps meaning the
first-party component where one is (a package never changes what an existing command
runs), and is refused, listing the qualified names, where none is.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import threading
import traceback
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

import attrs
import pluggy

from nasforge.kernel import hookspecs
from nasforge.kernel.context_fields import construction_mistake
from nasforge.kernel.declared_choices import DeclarationError
from nasforge.kernel.errors import NasforgeError, UnknownNameError, first_line
from nasforge.kernel.name_clashes import AmbiguousNameError, NameClash, qualified_name
from nasforge.kernel.space_source import is_source, load_space_class

if TYPE_CHECKING:
    from nasforge.kernel.evaluator import Evaluator
    from nasforge.kernel.metric import Metric
    from nasforge.kernel.search_space import SearchSpace
    from nasforge.kernel.strategy import Strategy

ENTRY_POINT_GROUP = "nasforge"
#: The distribution whose entry points are first-party (registered before third parties').
FIRST_PARTY_DISTRIBUTION = "nasforge"
BUILTIN_PLUGIN = "nasforge.builtin"
#: The module of the core's own components (datasets, executors, short-train), loaded by
#: name like an entry point: the kernel never imports the layers above it.
BUILTIN_MODULE = "nasforge.tools.builtin_plugin"
#: Entry points named here (comma-separated) are not loaded, as if uninstalled.
DISABLE_ENV = "NASFORGE_DISABLE_PLUGINS"
#: Plugin modules named here (comma-separated, importable) are loaded after the entry
#: points, as if installed: a plugin tried without packaging it, or the toy space of the
#: conformance kits (``nasforge.kernel.testing.toy``) in tests and demos.
PLUGINS_ENV = "NASFORGE_PLUGINS"

KINDS = {
    "space": "nasforge_register_search_spaces",
    "metric": "nasforge_register_metrics",
    "strategy": "nasforge_register_strategies",
    "evaluator": "nasforge_register_evaluators",
    "dataset": "nasforge_register_datasets",
    "executor": "nasforge_register_executors",
    "command": "nasforge_register_commands",
}


@attrs.frozen
class PluginInfo:
    """One entry point and what became of it."""

    name: str
    module: str
    distribution: str | None
    ok: bool
    error: str | None = None
    provides: tuple[str, ...] = ()
    #: The failure's whole traceback, for ``-v`` (the one-line ``error`` names file and line).
    trace: str | None = attrs.field(default=None, eq=False, repr=False)


class Registry:
    """Components by kind and name, gathered from a pluggy plugin manager.

    Build one with :func:`load_registry` (or ``Registry(*create_plugin_manager(...))``)
    and pass it to what needs components; :func:`get_registry` is the process-wide
    default for callers that pass none.
    """

    def __init__(self, pm: pluggy.PluginManager, plugins: Iterable[PluginInfo]) -> None:
        self.pm = pm
        self._components: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._origin: dict[tuple[str, str], str] = {}
        #: Every component under its qualified name, ``plugin:name``.
        self._qualified: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._clash: dict[tuple[str, str], NameClash] = {}
        #: Components of plugins that failed: (kind, name) -> (plugin, its error).
        self._unavailable: dict[tuple[str, str], tuple[str, str]] = {}
        self.conflicts: list[str] = []
        #: Spaces named by their code, loaded on first use (never listed among the registered).
        self._sources: dict[str, Any] = {}
        plugins = list(plugins)
        errors: dict[str, list[str]] = {}
        offered: list[tuple[str, str, str, Any]] = []  # (kind, plugin, name, component), in order
        for kind, hook_name in KINDS.items():
            for impl in getattr(pm.hook, hook_name).get_hookimpls():  # registration order
                owner = impl.plugin_name
                try:
                    components = list(impl.function() or [])
                    names = [_component_name(c) for c in components]
                except Exception as exc:  # a broken plugin must not break the others
                    errors.setdefault(owner, []).append(f"{hook_name}: {failure_text(exc)}")
                    continue
                for cname, component in zip(names, components, strict=True):
                    mistake = component_mistake(kind, cname, component)
                    if mistake is not None:
                        errors.setdefault(owner, []).append(mistake)
                    offered.append((kind, owner, cname, component))
        # a plugin with any mistake registers nothing: half a plugin would run searches
        # its author never tried, and hide the mistake behind "unknown strategy"
        failed = {
            **{p.name: p.error or "" for p in plugins if not p.ok},
            **{k: "; ".join(v) for k, v in errors.items()},
        }
        provides: dict[str, list[str]] = {}
        owners: dict[tuple[str, str], list[str]] = {}
        for kind, owner, cname, component in offered:
            if owner in failed:
                self._unavailable.setdefault((kind, cname), (owner, failed[owner]))
                continue
            provides.setdefault(owner, []).append(f"{kind}:{cname}")
            self._qualified[kind][qualified_name(owner, cname)] = component
            self._origin[(kind, qualified_name(owner, cname))] = owner
            self._components[kind].setdefault(cname, component)  # the first registered
            self._origin.setdefault((kind, cname), owner)
            found = owners.setdefault((kind, cname), [])
            if owner not in found:
                found.append(owner)
        first_party = {p.name for p in plugins if p.distribution == FIRST_PARTY_DISTRIBUTION}
        #: Bare names two or more plugins register (:mod:`nasforge.kernel.name_clashes`).
        self.clashes: list[NameClash] = []
        for (kind, cname), found in owners.items():
            if len(found) < 2:
                continue
            default = next((o for o in found if o in first_party), None)
            clash = NameClash(kind, cname, tuple(found), default)
            self.clashes.append(clash)
            self._clash[(kind, cname)] = clash
            self.conflicts.append(clash.line())
            if default is not None:  # the bare name means the first-party one
                self._components[kind][cname] = self._qualified[kind][qualified_name(default, cname)]
                self._origin[(kind, cname)] = default
        self.plugins: list[PluginInfo] = [_settle(p, errors, provides) for p in plugins]

    @property
    def failed(self) -> list[PluginInfo]:
        """The plugins that failed to load (they register nothing), in loading order."""
        return [p for p in self.plugins if not p.ok]

    def names(self, kind: str) -> list[str]:
        """The names a user gives for ``kind``: bare names, and the qualified names of a
        clash whose bare name is refused."""
        return sorted(name for name, _ in self.items(kind))

    def get(self, kind: str, name: str) -> Any:
        """The component registered as ``name`` or ``plugin:name``; unknown names raise with
        a suggestion, a name of a plugin that failed to load says so
        (:class:`UnavailableError`), and a bare name two plugins register, none of them
        first-party, lists the qualified names (:class:`AmbiguousNameError`). A space named
        by its code (``PATH.py:NAME``, ``package.module:NAME``) is loaded from there on first
        use (:mod:`nasforge.kernel.space_source`)."""
        table = self._components[kind]
        if name in table:
            clash = self._clash.get((kind, name))
            if clash is not None and clash.default is None:
                raise AmbiguousNameError(_KIND_WORDS.get(kind, kind), clash)
            return table[name]
        if name in self._qualified[kind]:
            return self._qualified[kind][name]
        if kind == "space" and is_source(name):
            return self._source(name)
        raise self._missing(kind, name)

    def _source(self, ref: str) -> Any:
        """The space class ``ref`` names, loaded once per registry (a mistake a run would
        meet later is refused now, in one line naming it)."""
        if ref not in self._sources:
            cls = load_space_class(ref)
            mistake = component_mistake("space", ref, cls)
            if mistake is not None:
                raise DeclarationError(f"{ref}: {mistake}")
            self._sources[ref] = cls
        return self._sources[ref]

    def _missing(self, kind: str, name: str) -> UnknownNameError:
        word = _KIND_WORDS.get(kind, kind)
        if (kind, name) in self._unavailable:
            owner, error = self._unavailable[(kind, name)]
            message = f"{word} '{name}' is unavailable: plugin '{owner}' failed to load: {error}"
            return UnavailableError(word, name, self._components[kind], message)
        unknown = UnknownNameError(word, name, self._components[kind])
        # a plugin that failed before saying what it provides (it did not import) may hold it
        silent = [p for p in self.failed if not any(k == p.name for k, _ in self._unavailable.values())]
        if not silent:
            return unknown
        causes = "; ".join(f"plugin '{p.name}' failed to load: {p.error}" for p in silent)
        return UnavailableError(
            word, name, self._components[kind], f"{unknown}; {causes} (it may provide it)"
        )

    def has(self, kind: str, name: str) -> bool:
        """Whether :meth:`get` finds ``name`` (bare or qualified)."""
        try:
            self.get(kind, name)
        except UnknownNameError:
            return False
        return True

    def origin(self, kind: str, name: str) -> str:
        """The plugin that supplied component ``name`` (raises like :meth:`get`); a space
        named by its code comes from that code."""
        self.get(kind, name)
        if kind == "space" and name in self._sources:
            return name
        return self._origin[(kind, name)]

    def items(self, kind: str) -> list[tuple[str, Any]]:
        """(name, component) of every component a user can name without qualifying it, and
        the qualified ones of a clash whose bare name is refused."""
        out = [(n, c) for n, c in self._components[kind].items() if n not in self._refused(kind)]
        for name in self._refused(kind):
            out += [(q, self._qualified[kind][q]) for q in self._clash[(kind, name)].qualified]
        return sorted(out, key=lambda item: item[0])

    def _refused(self, kind: str) -> list[str]:
        return [c.name for c in self.clashes if c.kind == kind and c.default is None]

    # --- typed: what a registered name is, as mypy and a reader see it ---------------------
    def search_space(self, name: str) -> type[SearchSpace]:
        """The search space class registered as ``name`` (or ``plugin:name``)."""
        from nasforge.kernel.search_space import SearchSpace

        return cast("type[SearchSpace]", self.checked("space", name, SearchSpace))

    def strategy(self, name: str) -> type[Strategy]:
        """The ask/tell strategy class registered as ``name``; a one-shot one is refused,
        naming :func:`nasforge.kernel.one_shot.one_shot_strategy` (which gives it typed)."""
        from nasforge.kernel.strategy import Strategy

        return cast("type[Strategy]", self.checked("strategy", name, Strategy))

    def metric(self, name: str) -> type[Metric]:
        """The metric class registered as ``name``."""
        from nasforge.kernel.metric import Metric

        return cast("type[Metric]", self.checked("metric", name, Metric))

    def evaluator(self, name: str) -> type[Evaluator]:
        """The evaluator class registered as ``name``."""
        from nasforge.kernel.evaluator import Evaluator

        return cast("type[Evaluator]", self.checked("evaluator", name, Evaluator))

    def space(self, name: str, **options: Any) -> SearchSpace:
        """The search space ``name`` built with ``options`` (the CLI's and the API's shortcut)."""
        return self.search_space(name)(**options)

    def checked(self, kind: str, name: str, base: type) -> type:
        """The class registered as ``name``, refused in one line unless it derives from ``base``."""
        found = self.get(kind, name)
        if isinstance(found, type) and issubclass(found, base):
            return found
        word = _KIND_WORDS.get(kind, kind)
        other = (
            "; it is one-shot: nasforge.kernel.one_shot.one_shot_strategy(registry, name)"
            if kind == "strategy" and base.__name__ == "Strategy"
            else ""
        )
        raise NasforgeError(
            f"{word} '{name}' of plugin '{self.origin(kind, name)}' is not a {base.__module__}."
            f"{base.__qualname__}{other}"
        )


_KIND_WORDS = {"space": "search space"}


class UnavailableError(UnknownNameError):
    """A component name no loaded plugin provides because a plugin failed to load: the
    message names the plugin and its error (one line)."""

    def __init__(self, kind: str, name: str, known: Iterable[str], message: str) -> None:
        super().__init__(kind, name, known)
        self.args = (message,)


#: The kinds whose components a run builds (checked when a plugin loads).
BUILT_KINDS = frozenset({"space", "strategy", "evaluator", "metric", "executor"})


def component_mistake(kind: str, name: str, component: Any) -> str | None:
    """A registered component's mistake that would only show in a search, in one line
    naming it, or None: one a run cannot build through its hook
    (:func:`~nasforge.kernel.run_context.construction_mistake`), or a metric whose ``name``
    differs from its ``info.name`` (its scores would be filed under the one and asked for
    under the other)."""
    if kind not in BUILT_KINDS:
        return None
    if kind == "metric":
        info_name = getattr(getattr(component, "info", None), "name", None)
        if isinstance(info_name, str) and info_name != name:
            return f"metric '{name}': its name '{name}' differs from its info.name '{info_name}'"
    return construction_mistake(kind, name, component)


def failure_text(exc: BaseException) -> str:
    """A plugin's failure in one line: the error and the file and line that raised it (the
    innermost frame in a real file, so importlib's own frames never stand for the plugin)."""
    where = _raised_at(exc)
    return f"{type(exc).__name__}: {first_line(exc)}" + (f" ({where})" if where else "")


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip()


def _raised_at(exc: BaseException) -> str | None:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    real = [f for f in frames if f.filename and not f.filename.startswith("<")]
    if not real:
        return None
    last = real[-1]
    return f"{last.filename}:{last.lineno}"


def _component_name(component: Any) -> str:
    name = getattr(component, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{component!r} has no 'name' string attribute")
    return name


def _settle(info: PluginInfo, errors: dict[str, list[str]], provides: dict[str, list[str]]) -> PluginInfo:
    """The plugin's record once its hooks have run: failed if any of them raised or any of
    its components has a mistake (:func:`component_mistake`)."""
    found = errors.get(info.name)
    if not info.ok:
        return info
    return attrs.evolve(
        info,
        ok=not found,
        error="; ".join(found) if found else None,
        provides=tuple(provides.get(info.name, ())),
    )


def _distribution_of(ep: importlib.metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else None


def _entry_point_order(ep: importlib.metadata.EntryPoint) -> tuple[int, str, str]:
    distribution = _distribution_of(ep) or ""
    return (0 if distribution == FIRST_PARTY_DISTRIBUTION else 1, ep.name, distribution)


def create_plugin_manager(
    *, entry_points: bool = True, extra_plugins: Iterable[Any] = (), disabled: Iterable[str] = ()
) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """A plugin manager with the core's built-ins, the entry points and any extras.

    Entry points named in ``disabled`` are not loaded at all, as if uninstalled. Loading
    only imports and registers; what each plugin provides (and whether its hooks work)
    is settled when a :class:`Registry` is built from the result.
    """
    builtin_plugin = importlib.import_module(BUILTIN_MODULE)
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(builtin_plugin, name=BUILTIN_PLUGIN)
    for name in disabled:
        pm.set_blocked(name)
    infos: list[PluginInfo] = [
        PluginInfo(BUILTIN_PLUGIN, builtin_plugin.__name__, FIRST_PARTY_DISTRIBUTION, True)
    ]
    if entry_points:
        found = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=_entry_point_order)
        for ep in found:
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            try:
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
            except Exception as exc:  # a broken plugin must not break the others
                infos.append(
                    PluginInfo(
                        ep.name, ep.value, _distribution_of(ep), False, failure_text(exc), trace=_trace(exc)
                    )
                )
                continue
            infos.append(PluginInfo(ep.name, ep.value, _distribution_of(ep), True))
        infos += _register_named_modules(pm, _named(os.environ.get(PLUGINS_ENV, "")))
    for plugin in extra_plugins:
        name = _object_name(pm, plugin)
        try:
            pm.register(plugin, name=name)
        except Exception as exc:  # e.g. a hook with a misspelt name or signature
            infos.append(PluginInfo(name, repr(plugin), None, False, failure_text(exc)))
            continue
        infos.append(PluginInfo(name, repr(plugin), None, True))
    return pm, infos


def _object_name(pm: pluggy.PluginManager, plugin: Any) -> str:
    """A plugin object's name, as messages about it say: its module's name, its class's (of
    an instance, the class's), numbered when two share it."""
    base = getattr(plugin, "__name__", None)
    if not isinstance(base, str):
        base = type(plugin).__qualname__
    name, number = base, 1
    while pm.has_plugin(name) or pm.is_blocked(name):
        number += 1
        name = f"{base}#{number}"
    return name


def _named(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _register_named_modules(pm: pluggy.PluginManager, modules: list[str]) -> list[PluginInfo]:
    """Each module of ``NASFORGE_PLUGINS`` imported and registered under its own name; one
    that fails is reported like a broken entry point, never breaking the others."""
    infos = []
    for module in modules:
        if pm.get_plugin(module) is not None or pm.is_blocked(module):
            continue
        try:
            pm.register(importlib.import_module(module), name=module)
        except Exception as exc:  # a broken plugin must not break the others
            infos.append(PluginInfo(module, module, None, False, failure_text(exc), trace=_trace(exc)))
            continue
        infos.append(PluginInfo(module, module, None, True))
    return infos


def load_registry(
    *, entry_points: bool = True, extra_plugins: Iterable[Any] = (), disabled: Iterable[str] | None = None
) -> Registry:
    """A fresh registry: the installed plugins (if ``entry_points``) plus ``extra_plugins``.

    ``disabled`` entry points are skipped; by default those named (comma-separated) in the
    ``NASFORGE_DISABLE_PLUGINS`` environment variable, so a pipeline can switch a broken or
    unwanted plugin off without uninstalling it. With ``entry_points``, the plugin modules
    named in ``NASFORGE_PLUGINS`` are loaded too.
    """
    if disabled is None:
        disabled = _named(os.environ.get(DISABLE_ENV, ""))
    pm, infos = create_plugin_manager(
        entry_points=entry_points, extra_plugins=extra_plugins, disabled=disabled
    )
    return Registry(pm, infos)


_default: Registry | None = None
_lock = threading.Lock()


def get_registry(*, refresh: bool = False) -> Registry:
    """The process-wide registry built from installed entry points (cached)."""
    global _default
    with _lock:
        if _default is None or refresh:
            _default = load_registry()
        return _default


_builtin: Registry | None = None


def builtin_registry() -> Registry:
    """A registry of the core's built-in components alone (no installed plugin), cached:
    what a caller that passes no registry to a loader of built-ins gets."""
    global _builtin
    with _lock:
        if _builtin is None:
            _builtin = load_registry(entry_points=False, disabled=())
        return _builtin
