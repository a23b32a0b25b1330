"""Regularized evolution on a long budget keeps finding cells it has not evaluated while any
remain (it once closed in on seen cells, slowed ~40x and stopped at a third of
NAS-Bench-201), and a run that stops before its budget says why, in words."""

from __future__ import annotations

import json

from nasforge import Objective, Result, api
from nasforge.kernel.testing import ToySpace
from nasforge.tools.export import inspect_file
from nasforge_search import RegularizedEvolution


def _distinct(run_dir) -> int:
    lines = (run_dir / "journal.jsonl").read_text().splitlines()
    return len({json.dumps(r["genotype"]) for r in map(json.loads, lines) if r["type"] == "trial"})


def test_a_population_of_seen_cells_still_proposes_the_last_unseen_one() -> None:
    space = ToySpace()
    rea = RegularizedEvolution(space, objective=Objective("score"), seed=0, population_size=4, sample_size=2)
    cells = list(space.enumerate())
    last = cells[-1]
    for g in cells[:-1]:
        rea.tell(g, Result(objectives={"score": 1.0}))
    for _ in range(rea.population_size):  # the run answers repeats from its record, in a row
        rea.tell(cells[0], Result(objectives={"score": 1.0}))
    assert rea.ask() == last


def test_rea_sees_every_cell_of_a_finite_space_within_its_budget(tmp_path) -> None:
    space = ToySpace()
    run = tmp_path / "rea"
    api.search("toy", "rea", "toy", trials=space.size, seed=0, run_dir=run)
    assert _distinct(run) == space.size
    assert inspect_file(run)["ended"] == f"its trial budget was spent: {space.size} of {space.size} trials"


def test_a_run_that_runs_out_of_cells_says_so(tmp_path) -> None:
    space = ToySpace()
    run = tmp_path / "random"
    api.search("toy", "random", "toy", trials=space.size + 50, seed=0, run_dir=run)
    assert _distinct(run) == space.size
    ended = inspect_file(run)["ended"]
    assert ended == (
        f"ended after {space.size} trials: search space exhausted: every one of the "
        f"{space.size} architectures of 'toy' has been evaluated"
    )
