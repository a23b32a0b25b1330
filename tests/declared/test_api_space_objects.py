"""``nasforge.api.search(space=MyFamily)``: a space class or object handed over from Python
is recorded by its code, so the run resumes and exports like any other."""

from __future__ import annotations

from pathlib import Path

import pytest
from torch import nn

from examples.cnn_family import CnnFamily
from nasforge import Chooser, DeclarationError, DeclaredSpace, NasforgeError, api
from nasforge.run.journal_file import JournalReader
from tests.declared.families import OneStage

SMALL = {"depths": [1], "kernels": [3], "widths": [4, 8], "acts": ["relu"]}
RUN = {"strategy": "random", "evaluator": "short-train", "train_data": "digits", "trials": 2}


def test_a_class_runs_and_the_journal_records_its_file(tmp_path: Path) -> None:
    out = api.search(OneStage, run_dir=tmp_path / "run", evaluator_options={"epochs": 1}, **RUN)
    assert out.best.space == "one-stage"
    space = JournalReader.of_run(tmp_path / "run").header["space"]
    assert space["source"].endswith("tests/declared/families.py:OneStage") and len(space["digest"]) == 64
    again = api.resume(tmp_path / "run")
    assert again.best == out.best


def test_an_object_with_options_is_its_class_with_those_options(tmp_path: Path) -> None:
    out = api.search(
        CnnFamily(**SMALL),
        space_options=SMALL,
        evaluator_options={"epochs": 1},
        run_dir=tmp_path / "r",
        **RUN,
    )
    assert "stage1.block1" not in CnnFamily(**SMALL).format(out.best)
    alone = api.search(CnnFamily(**SMALL), evaluator_options={"epochs": 1}, run_dir=tmp_path / "o", **RUN)
    assert alone.best == out.best  # the options it was made with are the run's
    assert JournalReader.of_run(tmp_path / "o").header["spec"]["space_options"] == SMALL
    with pytest.raises(NasforgeError, match="differs from CnnFamily"):
        api.search(
            CnnFamily(**SMALL), space_options={"depths": [1, 2]}, evaluator_options={"epochs": 1}, **RUN
        )


def test_a_class_made_inside_a_function_is_refused_in_one_line() -> None:
    class Local(DeclaredSpace):
        def declare(self, c: Chooser) -> nn.Module:
            return nn.Linear(4, c.width("w", [2, 4]))

    with pytest.raises(DeclarationError, match="inside a function"):
        api.search(Local, **RUN)
