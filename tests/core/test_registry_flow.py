"""The registry a caller passes is the one every part of a run uses (issue 9).

Each test runs with a registry holding a test-only plugin whose component names the
process-wide registry does not know, so a lookup that fell back to ``get_registry()``
anywhere on the way down would fail with an unknown name.
"""

from __future__ import annotations

import pytest

from nasforge import Budget, UnknownNameError, api, get_registry
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader
from nasforge.run.one_shot_run import OneShotSearch, resume_one_shot, run_one_shot
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.scoring import correlate, fixed_batch, sample_genotypes, score_genotypes
from nasforge.tools.short_train import ShortTrainEvaluator
from tests.core.flow_plugin import (
    CLASSES,
    DATASET,
    EVALUATOR,
    FEATURES,
    METRIC,
    ONE_SHOT,
    SPACE,
    STRATEGY,
    FlowEvaluator,
    FlowOneShot,
    FlowRandom,
    FlowSpace,
    Recorder,
    flow_registry,
)


def test_the_process_wide_registry_does_not_know_the_flow_plugin() -> None:
    for kind, name in [("space", SPACE), ("strategy", STRATEGY), ("dataset", DATASET), ("metric", METRIC)]:
        assert not get_registry().has(kind, name)
    with pytest.raises(UnknownNameError):
        api.search(SPACE, STRATEGY, EVALUATOR, trials=2)


def test_api_search_uses_the_given_registry_down_to_the_strategy(tmp_path) -> None:
    recorder = Recorder()
    registry = flow_registry(recorder)
    outcome = api.search(SPACE, STRATEGY, EVALUATOR, trials=4, seed=1, run_dir=tmp_path, registry=registry)
    assert len(outcome.history) == 4 and outcome.best.space == SPACE
    assert len(recorder.trials) == 4 and len(recorder.ends) == 1
    experiment = recorder.ends[0][0]
    assert isinstance(experiment.strategy, FlowRandom) and experiment.strategy.registry is registry
    again = api.resume(tmp_path, registry=registry)  # an ended run is re-read through the same registry
    assert again.best == outcome.best


def test_experiment_from_spec_hooks_fire_on_its_registry() -> None:
    recorder = Recorder()
    spec = ExperimentSpec(space=SPACE, strategy=STRATEGY, evaluator=EVALUATOR, budget=Budget(trials=3))
    experiment = Experiment.from_spec(spec, registry=flow_registry(recorder), progress=False)
    outcome = experiment.run()
    assert [t.index for _, t in recorder.trials] == [0, 1, 2]
    assert recorder.ends == [(experiment, outcome)]


def _instances(registry) -> tuple:
    space = FlowSpace()
    evaluator = FlowEvaluator(space)
    strategy = FlowRandom(space, objective=evaluator.objective, seed=0, registry=registry)
    spec = ExperimentSpec(space=SPACE, strategy=STRATEGY, evaluator=EVALUATOR, budget=Budget(trials=2))
    return space, strategy, evaluator, spec


def test_an_experiment_built_from_instances_fires_the_hooks_of_the_registry_passed() -> None:
    recorder = Recorder()
    registry = flow_registry(recorder)
    Experiment(*_instances(registry), registry=registry, progress=False).run()
    assert len(recorder.trials) == 2 and len(recorder.ends) == 1


def test_an_experiment_built_from_instances_without_a_registry_uses_the_default(monkeypatch) -> None:
    recorder = Recorder()
    default = flow_registry(recorder)
    monkeypatch.setattr("nasforge.run.experiment.get_registry", lambda: default)
    experiment = Experiment(*_instances(None), progress=False)
    experiment.run()
    assert experiment.registry is default
    assert len(recorder.trials) == 2 and len(recorder.ends) == 1


def test_a_one_shot_run_uses_the_registry_and_fires_the_hooks(tmp_path) -> None:
    recorder = Recorder()
    registry = flow_registry(recorder)
    spec = ExperimentSpec(
        space=SPACE,
        strategy=ONE_SHOT,
        evaluator=EVALUATOR,
        budget=None,
        train_data=DATASET,
        strategy_options={"steps": 3},
    )
    run = run_one_shot(spec, run_dir=tmp_path, registry=registry, progress=False)
    assert run.data.name == DATASET and run.evaluation is not None
    assert [t.index for _, t in recorder.trials] == [0, 1, 2]
    ((search, outcome),) = recorder.ends
    assert isinstance(search, OneShotSearch) and outcome == run.outcome  # a copy of it: hooks cannot edit it
    assert search.registry is registry and search.spec == spec and search.space.name == SPACE
    assert isinstance(search.strategy, FlowOneShot)
    assert search.strategy.registry is registry and search.strategy.data is run.data
    assert JournalReader.of_run(tmp_path).header["data"]["name"] == DATASET
    reread = resume_one_shot(tmp_path, registry=registry)  # ended: read, nothing runs again
    assert reread.outcome.best == run.outcome.best and len(recorder.ends) == 1


def test_scoring_and_correlation_use_the_given_registry() -> None:
    registry = flow_registry()
    space = FlowSpace()
    genotypes = sample_genotypes(space, 4, seed=0)
    build = {"in_features": FEATURES, "num_classes": CLASSES}
    table = score_genotypes(
        space, genotypes, [METRIC], data=DATASET, batch_size=8, build=build, registry=registry
    )
    assert table.metrics == (METRIC,) and table.data["source"] == DATASET
    assert all(row[METRIC].ok for row in table.rows)
    assert fixed_batch(DATASET, batch_size=5, registry=registry).x.shape == (5, FEATURES)
    result = correlate(
        space, [METRIC], EVALUATOR, genotypes=genotypes, data=DATASET, build=build, registry=registry
    )
    assert result.get(METRIC).n == 4 and result.objective == "score"
    with pytest.raises(UnknownNameError):
        score_genotypes(space, genotypes, [METRIC], data=DATASET, build=build)


def test_short_training_loads_its_data_through_the_given_registry() -> None:
    registry = flow_registry()
    ev = ShortTrainEvaluator(FlowSpace(), dataset=DATASET, epochs=1, registry=registry)
    assert ev.dataset == DATASET and len(ev.train) + len(ev.valid) == 120
    assert ev.build_options == {"num_classes": CLASSES}  # 1-D features: no in_channels
    with pytest.raises(UnknownNameError, match=DATASET):
        ShortTrainEvaluator(FlowSpace(), dataset=DATASET)  # without a registry: the core's datasets only


def test_an_ask_tell_run_hands_its_training_data_to_an_evaluator_that_trains() -> None:
    registry = flow_registry()
    spec = api.build_spec(
        SPACE,
        STRATEGY,
        "short-train",
        train_data=DATASET,
        trials=2,
        evaluator_options={"epochs": 1},
        registry=registry,
    )
    experiment = Experiment.from_spec(spec, registry=registry, progress=False)
    experiment.run()
    assert experiment.evaluator.dataset == DATASET
    assert len(experiment.evaluator.train) + len(experiment.evaluator.valid) == 120


def test_an_experiment_of_unregistered_instances_resumes_its_journal(tmp_path) -> None:
    """Its spec names components the default registry does not know: the journal's spec is
    then compared as written, and the run re-reads instead of failing on a lookup."""
    first = Experiment(*_instances(None), run_dir=tmp_path, progress=False).run()
    again = Experiment(*_instances(None), run_dir=tmp_path, progress=False).run()
    assert again.best == first.best and len(again.history) == len(first.history) == 2
