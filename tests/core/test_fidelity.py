"""Fidelities in the core: proposals, trial records (old ones read as full), checksums,
evaluators that vary epochs, report per epoch and stop early."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
import torch

from nasforge import Proposal, Result, Trial
from nasforge.kernel.errors import CapabilityError, JournalError
from nasforge.kernel.fidelity import should_stop
from nasforge.kernel.testing import ToyEvaluator, ToyFidelityEvaluator, ToySpace
from nasforge.run.fidelity_spent import fidelity_spent
from nasforge.run.journal_file import JournalReader, JournalWriter, journal_path, trial_checksum
from nasforge.tools.short_train import ShortTrainEvaluator


def _g():
    return ToySpace().sample(random.Random(0))


def test_proposal_checks_its_fidelity() -> None:
    assert Proposal(_g()).fidelity is None
    assert Proposal(_g(), 3, stop_below=[1, 2]).stop_below == (1.0, 2.0)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            Proposal(_g(), bad)


def test_trial_without_fidelity_keeps_its_old_record_and_checksum() -> None:
    trial = Trial(index=0, genotype=_g(), result=Result(objectives={"score": 1.0}), wall_seconds=0.5)
    record = {"type": "trial", **trial.to_json()}
    assert "fidelity" not in record, "a full evaluation is written as before fidelities existed"
    old = {key: record[key] for key in ("genotype", "result", "wall_seconds")}
    expected = hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert trial_checksum(record) == expected
    assert Trial.from_json(record).fidelity is None


def test_fidelity_is_journaled_and_checksummed(tmp_path) -> None:
    path = journal_path(tmp_path)
    with JournalWriter(path) as writer:
        writer.header({"spec": None})
        writer.trial(Trial(index=0, genotype=_g(), result=Result(objectives={"score": 1.0}), fidelity=3))
        writer.trial(Trial(index=1, genotype=_g(), result=Result(objectives={"score": 2.0})))
    assert [t.fidelity for t in JournalReader(path).trials] == [3, None]
    path.write_text(path.read_text().replace('"fidelity": 3', '"fidelity": 9'))
    with pytest.raises(JournalError, match="checksum"):
        JournalReader(path)


def test_an_evaluator_without_fidelity_refuses_a_budget() -> None:
    evaluator = ToyEvaluator(ToySpace())
    assert evaluator.evaluate_at(_g(), None) == evaluator.evaluate(_g())
    with pytest.raises(CapabilityError, match="no fidelity"):
        evaluator.evaluate_at(_g(), 3)
    assert fidelity_spent([None, 3], evaluator) is None


def test_toy_fidelity_evaluator_reports_per_epoch_and_stops() -> None:
    evaluator = ToyFidelityEvaluator(ToySpace())
    full = evaluator.evaluate(_g())
    assert full.metadata["epochs"] == 9 and len(full.metadata["per_epoch"]["score"]) == 9
    assert fidelity_spent([None, 3, 1], evaluator) == 13
    stopped = evaluator.evaluate_at(_g(), None, stop_below=[float("nan"), 1e9])
    assert stopped.metadata["stopped_at"] == 2 and stopped.metadata["epochs"] == 2
    assert should_stop((1.0,), 1, 0.5, True) and not should_stop((1.0,), 2, 0.5, True)
    assert not should_stop((float("nan"),), 1, 0.5, True) and should_stop((1.0,), 1, 2.0, False)


@pytest.mark.slow
def test_short_train_varies_epochs_reports_curves_and_stops() -> None:
    """On tiny NB201 networks: 2 of 2 epochs, 1 epoch, and stopped after the first."""
    torch.set_num_threads(1)
    from nasforge.kernel.registry import get_registry

    registry = get_registry()
    space = registry.get("space", "nb201")()
    evaluator = ShortTrainEvaluator(space, epochs=2, build={"C": 4, "N": 1}, registry=registry)
    assert evaluator.fidelity == "epochs"
    g = space.sample(random.Random(0))
    full = evaluator.evaluate(g)
    curve = full.metadata["per_epoch"]["valid_accuracy"]
    assert len(curve) == 2 and curve[-1] == full.objectives["valid_accuracy"]
    assert "stopped_at" not in full.metadata
    short = evaluator.evaluate_at(g, 1)
    assert short.metadata["epochs"] == 1
    stopped = evaluator.evaluate_at(g, None, stop_below=(101.0,))
    assert stopped.metadata["stopped_at"] == 1
    assert stopped.objectives["valid_accuracy"] == stopped.metadata["per_epoch"]["valid_accuracy"][0]
    with pytest.raises(Exception, match="1 to 2 epochs"):
        evaluator.evaluate_at(g, 3)
