"""A plugin author's mistakes are caught early, in one line, with the plugin named.

Each mistake is seen where it would first bite: ``nasforge plugins`` (exit status 1, the
plugin and its error on stderr), the start of a command that would use the component
("strategy 'x' is unavailable: plugin 'p' failed to load: ..."), and the conformance kits
(one line with the values that differ).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from torch import nn

from nasforge import hookimpl
from nasforge.kernel.errors import UnknownNameError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import Batch, Metric, MetricContext, MetricInfo
from nasforge.kernel.registry import UnavailableError, load_registry
from nasforge.kernel.result import Result
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.context_checks import require_buildable
from nasforge.kernel.testing.metric_kit import MetricConformance
from nasforge.kernel.testing.toy import ToySpace


class Steepest(Strategy):
    """A strategy whose constructor says ``sead`` where the run passes ``seed``."""

    name: ClassVar[str] = "my-steepest"

    def __init__(self, space: SearchSpace, *, objective: Any, sead: int = 0) -> None:
        super().__init__(space, objective=objective, seed=sead)

    def ask(self) -> Genotype:
        return self.space.sample(self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        pass


class Width(Metric):
    info: ClassVar[MetricInfo] = MetricInfo(name="my-width", needs_data=False, needs_labels=False)

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        return 1.0


class Misnamed(Width):
    """Its name is set, its info inherited: scores filed under one name, asked under another."""

    name: ClassVar[str] = "my-other-width"


class SeadPlugin:
    @hookimpl
    def nasforge_register_strategies(self) -> list:
        return [Steepest]

    @hookimpl
    def nasforge_register_metrics(self) -> list:
        return [Width]


class HalfBroken:
    @hookimpl
    def nasforge_register_metrics(self) -> list:
        return [Width]

    @hookimpl
    def nasforge_register_search_spaces(self) -> list:
        raise RuntimeError("the space's data file is missing")


class MisnamedPlugin:
    @hookimpl
    def nasforge_register_metrics(self) -> list:
        return [Misnamed]


def _failed(registry: Any) -> Any:
    (plugin,) = [p for p in registry.plugins if not p.ok]
    return plugin


@pytest.fixture
def cli_with(monkeypatch: pytest.MonkeyPatch, cli: Any) -> Any:
    """``cli`` run against a registry holding the given plugin objects (as if installed)."""

    def run(plugins: list[Any], *argv: Any) -> Any:
        registry = load_registry(extra_plugins=plugins)
        monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
        return cli(*argv)

    return run


# --- a constructor the run cannot call -----------------------------------------------------
def test_a_misspelt_seed_fails_the_plugin_and_registers_nothing() -> None:
    registry = load_registry(entry_points=False, extra_plugins=[SeadPlugin()])
    plugin = _failed(registry)
    assert "strategy 'my-steepest': its constructor takes no 'seed'" in plugin.error
    assert "did you mean 'sead'" in plugin.error and "\n" not in plugin.error
    assert not registry.has("strategy", "my-steepest") and not registry.has("metric", "my-width")
    with pytest.raises(UnavailableError) as caught:
        registry.get("metric", "my-width")  # its fine component went with it
    assert str(caught.value).startswith(
        f"metric 'my-width' is unavailable: plugin '{plugin.name}' failed to load: "
    )


@pytest.mark.slow
def test_a_misspelt_seed_at_nasforge_plugins_and_at_search(cli_with: Any, tmp_path: Any) -> None:
    listed = cli_with([SeadPlugin()], "plugins")
    assert listed.code == 1
    line = next(ln for ln in listed.err.splitlines() if "failed to load" in ln)
    assert "takes no 'seed'" in line and "did you mean 'sead'" in line
    search = cli_with([SeadPlugin()], "search", "--strategy", "my-steepest", "--run-dir", tmp_path / "r")
    search.assert_one_line_error("strategy 'my-steepest' is unavailable: plugin", "takes no 'seed'")
    assert not (tmp_path / "r").exists()


def test_a_misspelt_seed_fails_the_kit_in_one_line() -> None:
    with pytest.raises(pytest.fail.Exception) as caught:
        require_buildable("strategy", Steepest)
    message = str(caught.value)
    assert "\n" not in message and "takes no 'seed'" in message and "'sead'" in message


def test_a_declared_field_the_context_does_not_hold_is_named() -> None:
    class Sead(Strategy):
        name: ClassVar[str] = "sead-field"
        context_fields = Strategy.context_fields | {"registy"}

    with pytest.raises(
        pytest.fail.Exception, match="declares context field 'registy'.*did you mean 'registry'"
    ):
        require_buildable("strategy", Sead)


# --- a module that does not import, a hook that raises ---------------------------------------
def test_a_plugin_that_fails_to_import_is_named_where_its_component_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, cli: Any, tmp_path: Any
) -> None:
    monkeypatch.setenv("NASFORGE_PLUGINS", "nasforge_no_such_plugin_module")
    registry = load_registry()
    plugin = _failed(registry)
    assert plugin.name == "nasforge_no_such_plugin_module" and "ModuleNotFoundError" in plugin.error
    with pytest.raises(UnknownNameError, match=r"unknown strategy 'my-steepest'.*plugin 'nasforge_no_such"):
        registry.get("strategy", "my-steepest")
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    assert cli("plugins").code == 1
    cli("search", "--strategy", "my-steepest", "--run-dir", tmp_path).assert_one_line_error(
        "unknown strategy 'my-steepest'", "plugin 'nasforge_no_such_plugin_module' failed to load"
    )


@pytest.mark.slow
def test_a_registration_hook_that_raises_registers_none_of_the_plugin(cli_with: Any, tmp_path: Any) -> None:
    registry = load_registry(entry_points=False, extra_plugins=[HalfBroken()])
    plugin = _failed(registry)
    assert "nasforge_register_search_spaces: RuntimeError: the space's data file is missing" in plugin.error
    assert not registry.has("metric", "my-width"), "its other hook's components are not registered"
    cli_with(
        [HalfBroken()], "score", "--space", "toy", "-m", "my-width", "--sample", "2"
    ).assert_one_line_error("metric 'my-width' is unavailable", "the space's data file is missing")


# --- a metric whose name is not its info.name ----------------------------------------------------
def test_a_metric_named_apart_from_its_info_fails_its_plugin() -> None:
    registry = load_registry(entry_points=False, extra_plugins=[MisnamedPlugin()])
    error = _failed(registry).error
    assert "metric 'my-other-width': its name 'my-other-width' differs from its info.name 'my-width'" in error
    assert not registry.has("metric", "my-other-width") and not registry.has("metric", "my-width")


class TestMisnamedMetricKit(MetricConformance):
    """The kit says which two names differ (run here against the mistake, expecting it)."""

    @pytest.fixture
    def metric(self) -> Metric:
        return Misnamed()

    def test_info(self, metric: Metric) -> None:
        with pytest.raises(AssertionError, match="'my-other-width' differs from info.name 'my-width'"):
            super().test_info(metric)


def test_the_toy_space_builds_from_a_context() -> None:
    require_buildable("space", ToySpace)
