"""An ensemble as a first-class result (issue 13): the public API, the SearchOutcome field,
the one-shot journal's end record, and ``api.resume`` of an ended run."""

from __future__ import annotations

import json

import pytest

import nasforge
from nasforge import Ensemble, api
from nasforge.kernel.ensemble import ENSEMBLE_KEY
from nasforge.kernel.errors import JournalError
from nasforge.kernel.outcome import SearchOutcome
from nasforge.run.journal_file import CHECKSUM_KEY, END_CHECKSUM_DECLARATION, JournalReader, journal_path
from tests.nesbs_tiny import TINY


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("nesbs") / "run"
    outcome = api.search("nb201", "nesbs", train_data="digits", strategy_options=TINY, run_dir=run_dir)
    return run_dir, outcome


def test_public_api_names_the_ensemble_and_its_export() -> None:
    from nasforge.tools.export import export_ensemble, load_ensemble
    from nasforge.tools.export.ensemble_export import export_ensemble as direct

    assert nasforge.Ensemble is Ensemble and "Ensemble" in nasforge.__all__
    assert {"nasforge.kernel.ensemble", "nasforge.tools.export"} <= set(nasforge.PUBLIC_MODULES)
    assert export_ensemble is direct and callable(load_ensemble)


def test_api_search_outcome_carries_the_ensemble(run) -> None:
    _, outcome = run
    ens = outcome.ensemble
    assert isinstance(ens, Ensemble) and ens.method == "nesbs"
    assert ens.members == outcome.members and outcome.best in ens.members
    assert len(ens.scores) == len(ens) == 3 and {"member_nll", "member_error"} <= set(ens.scores[0])
    assert set(ens.objectives) == {"ensemble_nll", "ensemble_error"}
    assert Ensemble.from_outcome(outcome) is ens
    # the older form, for readers of produced_by, says the same
    assert Ensemble.from_json(outcome.produced_by[ENSEMBLE_KEY]) == ens


def test_end_record_holds_the_ensemble_and_resume_gives_it_back(run) -> None:
    run_dir, outcome = run
    end = JournalReader(journal_path(run_dir)).end
    assert end is not None and Ensemble.from_json(end["ensemble"]) == outcome.ensemble
    assert len(end["ensemble"]["texts"]) == 3 and end["ensemble"]["scores"]
    again = api.resume(run_dir)
    assert again.ensemble == outcome.ensemble and again.members == outcome.members
    assert again.best == outcome.best


def _copy_with_end(run_dir, tmp_path, edit) -> object:
    """The run's journal as one written before end records carried a checksum (none in the
    header's declaration, none on the end), its end record changed by ``edit``."""
    lines = journal_path(run_dir).read_text().splitlines()
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    assert end["type"] == "end"
    header.pop(END_CHECKSUM_DECLARATION)
    end.pop(CHECKSUM_KEY)
    edit(end)
    target = tmp_path / "copy"
    target.mkdir()
    journal_path(target).write_text("\n".join([json.dumps(header), *lines[1:-1], json.dumps(end)]) + "\n")
    return target


def test_an_older_journal_without_the_ensemble_still_resumes(run, tmp_path) -> None:
    run_dir, outcome = run
    copy = _copy_with_end(run_dir, tmp_path, lambda end: end.pop("ensemble"))
    again = api.resume(copy)
    assert again.ensemble is None and again.members == () and again.best == outcome.best


def test_a_damaged_ensemble_record_is_one_line(run, tmp_path) -> None:
    run_dir, _ = run
    copy = _copy_with_end(run_dir, tmp_path, lambda end: end["ensemble"].update(weights=[1.0]))
    with pytest.raises(JournalError) as exc:
        api.resume(copy)
    assert "\n" not in str(exc.value) and "ensemble" in str(exc.value)


def test_search_outcome_stays_backwards_compatible(run) -> None:
    _, outcome = run
    plain = SearchOutcome(best=outcome.best, best_result=None)
    assert plain.ensemble is None and Ensemble.from_outcome(plain) is None
    with pytest.raises(TypeError):
        SearchOutcome(best=outcome.best, best_result=None, ensemble={"members": []})
    # an outcome made before the field: the ensemble read from produced_by
    old = SearchOutcome(
        best=outcome.best,
        best_result=None,
        members=outcome.members,
        produced_by={ENSEMBLE_KEY: outcome.produced_by[ENSEMBLE_KEY]},
    )
    assert Ensemble.from_outcome(old) == outcome.ensemble
