"""NB201TableEvaluator: the benchmark protocol, every objective recorded, and registration."""

from __future__ import annotations

import json
import logging
import warnings

import pytest

import nasforge
from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError, NasforgeError, UnknownNameError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Objective
from nasforge.kernel.testing import ToySpace
from nasforge.kernel.testing.conformance import EvaluatorConformance
from nasforge_nb201 import NB201Space, NB201TableEvaluator, load_table
from nasforge_nb201.evaluator import FitnessOnTestSetWarning

RESNET = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
EMPTY = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
ALL_OBJECTIVES = {"valid_accuracy", "test_accuracy", "train_seconds", "latency_ms", "params_mb"}


class TestNB201TableEvaluatorConformance(EvaluatorConformance):
    @pytest.fixture
    def evaluator(self) -> NB201TableEvaluator:
        return NB201TableEvaluator(NB201Space(), dataset="cifar10")


def test_identity_follows_the_protocol() -> None:
    ev = NB201TableEvaluator(NB201Space())
    assert ev.name == "nb201-table" and ev.simulated is True
    assert ev.spaces == frozenset({"nb201"})
    assert ev.objective == Objective("valid_accuracy", higher_is_better=True)
    assert ev.dataset == "cifar10" and ev.fitness == "valid"


@pytest.mark.parametrize(
    ("dataset", "canonical"),
    [
        ("cifar10", "cifar10"),
        ("cifar100", "cifar100"),
        ("imagenet16-120", "imagenet16-120"),
        ("ImageNet16-120", "imagenet16-120"),
    ],
)
def test_every_objective_is_recorded_and_cost_is_the_recorded_time(
    shipped_rows, csv_column, space, dataset, canonical
) -> None:
    ev = NB201TableEvaluator(space, dataset=dataset)
    assert ev.dataset == canonical
    for i in (0, 1, 2, 857, 6111, 9930, 10676, 15_624):
        row = shipped_rows[i]
        r = ev.evaluate(space.parse(row["arch"]))
        assert not r.failed
        assert set(r.objectives) == ALL_OBJECTIVES
        assert r.objectives == {m: float(row[csv_column(m, canonical)]) for m in ALL_OBJECTIVES}
        assert r.cost == float(row[csv_column("train_seconds", canonical)])
        seeds = int(row[csv_column("valid_seeds", canonical)])
        assert r.metadata == {"index": i, "arch": row["arch"], "valid_seeds": seeds}


def test_the_fitness_is_validation_and_the_test_accuracy_rides_along(space) -> None:
    """On ImageNet16-120 the best validation cell is not the test optimum: the evaluator
    ranks by the former and carries the latter, so a run reports the honest number."""
    ev = NB201TableEvaluator(space, dataset="imagenet16-120")
    table = load_table()
    best_valid, _ = table.optimum("imagenet16-120", "valid_accuracy")
    best_test, _ = table.optimum("imagenet16-120", "test_accuracy")
    a, b = ev.evaluate(space.at_index(best_valid)), ev.evaluate(space.at_index(best_test))
    assert ev.objective.fitness(a) > ev.objective.fitness(b)
    assert a.objectives["test_accuracy"] < b.objectives["test_accuracy"]
    assert round(a.objectives["valid_accuracy"], 2) == 46.73  # the data README's figures
    assert round(b.objectives["test_accuracy"], 2) == 47.31


def test_cost_is_the_benchmark_clock_not_a_model(space) -> None:
    """The ResNet-ish all-3x3 cell trained longer than the empty cell, as the table recorded."""
    ev = NB201TableEvaluator(space)
    resnet, empty = ev.evaluate(space.parse(RESNET)), ev.evaluate(space.parse(EMPTY))
    table = load_table()
    assert resnet.cost == table.value("train_seconds", space.index_of(space.parse(RESNET)), "cifar10")
    assert 0 < empty.cost < resnet.cost
    imagenet = NB201TableEvaluator(space, dataset="imagenet16-120").evaluate(space.parse(RESNET))
    assert imagenet.cost > resnet.cost


def test_test_fitness_is_an_opt_in_that_warns_and_logs(space, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="nasforge.nb201")
    with pytest.warns(FitnessOnTestSetWarning, match="tuned on"):
        ev = NB201TableEvaluator(space, dataset="cifar100", fitness="test")
    assert ev.objective == Objective("test_accuracy", higher_is_better=True)
    logged = [r for r in caplog.records if r.name == "nasforge.nb201" and r.levelno == logging.WARNING]
    assert len(logged) == 1 and "tuned on" in logged[0].getMessage()
    r = ev.evaluate(space.parse(RESNET))
    assert set(r.objectives) == ALL_OBJECTIVES  # the same record, only the fitness differs
    assert ev.describe()["protocol"]["follows_benchmark_protocol"] is False


def test_the_protocol_default_is_silent(space, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="nasforge.nb201")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NB201TableEvaluator(space, dataset="cifar10", fitness="valid").evaluate(space.parse(RESNET))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("bad", ["validation", "TEST", 1, None])
def test_bad_fitness_is_one_line_naming_the_choices(space, bad) -> None:
    with pytest.raises(NasforgeError, match="option 'fitness' expects one of 'valid', 'test'"):
        NB201TableEvaluator(space, fitness=bad)


def test_unknown_dataset_names_the_three(space) -> None:
    with pytest.raises(UnknownNameError) as info:
        NB201TableEvaluator(space, dataset="imagenet")
    assert "cifar10, cifar100, imagenet16-120" in str(info.value)


def test_foreign_space_is_refused() -> None:
    with pytest.raises(CapabilityError, match="nb201"):
        NB201TableEvaluator(ToySpace())


def test_foreign_genotype_raises(space) -> None:
    ev = NB201TableEvaluator(space)
    with pytest.raises(InvalidGenotypeError):
        ev.evaluate(Genotype("nb201", "1", ("none",) * 5))


def test_describe_records_table_hash_dataset_and_protocol(space) -> None:
    info = NB201TableEvaluator(space, dataset="ImageNet16-120").describe()
    assert info["evaluator"] == "nb201-table"
    assert info["dataset"] == "imagenet16-120"
    assert info["table"] == "nb201_full.csv.gz"
    assert info["table_sha256"] == load_table().sha256
    assert info["protocol"]["fitness"] == "valid_accuracy"
    assert info["protocol"]["reported"] == "test_accuracy"
    assert info["protocol"]["follows_benchmark_protocol"] is True
    assert set(info["protocol"]["objectives"]) == ALL_OBJECTIVES
    json.dumps(info)


def test_registry_finds_the_space_and_the_evaluator() -> None:
    registry = nasforge.get_registry(refresh=True)
    assert "nb201" in registry.names("space")
    assert "nb201-table" in registry.names("evaluator")
    assert registry.get("space", "nb201") is NB201Space
    assert registry.get("evaluator", "nb201-table") is NB201TableEvaluator
    info = next(p for p in registry.plugins if p.name == "nb201")
    assert info.ok, info.error
    assert set(info.provides) == {"space:nb201", "evaluator:nb201-table"}
    space = registry.space("nb201")
    ev = registry.get("evaluator", "nb201-table")(space, dataset="cifar10")
    assert ev.evaluate(space.parse(RESNET)).metadata["arch"] == RESNET
