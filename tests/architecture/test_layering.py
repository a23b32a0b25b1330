"""The seams hold in spirit, not only in letter, and the rules that say so can fail.

- the core is three layers, each importing only the ones below it (kernel < run < tools),
  with no import cycle anywhere in it, deferred imports and imports by a module's name
  (``importlib.import_module("...")``) counted;
- the core imports no plugin and names first-party plugin components only in
  ``nasforge/run/defaults.py``;
- no module of a layer finds a name that moved (an old-path shim) in a layer above it;
- no plugin imports or names another plugin's components, or branches on a space's name;
- plugins import only the public API (:data:`nasforge.PUBLIC_MODULES`: the kernel and a few
  named entry points of the layers above it);
- first-party code imports no module path that moved;
- every first-party plugin loads.

Each rule is run on the real tree, and on a throw-away tree with one violation planted,
which it must report: a rule that cannot fail proves nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import nasforge
from nasforge.kernel.registry import BUILTIN_PLUGIN, KINDS, get_registry
from tests.architecture import rules

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "sdk" / "nasforge"
PLUGINS = ROOT / "plugins"
DEFAULTS = CORE / "run" / "defaults.py"


def _plugin_sources(root: Path) -> list[rules.Source]:
    return [s for top in sorted(root.glob("nasforge_*")) if top.is_dir() for s in rules.sources(root, top)]


CORE_FILES = rules.sources(ROOT, CORE)
PLUGIN_FILES = _plugin_sources(PLUGINS)
KNOWN = rules.bindings(CORE_FILES + PLUGIN_FILES)


def _components_by_plugin() -> dict[str, set[str]]:
    """Plugin package (e.g. ``nasforge_nb201``) -> names of the components it registers."""
    registry = get_registry()
    out: dict[str, set[str]] = {}
    for kind in KINDS:
        for name, component in registry.items(kind):
            if registry.origin(kind, name) == BUILTIN_PLUGIN:
                continue
            module = getattr(component, "__module__", None) or type(component).__module__
            out.setdefault(module.split(".")[0], set()).add(name)
    return {package: names for package, names in out.items() if package.startswith("nasforge_")}


COMPONENTS = _components_by_plugin()
#: Ordinary words that happen to name a component, so code uses them as plain values too:
#: "random" is the random-search strategy and also a mode value (NASI's and the scorers'
#: labels "true" | "random"); "ensemble" is the zero-cost plugin's rank-ensemble metric and
#: also the core's own result (``SearchOutcome.ensemble`` and the journal's key). Keep this
#: set to such words only.
ORDINARY_WORDS = frozenset({"random", "ensemble"})
FIRST_PARTY_NAMES = {name for names in COMPONENTS.values() for name in names} - ORDINARY_WORDS

#: Plugin modules the core loads by name, as it loads an entry point: the registry (kernel)
#: loads the core's own components (datasets, executors, short-train: the tools layer's
#: built-in plugin) exactly as it loads any installed plugin, which is plugin loading, not
#: a dependency of the kernel. Keep this set to such plugin modules.
PLUGIN_LOADING = frozenset({("nasforge.kernel.registry", "nasforge.tools.builtin_plugin")})

CHECKS = {
    "core_imports_of_plugins": lambda: rules.core_imports_of_plugins(CORE_FILES),
    "upward_imports": lambda: rules.upward_imports(CORE_FILES, PLUGIN_LOADING),
    "import_cycles": lambda: rules.import_cycles(CORE_FILES, PLUGIN_LOADING),
    "core_names_of_plugin_components": lambda: rules.core_names_of_plugin_components(
        CORE_FILES, FIRST_PARTY_NAMES, DEFAULTS
    ),
    "plugin_names_of_other_plugins": lambda: rules.plugin_names_of_other_plugins(
        PLUGIN_FILES, COMPONENTS, FIRST_PARTY_NAMES
    ),
    "plugin_imports_of_other_plugins": lambda: rules.plugin_imports_of_other_plugins(PLUGIN_FILES),
    "plugin_branches_on_space_names": lambda: rules.plugin_branches_on_space_names(PLUGIN_FILES),
    "plugin_imports_of_private_core": lambda: rules.plugin_imports_of_private_core(
        PLUGIN_FILES, nasforge.PUBLIC_MODULES, KNOWN
    ),
}


def test_the_registry_knows_the_first_party_plugins() -> None:
    assert {"nasforge_nb201", "nasforge_search", "nasforge_darts", "nasforge_zerocost"} <= set(COMPONENTS)
    assert {"nb201", "rea", "nb201-table", "darts", "synflow"} <= FIRST_PARTY_NAMES


def test_every_first_party_plugin_loads() -> None:
    """Every entry point nasforge's own pyproject declares is loaded, and loaded cleanly:
    a plugin that failed would take its rules' subjects out of every check above."""
    declared = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nasforge"]
    )
    plugins = {p.name: p for p in get_registry().plugins}
    assert declared <= set(plugins), f"not loaded: {sorted(declared - set(plugins))}"
    failed = {name: plugins[name].error for name in declared if not plugins[name].ok}
    assert not failed, failed
    assert plugins[BUILTIN_PLUGIN].ok
    assert {s.module.split(".")[0] for s in PLUGIN_FILES} <= {
        p.module.split(".")[0] for p in plugins.values()
    }


