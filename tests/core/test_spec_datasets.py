"""One owner for datasets; the spec keeps training data and benchmark dataset apart, the
one ``--dataset`` placed in the field it means; the seed reaches the evaluator."""

from __future__ import annotations

import json

import pytest

from nasforge import Budget, NasforgeError, api, get_registry
from nasforge.kernel.datasets import load_dataset, network_options
from nasforge.run import defaults
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from tests.core.flow_plugin import DATASET, SPACE, STRATEGY, flow_registry

REGISTRY = get_registry()


# --- the one --dataset keeps its meaning; the explicit fields say which it is ---------------
@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("nb201", "random"), "benchmark_dataset"),  # a table's column
        (("nb201", "random", "short-train"), "train_data"),  # what short-train trains on
        (("nb201", "darts"), "train_data"),  # what a one-shot supernet trains on
    ],
)
def test_dataset_means_what_it_meant(args: tuple, field: str) -> None:
    spec = api.build_spec(*args, dataset="gaussian")
    assert getattr(spec, field) == "gaussian"
    explicit = api.build_spec(*args, **{field: "gaussian"})
    assert explicit == spec


def test_the_two_datasets_of_one_run_are_recorded_apart(tmp_path) -> None:
    spec = api.build_spec("nb201", "darts", "nb201-table", train_data="digits", benchmark_dataset="cifar100")
    assert (spec.train_data, spec.benchmark_dataset) == ("digits", "cifar100")
    assert spec.evaluator_dataset(REGISTRY) == "cifar100"
    assert ExperimentSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_one_name_given_twice_differently_is_refused() -> None:
    with pytest.raises(NasforgeError, match="disagree"):
        api.build_spec(dataset="cifar10", benchmark_dataset="cifar100")
    with pytest.raises(NasforgeError, match="disagree"):
        api.build_spec(benchmark_dataset="cifar10", evaluator_options={"dataset": "cifar100"})


def test_an_evaluator_option_dataset_still_names_a_one_shot_runs_evaluator_dataset() -> None:
    spec = api.build_spec("nb201", "darts", "nb201-table", evaluator_options={"dataset": "cifar100"})
    assert spec.evaluator_dataset(REGISTRY) == "cifar100" and spec.train_data == defaults.TRAINING_DATASET


# --- the seed reaches the evaluator ----------------------------------------------------------
def _short_train(run_seed: int, registry, **evaluator_options) -> Experiment:
    spec = api.build_spec(
        SPACE,
        STRATEGY,
        "short-train",
        train_data=DATASET,
        trials=3,
        seed=run_seed,
        evaluator_options={"epochs": 2, **evaluator_options},
        registry=registry,
    )
    experiment = Experiment.from_spec(spec, registry=registry, progress=False)
    experiment.run()
    return experiment


def _losses(experiment: Experiment) -> list[float]:
    return [t.result.metadata["train_loss"] for t in experiment.trials]


@pytest.mark.slow
def test_the_seed_reaches_an_ask_tell_evaluator() -> None:
    registry = flow_registry()
    one, again, two = _short_train(1, registry), _short_train(1, registry), _short_train(2, registry)
    assert one.evaluator.seed == 1 and two.evaluator.seed == 2
    assert one.evaluator.describe()["seed"] == 1
    assert _losses(one) == _losses(again)
    # the same architectures trained from another seed (other init, split and batches)
    same = [t.genotype for t in one.trials]
    fresh = [two.evaluator.evaluate(g).metadata["train_loss"] for g in same]
    assert fresh != _losses(one)


def test_an_evaluator_option_seed_wins_over_the_runs() -> None:
    assert _short_train(1, flow_registry(), seed=7).evaluator.seed == 7


# --- the dataset owner ----------------------------------------------------------------------
def test_load_dataset_through_a_registry_or_the_cores_builtins() -> None:
    assert (
        load_dataset("gaussian", seed=3, n=4).digest()
        == load_dataset("gaussian", registry=REGISTRY, seed=3, n=4).digest()
    )
    assert load_dataset(DATASET, registry=flow_registry()).name == DATASET
    with pytest.raises(NasforgeError, match=f"unknown dataset '{DATASET}'"):
        load_dataset(DATASET)


def test_network_options_from_the_data() -> None:
    assert network_options((1, 8, 8), 10) == {"num_classes": 10, "in_channels": 1}
    assert network_options((64,), 10) == {"num_classes": 10}
    assert network_options((3, 32, 32), 100, accepted={"num_classes"}) == {"num_classes": 100}


def test_a_spec_without_datasets_builds_evaluators_that_need_none() -> None:
    spec = ExperimentSpec(space="toy", strategy="random", evaluator="toy", budget=Budget(trials=2))
    space, evaluator, _, _ = spec.build(REGISTRY)
    assert evaluator.dataset is None and space.name == "toy"
