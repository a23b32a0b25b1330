"""The ``nesbs`` one-shot strategy: conformance, the ensemble outcome, DARTS, the CLI."""

from __future__ import annotations

import json

import pytest

from nasforge.api import load_space
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.testing.conformance import OneShotStrategyConformance
from nasforge.run.builtin_datasets import load_digits
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge_nesbs import Nesbs

TINY = {
    "supernet_epochs": 1,
    "posterior_epochs": 1,
    "max_batches": 2,
    "batch_size": 16,
    "svgd_steps": 20,
    "iterations": 2,
    "supernet": {"C": 4, "N": 1},
}


@pytest.fixture(scope="module")
def digits():
    return load_digits()


class TestNesbsConformance(OneShotStrategyConformance):
    @pytest.fixture
    def strategy_cls(self):
        return Nesbs

    @pytest.fixture
    def strategy_options(self):
        return TINY

    @pytest.fixture
    def space(self):
        return load_space("nb201")


@pytest.mark.parametrize("sampler", ["svgd-rd", "mc"])
def test_outcome_is_an_ensemble(sampler, digits) -> None:
    space = load_space("nb201")
    outcome = Nesbs(seed=1, sampler=sampler, **TINY).fit(space, digits)
    assert len(outcome.members) == 3 and outcome.best in outcome.members
    assert outcome.ensemble is not None and outcome.ensemble.members == outcome.members
    assert outcome.ensemble.method == "nesbs" and len(outcome.ensemble.scores) == 3
    ens = outcome.produced_by["ensemble_outcome"]  # the older form, the same ensemble
    assert ens["texts"] == [space.format(g) for g in outcome.members]
    assert ens["weights"] == [1 / 3] * 3 and ens["combine"] == "mean-softmax"
    assert len(ens["scores"]) == 3
    obj = outcome.best_result.objectives
    assert obj["ensemble_nll"] <= obj["mean_member_nll"] + 1e-9  # Jensen, on the selection split
    final = [t for t in outcome.history if t.result.metadata["stage"] == "final"]
    assert [t.genotype for t in final] == list(outcome.members)
    stages = {t.result.metadata["stage"] for t in outcome.history}
    assert stages == {"supernet", "posterior", "candidate", "final"}
    json.dumps(outcome.produced_by)


def test_delta_auto_tries_the_grid_and_keeps_the_best(digits) -> None:
    from nasforge_nesbs.config import DELTA_GRID

    strategy = Nesbs(seed=0, delta="auto", **{**TINY, "iterations": 1})
    outcome = strategy.fit(load_space("nb201"), digits)
    run = outcome.produced_by["run"]
    assert [c["delta"] for c in run["candidates"]] == list(DELTA_GRID)
    best = min(run["candidates"], key=lambda c: c["scores"]["nll"])
    assert (
        run["delta"] == best["delta"]
        and outcome.best_result.objectives["ensemble_nll"] == best["scores"]["nll"]
    )


@pytest.mark.slow
def test_runs_on_the_darts_space(digits) -> None:
    """The same code on DARTS cells (pair + two ops per node, both cell types)."""
    space = load_space("darts")
    options = {**TINY, "max_batches": 1, "supernet": {"C": 4, "layers": 3}, "ensemble_size": 2}
    outcome = Nesbs(seed=0, **options).fit(space, digits)
    assert len(outcome.members) == 2
    for g in outcome.members:
        space.validate(g)


def test_bad_option_is_one_line() -> None:
    with pytest.raises(NasforgeError, match="delta"):
        Nesbs(delta=3.0)
    with pytest.raises(NasforgeError, match="delta"):
        Nesbs(delta="sometimes")
    with pytest.raises(NasforgeError, match="does not accept"):
        Nesbs(n_members=3)


@pytest.mark.slow
def test_search_command_prints_the_members(cli, tmp_path) -> None:
    run = tmp_path / "run"
    args = ["search", "--space", "nb201", "--strategy", "nesbs", "--dataset", "digits", "--json"]
    for key, value in TINY.items():
        args += ["-o", f"{key}={json.dumps(value)}"]
    res = cli(*args, "--run-dir", str(run), ok=True)
    assert res.code == 0, res.err
    assert res.err.count("NESBS member") == 3
    doc = res.json()
    assert len(doc["members"]) == 3 and doc["ensemble"]["method"] == "nesbs"
    reader = JournalReader(journal_path(run))
    assert [t.result.metadata["stage"] for t in reader.trials][-3:] == ["final"] * 3