@pytest.mark.slow
@pytest.mark.parametrize("check", sorted(CHECKS))
def test_layering(check: str) -> None:
    violations = CHECKS[check]()
    assert violations == [], "\n".join(violations)


def test_public_modules_exist() -> None:
    import importlib

    for module in nasforge.PUBLIC_MODULES:
        importlib.import_module(module)


# --- the rules can fail ------------------------------------------------------------------
PLANTED = {
    "sdk/nasforge/__init__.py": "",
    "sdk/nasforge/kernel/__init__.py": "",
    "sdk/nasforge/kernel/deferred_up.py": "def f():\n    from nasforge.run import loop_part\n",
    "sdk/nasforge/kernel/typed_up.py": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import nasforge.tools.tool\n"
    ),
    "sdk/nasforge/kernel/cycle_a.py": "from nasforge.kernel import cycle_b\n",
    "sdk/nasforge/kernel/cycle_b.py": "def f():\n    from nasforge.kernel.cycle_a import x\n",
    "sdk/nasforge/kernel/uses_plugin.py": "import nasforge_alpha.thing\n",
    "sdk/nasforge/kernel/by_name.py": (
        "import importlib\ndef f():\n    return importlib.import_module('nasforge.run.loop_part')\n"
    ),
    "sdk/nasforge/kernel/by_constant.py": (
        "from importlib import import_module\nTOOL = 'nasforge.tools.tool'\n"
        "def f():\n    return import_module(TOOL)\n"
    ),
    "sdk/nasforge/kernel/loader.py": (
        "import importlib\nPLUGIN = 'nasforge.tools.tool'\n"
        "def load():\n    return importlib.import_module(PLUGIN)\n"
    ),
    "sdk/nasforge/run/__init__.py": "",
    "sdk/nasforge/run/loop_part.py": "from nasforge.tools.tool import y\nNAME = 'alpha-strategy'\n",
    "sdk/nasforge/run/defaults.py": "ALLOWED = 'alpha-strategy'\n",
    "sdk/nasforge/tools/__init__.py": "",
    "sdk/nasforge/tools/tool.py": "import nasforge.kernel.cycle_a\n",
    "plugins/nasforge_alpha/__init__.py": "",
    "plugins/nasforge_alpha/thing.py": (
        "import nasforge_beta.other\n"
        "from nasforge.run import loop_part\n"
        "from nasforge.strategy import Strategy\n"
        "CHOICE = 'beta-space'\n"
        "def f(space):\n    return space.name == 'beta-space'\n"
        "import importlib\nSCORING = importlib.import_module('nasforge.scoring')\n"
    ),
    "plugins/nasforge_beta/__init__.py": "",
    "plugins/nasforge_beta/other.py": "NAME = 'beta-space'\n",
}
#: What each rule must report on the planted tree.
EXPECTED = {
    "core_imports_of_plugins": ["uses_plugin.py:1: imports nasforge_alpha.thing"],
    "upward_imports": [
        "deferred_up.py:2: nasforge.kernel.deferred_up (layer 0) imports nasforge.run.loop_part (layer 1)",
        "typed_up.py:3: nasforge.kernel.typed_up (layer 0) imports nasforge.tools.tool (layer 2)",
        "loop_part.py:1: nasforge.run.loop_part (layer 1) imports nasforge.tools.tool (layer 2)",
        "by_name.py:3: nasforge.kernel.by_name (layer 0) imports nasforge.run.loop_part (layer 1)",
        "by_constant.py:4: nasforge.kernel.by_constant (layer 0) imports nasforge.tools.tool (layer 2)",
    ],
    "import_cycles": ["nasforge.kernel.cycle_a -> nasforge.kernel.cycle_b -> nasforge.kernel.cycle_a"],
    "core_names_of_plugin_components": ["loop_part.py:2: names 'alpha-strategy'"],
    "plugin_names_of_other_plugins": ["thing.py:4: names 'beta-space' of another plugin"],
    "plugin_imports_of_other_plugins": ["thing.py:1: imports nasforge_beta.other"],
    "plugin_branches_on_space_names": ["thing.py:6: space.name == 'beta-space'"],
    "plugin_imports_of_private_core": ["thing.py:2: imports nasforge.run.loop_part, not public API"],
}
#: A plugin loaded by name (the planted loader's edge) is allowed where it is declared so.
PLANTED_PLUGIN_LOADING = frozenset({("nasforge.kernel.loader", "nasforge.tools.tool")})


