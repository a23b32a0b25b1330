"""The registry a caller passes is the one the first-party plugins use (issue 9).

The core hands its registry down (tests/core/test_registry_flow.py); these tests follow it
into the plugins that used to fetch the process-wide one themselves: HNAS (strategy, pool
), the DARTS plugin's ``darts-compare``, the zerocost validation
module and its rank ensemble. Each runs with a registry holding test-only components
under names the process-wide registry does not know, so a lookup that fell back to
``get_registry()`` on the way down fails with an unknown name.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
import torch
import typer
from typer.testing import CliRunner

from nasforge import Budget, UnknownNameError, get_registry, hookimpl
from nasforge.kernel.datasets import DatasetSource, TensorData
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.metric import MetricInfo
from nasforge.kernel.registry import Registry, load_registry
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import SearchSpace
from nasforge.run.builtin_datasets import load_digits
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import aggregate_ranks, sample_genotypes, score_genotypes
from nasforge_darts.compare_cmd import darts_compare
from nasforge_hnas import Hnas, PoolScorer, PoolSettings
from nasforge_zerocost import validation
from nasforge_zerocost.ensemble import RankEnsemble
from tests.core.flow_plugin import CLASSES, DATASET, EVALUATOR, FEATURES, METRIC, SPACE, FlowPlugin, FlowSpace

#: Names of this file's own test-only components (none installed plugin uses them).
IMAGES, TABLE, ENSEMBLE = "flow-digits", "flow-table", "flow-ensemble"
#: The members of the flow ensemble: one only the flow plugin has, one of zerocost's.
MEMBERS = (METRIC, "params")


def load_flow_digits(*, seed: int = 0) -> TensorData:
    """sklearn's digits under a name of its own: image-shaped data for a supernet."""
    digits = load_digits(seed=seed)
    return TensorData(IMAGES, digits.x, digits.y, digits.num_classes)


def table_value(text: str, dataset: str) -> float:
    """The flow table's test accuracy of a cell: a fixed function of its text and the dataset."""
    return float(sum(map(ord, text)) % 50 + 25 + len(dataset))


class FlowTable(Evaluator):
    """A "tabular benchmark" over any space whose numbers only this file can predict."""

    name: ClassVar[str] = TABLE
    simulated: ClassVar[bool] = True

    @property
    def objective(self) -> Objective:
        return Objective("valid_accuracy", higher_is_better=True)

    def evaluate(self, g: Genotype) -> Result:
        value = table_value(self.space.format(g), self.dataset or "")
        return Result(objectives={"valid_accuracy": value, "test_accuracy": value}, cost=1.0)


class FlowEnsemble(RankEnsemble):
    """zerocost's rank ensemble over a member only the flow plugin provides."""

    info: ClassVar[MetricInfo] = MetricInfo(name=ENSEMBLE, population=True, description="test", version="1")

    def __init__(self, *, registry: Registry | None = None) -> None:
        super().__init__(MEMBERS, registry=registry)


class PluginsFlowPlugin:
    @hookimpl
    def nasforge_register_datasets(self) -> list:
        return [DatasetSource(IMAGES, "digits under another name (tests)", load_flow_digits)]

    @hookimpl
    def nasforge_register_evaluators(self) -> list:
        return [FlowTable]

    @hookimpl
    def nasforge_register_metrics(self) -> list:
        return [FlowEnsemble]


@pytest.fixture(scope="module")
def registry() -> Registry:
    """The installed plugins (HNAS, DARTS, zerocost, NB201) plus the test-only ones."""
    return load_registry(extra_plugins=[FlowPlugin(), PluginsFlowPlugin()])


def test_the_process_wide_registry_does_not_know_the_test_components() -> None:
    default = get_registry()
    for kind, name in [("dataset", IMAGES), ("evaluator", TABLE), ("metric", ENSEMBLE), ("metric", METRIC)]:
        assert not default.has(kind, name)


# --- HNAS ---------------------------------------------------------------------------------
POOL_OPTIONS: dict[str, Any] = {
    "steps": 3,
    "pool_size": 6,
    "batch_size": 8,
    "input_shape": [FEATURES],
    "num_classes": CLASSES,
    "gp_restarts": 1,
    "metric": METRIC,
    "data": DATASET,
}


