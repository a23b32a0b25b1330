"""Evaluating an ensemble's members (issue 13, items a and d): short-train returns the
validation examples' probabilities when asked (and only then), an ensemble's error comes
from its members' evaluations, and a tabular benchmark's numbers (NAS-Bench-201's
validation and test accuracy) join each member's scores."""

from __future__ import annotations

import random

import pytest
import torch

from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.evaluator import PREDICTIONS_KEY
from nasforge.kernel.registry import get_registry
from nasforge.run.builtin_datasets import load_digits
from nasforge.run.ensemble_training import ensemble_scores_of_results, evaluate_members
from nasforge.tools.short_train import ShortTrainEvaluator

BUILD = {"C": 4, "N": 1}


@pytest.fixture(scope="module")
def space():
    return get_registry().get("space", "nb201")()


@pytest.fixture(scope="module")
def members(space):
    rng = random.Random(7)
    return [space.sample(rng) for _ in range(3)]


@pytest.fixture(scope="module")
def evaluated(space, members):
    """Each member trained one epoch with predictions; the first also without."""
    torch.set_num_threads(1)
    data = load_digits().split(0.35, seed=0)[0]  # a third of digits: quick
    asked = ShortTrainEvaluator(space, epochs=1, build=BUILD, predictions=True, data=data)
    plain = ShortTrainEvaluator(space, epochs=1, build=BUILD, data=data)
    return asked, [asked.evaluate(g) for g in members], plain, [plain.evaluate(members[0])]


@pytest.mark.slow
def test_predictions_only_when_asked(evaluated) -> None:
    asked, with_p, plain, without = evaluated
    assert all(PREDICTIONS_KEY not in r.metadata for r in without)
    assert "predictions" not in plain.describe() and asked.describe()["predictions"] is True
    # asking changes nothing else: the same training, the same accuracy
    assert with_p[0].objectives == without[0].objectives
    labels = torch.tensor(asked.valid_labels)
    for r in with_p:
        probs = torch.tensor(r.metadata[PREDICTIONS_KEY], dtype=torch.float64)
        assert probs.shape == (len(labels), 10)
        assert torch.allclose(probs.sum(1), torch.ones(len(labels), dtype=torch.float64), atol=1e-4)
        accuracy = 100.0 * float((probs.argmax(1) == labels).double().mean())
        assert accuracy == pytest.approx(r.objectives["valid_accuracy"], abs=0.2)


def test_bad_predictions_option_is_refused(space) -> None:
    with pytest.raises(NasforgeError, match="predictions"):
        ShortTrainEvaluator(space, epochs=1, build=BUILD, predictions="yes")  # type: ignore[arg-type]


def test_ensemble_error_from_the_members_evaluations(evaluated, members) -> None:
    asked, results, _, _ = evaluated
    labels = asked.valid_labels
    one = ensemble_scores_of_results(Ensemble(members=members[:1]), results[:1], labels)
    assert one["ensemble_valid_error"] == pytest.approx(
        100.0 - results[0].objectives["valid_accuracy"], abs=0.2
    )
    three = ensemble_scores_of_results(Ensemble(members=members), results, labels)
    probs = torch.stack(
        [torch.tensor(r.metadata[PREDICTIONS_KEY], dtype=torch.float64) for r in results]
    ).mean(0)
    expected = 100.0 * float((probs.argmax(1) != torch.tensor(labels)).double().mean())
    assert three["ensemble_valid_error"] == pytest.approx(expected)
    # Jensen: the averaged prediction's NLL is at most the members' mean NLL
    nlls = [ensemble_scores_of_results(Ensemble(members=[g]), [r], labels)["ensemble_valid_nll"]
            for g, r in zip(members, results, strict=True)]  # fmt: skip
    assert three["ensemble_valid_nll"] <= sum(nlls) / 3 + 1e-9
    ensemble, _ = evaluate_members(Ensemble(members=members), asked)
    assert ensemble.objectives["ensemble_valid_error"] == pytest.approx(expected)
    assert [s["valid_accuracy"] for s in ensemble.scores] == [r.objectives["valid_accuracy"] for r in results]


def test_members_without_predictions_are_refused_in_one_line(evaluated, members) -> None:
    plain, without = evaluated[2], evaluated[3]
    with pytest.raises(NasforgeError, match="no per-example predictions"):
        ensemble_scores_of_results(Ensemble(members=members[:1]), without, plain.valid_labels)


def test_nb201_table_scores_each_member(space, members) -> None:
    table = get_registry().get("evaluator", "nb201-table")(space, dataset="cifar10")
    ens = Ensemble(members=members, scores=[{"member_nll": 1.0}] * 3, objectives={"ensemble_nll": 0.5})
    scored, results = evaluate_members(ens, table)
    for s, r in zip(scored.scores, results, strict=True):
        assert s["member_nll"] == 1.0  # the search's own scores are kept
        assert s["valid_accuracy"] == r.objectives["valid_accuracy"]
        assert 0.0 < s["test_accuracy"] <= 100.0
    mean = sum(r.objectives["valid_accuracy"] for r in results) / 3
    assert scored.objectives["members_mean_valid_accuracy"] == pytest.approx(mean)
    assert scored.objectives["ensemble_nll"] == 0.5
    # the protocol's two numbers, not every column of the table
    assert set(scored.scores[0]) == {"member_nll", "valid_accuracy", "test_accuracy"}
    assert "ensemble_valid_error" not in scored.objectives  # a table has no per-example predictions
    assert Ensemble.from_json(scored.to_json()) == scored  # journals as before