def _planted_checks(root: Path) -> dict[str, list[str]]:
    core = rules.sources(root, root / "sdk" / "nasforge")
    plugins = _plugin_sources(root / "plugins")
    known = rules.bindings(core + plugins)
    components = {"nasforge_alpha": {"alpha-strategy"}, "nasforge_beta": {"beta-space"}}
    names = {"alpha-strategy", "beta-space"}
    return {
        "core_imports_of_plugins": rules.core_imports_of_plugins(core),
        "upward_imports": rules.upward_imports(core, PLANTED_PLUGIN_LOADING),
        "import_cycles": rules.import_cycles(core, PLANTED_PLUGIN_LOADING),
        "core_names_of_plugin_components": rules.core_names_of_plugin_components(
            core, names, root / "sdk" / "nasforge" / "run" / "defaults.py"
        ),
        "plugin_names_of_other_plugins": rules.plugin_names_of_other_plugins(plugins, components, names),
        "plugin_imports_of_other_plugins": rules.plugin_imports_of_other_plugins(plugins),
        "plugin_branches_on_space_names": rules.plugin_branches_on_space_names(plugins),
        "plugin_imports_of_private_core": rules.plugin_imports_of_private_core(
            plugins, {"nasforge.kernel.cycle_a"}, known
        ),
    }


def test_every_rule_catches_its_planted_violation(tmp_path: Path) -> None:
    for name, text in PLANTED.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    found = _planted_checks(tmp_path)
    assert set(found) == set(CHECKS) == set(EXPECTED), "every rule has a planted violation"
    for rule, expected in EXPECTED.items():
        for needle in expected:
            assert any(needle in line for line in found[rule]), f"{rule} missed {needle!r}: {found[rule]}"
    assert (
        rules.upward_imports(
            [s for s in rules.sources(tmp_path, tmp_path / "sdk" / "nasforge") if "tools" in s.module]
        )
        == []
    ), "a layer may import those below it"
    assert not any("loader.py" in line for line in found["upward_imports"]), "declared plugin loading"
    undeclared = rules.upward_imports(rules.sources(tmp_path, tmp_path / "sdk" / "nasforge"))
    assert any("loader.py:4: nasforge.kernel.loader (layer 0)" in line for line in undeclared)
