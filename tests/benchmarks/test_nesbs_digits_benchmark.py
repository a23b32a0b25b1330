"""The NESBS digits benchmark's pieces: presets, NES-RS's forward selection, the paired
McNemar test of its report, bad input, and (slow) one quick seed end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import nesbs_digits  # noqa: E402


def test_presets_keep_the_default_and_add_a_hard_one() -> None:
    assert nesbs_digits.PRESETS["default"] == {"C": 8, "N": 1, "epochs": 15, "search_share": 0.7}
    hard = nesbs_digits.PRESETS["hard"]
    assert hard["C"] < 8 and hard["search_share"] < 0.7 and hard["epochs"] == 15


def test_mcnemar_exact() -> None:
    assert nesbs_digits.mcnemar(0, 0) == 1.0
    assert nesbs_digits.mcnemar(5, 5) == 1.0
    assert nesbs_digits.mcnemar(10, 2) == pytest.approx(0.0386, abs=1e-4)  # 2 * P(X <= 2), X ~ B(12, 1/2)
    assert nesbs_digits.mcnemar(2, 10) == nesbs_digits.mcnemar(10, 2)


def test_discordant_pools_over_seeds() -> None:
    rows = [
        {"methods": {"a": {"wrong": [1, 2]}, "b": {"wrong": [2, 3, 4]}}},
        {"methods": {"a": {"wrong": [5]}, "b": {"wrong": []}}},
    ]
    assert nesbs_digits.discordant(rows, "a", "b") == (2, 2)


def test_forward_select_adds_what_lowers_the_nll_most() -> None:
    y = torch.tensor([0, 1, 0, 1])
    good = torch.tensor([[4.0, 0.0], [0.0, 4.0], [4.0, 0.0], [0.0, 4.0]])
    bad = -good
    half = torch.tensor([[4.0, 0.0], [4.0, 0.0], [4.0, 0.0], [4.0, 0.0]])  # right on class 0 only
    chosen = nesbs_digits.forward_select([bad, half, good], y, 2)
    assert chosen[0] == 2 and len(set(chosen)) == 2  # the best first, distinct members


def test_bad_search_share_is_one_line(capsys) -> None:
    assert nesbs_digits.main(["--search-share", "1.5", "--seeds", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--search-share" in err[0]


def test_delta_takes_a_number_or_auto(capsys) -> None:
    assert nesbs_digits._delta("auto") == "auto"
    assert nesbs_digits._delta("-0.5") == -0.5
    with pytest.raises(SystemExit) as exit_:
        nesbs_digits.main(["--delta", "wide", "--seeds", "0"])
    assert exit_.value.code == 2 and "--delta" in capsys.readouterr().err


@pytest.mark.slow
def test_one_quick_seed_end_to_end(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    argv = [
        "--preset",
        "hard",
        "--seeds",
        "0",
        "--epochs",
        "1",
        "--quick",
        "--pool",
        "6",
        "--nes-rs-pool",
        "2",
    ]
    assert nesbs_digits.main([*argv, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    methods = doc["seeds"][0]["methods"]
    assert set(nesbs_digits.METHODS) <= set(methods) and doc["seeds"][0]["n_test"] == 899
    assert "McNemar" in capsys.readouterr().out
