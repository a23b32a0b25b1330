"""NB201TableEvaluator and the plugin's registration."""

from __future__ import annotations

import json
import random

import pytest

import nasforge
from nasforge.errors import CapabilityError, InvalidGenotypeError, NasforgeError, UnknownNameError
from nasforge.genotype import Genotype
from nasforge.result import Objective
from nasforge.testing import ToySpace
from nasforge.testing.conformance import EvaluatorConformance
from nasforge_nb201 import NB201Space, NB201TableEvaluator, TrainingClock, benchmark_dataset, load_table

RESNET = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
EMPTY = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"


class TestNB201TableEvaluatorConformance(EvaluatorConformance):
    @pytest.fixture
    def evaluator(self) -> NB201TableEvaluator:
        return NB201TableEvaluator(NB201Space(), dataset="cifar10")


def test_identity() -> None:
    ev = NB201TableEvaluator(NB201Space())
    assert ev.name == "nb201-table" and ev.simulated is True
    assert ev.spaces == frozenset({"nb201"})
    assert ev.objective == Objective("test_accuracy", higher_is_better=True)
    assert ev.dataset == "cifar10"


@pytest.mark.parametrize(
    ("dataset", "canonical", "column"),
    [
        ("cifar10", "cifar10", 0),
        ("cifar100", "cifar100", 1),
        ("imagenet16-120", "imagenet16-120", 2),
        ("ImageNet16-120", "imagenet16-120", 2),
    ],
)
def test_lookups_match_the_csv(shipped_rows, accuracy_columns, space, dataset, canonical, column) -> None:
    ev = NB201TableEvaluator(space, dataset=dataset)
    assert ev.dataset == canonical
    for i in (0, 1, 2, 857, 6111, 9930, 15_624):
        row = shipped_rows[i]
        r = ev.evaluate(space.parse(row["ArchitectureString"]))
        assert not r.failed
        assert r.objectives == {"test_accuracy": float(row[accuracy_columns[column]])}
        assert r.metadata == {"index": i, "arch": row["ArchitectureString"]}
        assert r.cost > 0


def test_the_best_cell_scores_the_optimum(space) -> None:
    ev = NB201TableEvaluator(space, dataset="cifar100")
    index, best = load_table().optimum("cifar100")
    r = ev.evaluate(space.at_index(index))
    assert r.objectives["test_accuracy"] == best
    assert round(best, 2) == 73.51


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


def test_describe_records_table_hash_dataset_and_clock(space) -> None:
    info = NB201TableEvaluator(space, dataset="ImageNet16-120").describe()
    assert info["evaluator"] == "nb201-table"
    assert info["dataset"] == "imagenet16-120"
    assert info["table_sha256"] == load_table().sha256
    assert info["clock"]["epochs"] == 200
    json.dumps(info)


def test_simulated_clock_model(space) -> None:
    """Affine in MACs: the ResNet cell ~5,550 s on CIFAR-10, cheaper cells less, never 0."""
    ev = NB201TableEvaluator(space)
    resnet = ev.evaluate(space.parse(RESNET)).cost
    empty = ev.evaluate(space.parse(EMPTY)).cost
    assert 5_000 < resnet < 6_000
    assert 0 < empty < resnet
    rng = random.Random(0)
    for _ in range(20):
        assert empty <= ev.evaluate(space.sample(rng)).cost <= resnet
    imagenet = NB201TableEvaluator(space, dataset="imagenet16-120").evaluate(space.parse(RESNET))
    assert imagenet.cost > resnet  # 3x the images at a quarter of the pixels


def test_clock_is_configurable_and_validated(space) -> None:
    half = NB201TableEvaluator(space, clock=TrainingClock(epochs=100))
    full = NB201TableEvaluator(space)
    g = space.parse(RESNET)
    assert half.evaluate(g).cost == pytest.approx(full.evaluate(g).cost / 2)
    as_json = NB201TableEvaluator(space, clock={"epochs": 100})  # how a JSON spec passes it
    assert as_json.evaluate(g).cost == half.evaluate(g).cost
    with pytest.raises(NasforgeError, match="fields: epochs"):
        NB201TableEvaluator(space, clock={"epoch": 100})
    with pytest.raises(ValueError):
        TrainingClock(epochs=0)
    with pytest.raises(ValueError):
        TrainingClock(seconds_per_image=-1.0)


def test_clock_formula() -> None:
    clock = TrainingClock(epochs=2, seconds_per_image=1e-3, seconds_per_image_gmac=1e-2)
    assert clock.seconds(macs=10**9, train_images=100) == pytest.approx(2 * 100 * (1e-3 + 1e-2))
    assert clock.training_seconds(("none",) * 6, benchmark_dataset("cifar10")) > 0


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
