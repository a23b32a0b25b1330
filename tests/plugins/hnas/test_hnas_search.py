"""HNAS as a plain ``nasforge search --strategy hnas``: the run's network options reach the
pool's scoring, the evaluator and the export."""

from __future__ import annotations

import attrs
import pytest

from nasforge.kernel.errors import OptionError
from nasforge.kernel.registry import get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.run.budget import Budget
from nasforge.run.construction import build_component
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec


def _built(spec: ExperimentSpec) -> tuple:
    registry = get_registry()
    experiment = Experiment.from_spec(spec, run_dir=None, registry=registry)
    return experiment.strategy, experiment.evaluator


def test_build_options_reach_the_pool_and_the_evaluator() -> None:
    spec = ExperimentSpec(
        space="nb201",
        strategy="hnas",
        evaluator="short-train",
        budget=Budget(trials=2),
        train_data="digits",
        strategy_options={"pool_size": 4, "data": "digits", "build": {"N": 2}},
        evaluator_options={"epochs": 1},
        build_options={"C": 4, "N": 1},
    )
    strategy, evaluator = _built(spec)
    assert strategy.settings.pool.build == {"C": 4, "N": 2}  # the strategy's own option wins
    assert evaluator.build_options == {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}
    job = strategy.scorer.job()  # networks for the data they are scored on: digits' 1x8x8
    assert job.build == {"C": 4, "N": 2, "num_classes": 10, "in_channels": 1}
    assert tuple(job.x.shape[1:]) == (1, 8, 8)


def test_build_options_are_journaled_only_when_given() -> None:
    plain = ExperimentSpec(space="nb201", strategy="rea", evaluator="nb201-table", budget=None)
    assert "build_options" not in plain.to_json()  # as every spec before them was written
    given = attrs.evolve(plain, build_options={"C": 8})
    assert given.to_json()["build_options"] == {"C": 8}
    assert ExperimentSpec.from_json(given.to_json()) == given
    assert ExperimentSpec.from_json(plain.to_json()).build_options == {}


def test_build_options_are_not_a_user_option() -> None:
    class Takes:
        context_fields = frozenset({"build_options"})

        def __init__(self, *, build_options: dict | None = None) -> None:
            self.build_options = build_options

    context = RunContext(build_options={"C": 2})
    assert build_component("component", Takes, context, {}).build_options == {"C": 2}
    with pytest.raises(OptionError, match="supplied by the run"):
        build_component("component", Takes, RunContext(), {"build_options": {"C": 2}})
