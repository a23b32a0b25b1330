"""One owner for datasets; the spec keeps training data and benchmark dataset apart; the
seed reaches the evaluator; older journals (one ``dataset``) still resume (issue 9)."""

from __future__ import annotations

import json

import pytest

from nasforge import Budget, NasforgeError, api, get_registry
from nasforge.kernel.datasets import load_dataset, network_options
from nasforge.run import defaults
from nasforge.run.experiment import Experiment
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.run.spec import ExperimentSpec, spec_differences
from tests.core.flow_plugin import DATASET, SPACE, STRATEGY, flow_registry

REGISTRY = get_registry()


# --- the single --dataset keeps its meaning; the explicit fields say which it is ------------
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
    assert spec.dataset is None and getattr(spec, field) == "gaussian"
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


# --- older journals -----------------------------------------------------------------------
def _to_old_form(run_dir, *, dataset: str) -> None:
    """Rewrite a journal's header spec as the code before the split wrote it."""
    path = journal_path(run_dir)
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    spec = header["spec"]
    for key in ("train_data", "benchmark_dataset"):
        spec.pop(key)
    spec["dataset"] = dataset
    lines[0] = json.dumps(header) + "\n"
    path.write_text("".join(lines))


def test_an_older_ask_tell_journal_resumes_to_the_same_run(tmp_path) -> None:
    full = api.search("nb201", "rea", trials=12, seed=4, benchmark_dataset="cifar100", run_dir=tmp_path / "a")
    api.search("nb201", "rea", trials=12, seed=4, benchmark_dataset="cifar100", run_dir=tmp_path / "b")
    _to_old_form(tmp_path / "b", dataset="cifar100")
    path = journal_path(tmp_path / "b")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:6]))  # header + 5 trials
    assert JournalReader.of_run(tmp_path / "b").header["spec"]["dataset"] == "cifar100"
    resumed = api.resume(tmp_path / "b")
    assert [t.genotype for t in resumed.history] == [t.genotype for t in full.history]
    assert [t.result for t in resumed.history] == [t.result for t in full.history]
    # the same search described explicitly, in the old journal's directory, is the same run
    again = api.search(
        "nb201", "rea", trials=12, seed=4, benchmark_dataset="cifar100", run_dir=tmp_path / "b"
    )
    assert again.best == full.best


@pytest.mark.slow
def test_an_older_one_shot_journal_restarts_on_the_data_it_named(tmp_path) -> None:
    tiny = {"supernet": {"C": 4, "N": 1}, "epochs": 1, "max_batches": 2, "batch_size": 16}
    kwargs = {"train_data": "digits", "strategy_options": tiny, "seed": 1}
    api.search("nb201", "darts", run_dir=tmp_path, **kwargs)
    _to_old_form(tmp_path, dataset="digits")
    path = journal_path(tmp_path)
    path.write_text(path.read_text().splitlines(keepends=True)[0])  # killed before its first epoch
    resumed = api.resume(tmp_path)
    assert resumed.best == api.search("nb201", "darts", **kwargs).best


def test_specs_are_compared_resolved() -> None:
    old = {**api.build_spec(benchmark_dataset="cifar100").to_json(), "dataset": "cifar100"}
    del old["benchmark_dataset"], old["train_data"]
    new = api.build_spec(benchmark_dataset="cifar100")
    assert spec_differences(old, new, REGISTRY) == []
    assert spec_differences({**old, "dataset": "cifar10"}, new, REGISTRY) == ["benchmark_dataset"]
    assert spec_differences("not a spec", new, REGISTRY) == sorted(new.to_json())


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