@pytest.mark.slow
def test_hnas_scores_its_pool_with_the_runs_registry(registry: Registry) -> None:
    spec = ExperimentSpec(
        space=SPACE,
        strategy="hnas",
        evaluator=EVALUATOR,
        budget=Budget(trials=3),
        strategy_options=POOL_OPTIONS,
    )
    experiment = Experiment.from_spec(spec, registry=registry, progress=False)
    experiment.run()
    strategy = experiment.strategy
    assert isinstance(strategy, Hnas) and strategy.registry is registry
    assert strategy.scorer.registry is registry
    # M is the flow plugin's metric: the parameters of the last layer, Linear(16, 3)
    assert len(strategy.pool) == 6 and strategy.pool.metric.tolist() == [16.0 * CLASSES + CLASSES] * 6
    # the batch is the flow dataset's, drawn with the pool's init seed
    x, y = strategy.scorer.batch()
    expected = registry.get("dataset", DATASET).load(seed=0).batch(8, seed=0)
    assert torch.equal(x, expected[0]) and torch.equal(y, expected[1])


def test_hnas_without_a_registry_cannot_see_the_callers_components() -> None:
    space = FlowSpace()
    strategy = Hnas(space, objective=Objective("score"), **POOL_OPTIONS)
    with pytest.raises(UnknownNameError, match=METRIC):
        strategy.scorer  # noqa: B018 (the metric is resolved when the scorer is made)


@pytest.mark.slow
def test_a_pool_scored_through_a_registry_scores_as_before(registry: Registry) -> None:
    """Same numbers whichever registry resolves the same components: no result changed."""
    space = FlowSpace()
    settings = PoolSettings(
        metric="synflow", data="digits", batch_size=8, build={"in_features": 64, "num_classes": 10}
    )
    genotypes = sample_genotypes(space, 3, seed=2)
    through, default = PoolScorer(space, settings, registry=registry), PoolScorer(space, settings)
    assert through.key == default.key
    assert [through.score(g).metric for g in genotypes] == [default.score(g).metric for g in genotypes]


# --- DARTS: darts-compare -------------------------------------------------------------------
@pytest.mark.slow
def test_darts_compare_runs_with_the_invocations_registry(registry: Registry) -> None:
    app = typer.Typer()
    app.command("darts-compare")(darts_compare)
    app.command("unused")(lambda: None)
    args = ["darts-compare", "--seeds", "0", "--epochs", "1", "--C", "2", "--evaluator", TABLE]
    args += ["--table-dataset", "cifar10", "--dataset", IMAGES, "-o", "max_batches=1", "--json"]
    result = CliRunner().invoke(app, args, obj=registry)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["strategy"] for r in rows] == ["darts", "prdarts[official-code]"]
    for r in rows:  # searched on the flow data, rated by the flow table
        assert r["accuracy"] == {"cifar10": table_value(r["genotype"], "cifar10")}
    without = CliRunner().invoke(app, args)
    assert isinstance(without.exception, UnknownNameError)


# --- zerocost: validation and the rank ensemble ---------------------------------------------
@pytest.mark.slow
def test_the_validation_entry_point_passes_its_registry_down(
    registry: Registry, monkeypatch, tmp_path
) -> None:
    """``main`` chooses the registry (here the test's) and ``run`` resolves every name in it."""
    monkeypatch.setattr(validation, "get_registry", lambda: registry)
    argv = ["--metrics", METRIC, "--sample", "4", "--batch-size", "4", "--cache", str(tmp_path / "cache")]
    argv += ["--json", str(tmp_path / "result.json")]
    assert validation.main(argv) == 0
    written = json.loads((tmp_path / "result.json").read_text())
    assert written["sample"] == 4 and [m["metric"] for m in written["metrics"]] == [METRIC]
    assert written["metrics"][0]["n"] == 4
    with pytest.raises(UnknownNameError, match=METRIC):
        validation.run((METRIC,), sample=4, batch_size=4, cache=None, verbose=False)


def test_the_rank_ensemble_resolves_its_members_in_the_registry_given(registry: Registry) -> None:
    ensemble = RankEnsemble(MEMBERS, registry=registry)
    assert [m.info.name for m in ensemble.members] == list(MEMBERS)
    with pytest.raises(UnknownNameError, match=METRIC):
        RankEnsemble(MEMBERS)  # the process-wide registry has no such member


def test_scoring_hands_its_registry_to_the_ensemble(registry: Registry) -> None:
    space: SearchSpace = FlowSpace()
    genotypes = sample_genotypes(space, 5, seed=0)
    build = {"in_features": FEATURES, "num_classes": CLASSES}
    table = score_genotypes(
        space, genotypes, [ENSEMBLE], data=DATASET, batch_size=8, build=build, registry=registry
    )
    assert set(MEMBERS) <= set(table.metrics) and ENSEMBLE in table.metrics
    infos = {m: registry.get("metric", m).info for m in MEMBERS}
    expected = aggregate_ranks(
        [table.values(m) for m in MEMBERS], [infos[m].higher_is_better for m in MEMBERS]
    )
    assert table.values(ENSEMBLE).tolist() == pytest.approx(expected.tolist())
