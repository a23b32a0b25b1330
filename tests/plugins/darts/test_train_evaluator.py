"""The ``darts-train`` evaluator (issue 16): DARTS's evaluation training as a search's
evaluator, reporting validation accuracy after every epoch, at any fidelity, stoppable."""

from __future__ import annotations

import random

import pytest
import torch

from nasforge import api
from nasforge.api import load_space
from nasforge.kernel.errors import CapabilityError, NasforgeError, OptionError
from nasforge.run.builtin_datasets import load_digits
from nasforge_darts.train_evaluator import DartsTrainEvaluator

TINY = {"epochs": 3, "max_batches": 2, "C": 4, "layers": 3, "batch_size": 32}


@pytest.fixture(scope="module")
def evaluator() -> DartsTrainEvaluator:
    torch.set_num_threads(1)
    return DartsTrainEvaluator(load_space("darts"), data=load_digits(), seed=1, **TINY)


@pytest.fixture(scope="module")
def genotype(evaluator: DartsTrainEvaluator):
    return evaluator.space.sample(random.Random(5))


@pytest.mark.slow
def test_every_epoch_is_reported_and_the_run_repeats(evaluator, genotype) -> None:
    full = evaluator.evaluate(genotype)
    assert not full.failed, full.error
    curve = full.metadata["per_epoch"]["valid_accuracy"]
    assert len(curve) == 3 and full.metadata["epochs"] == 3 and "stopped_at" not in full.metadata
    assert full.objectives["valid_accuracy"] == curve[-1]
    assert all(0.0 <= v <= 100.0 for v in curve)
    again = evaluator.evaluate(genotype)
    assert again.metadata["per_epoch"] == full.metadata["per_epoch"]  # same seed, same curve
    short = evaluator.evaluate_at(genotype, 1)
    assert short.metadata["epochs"] == 1 and len(short.metadata["per_epoch"]["valid_accuracy"]) == 1


def test_a_pruner_stops_it_between_epochs(evaluator, genotype) -> None:
    stopped = evaluator.evaluate_at(genotype, None, stop_below=(float("nan"), 101.0))
    assert stopped.metadata["stopped_at"] == 2 and stopped.metadata["epochs"] == 2
    assert stopped.objectives["valid_accuracy"] == stopped.metadata["per_epoch"]["valid_accuracy"][-1]


def test_it_observes_a_validation_split_of_the_training_data(evaluator) -> None:
    described = evaluator.describe()
    assert described["train"] + described["valid"] == len(load_digits())
    assert described["settings"]["eval_every"] == 1 and described["epochs"] == 3


def test_bad_input_is_refused(evaluator, genotype) -> None:
    with pytest.raises(NasforgeError, match="1 to 3 epochs"):
        evaluator.evaluate_at(genotype, 4)
    with pytest.raises(OptionError, match="eval_every"):
        DartsTrainEvaluator(load_space("darts"), data=load_digits(), eval_every=2)
    with pytest.raises(OptionError, match="valid_fraction"):
        DartsTrainEvaluator(load_space("darts"), data=load_digits(), valid_fraction=1.5)
    with pytest.raises(CapabilityError):
        DartsTrainEvaluator(load_space("nb201"), data=load_digits())


@pytest.mark.slow
def test_hyperband_searches_the_darts_space_with_it(tmp_path) -> None:
    torch.set_num_threads(1)
    outcome = api.search(
        "darts",
        "hyperband",
        "darts-train",
        train_data="digits",
        trials=100,
        strategy_options={"brackets": 1},
        evaluator_options=TINY,
        run_dir=tmp_path / "run",
    )
    fidelities = [t.fidelity for t in outcome.history]
    assert sorted(fidelities) == [1, 1, 1, 3]  # 3 cells at 1 epoch, the best at 3
    assert all(len(t.result.metadata["per_epoch"]["valid_accuracy"]) == t.fidelity for t in outcome.history)
    assert outcome.best_result is not None and outcome.best_result.metadata["epochs"] == 3
