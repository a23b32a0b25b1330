"""ν₀ by the paper's rule (issue 11): NASI-ADA starts from a relatively large ν₀ (the
paper's 1000 with μ = 1, 500 with μ = 2); eq. 40's mean stays reachable as "eq40-mean"."""

from __future__ import annotations

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.tools.cli.options import parse_options
from nasforge_nasi import Nasi
from nasforge_nasi.config import PAPER_ADA_NU0, NasiConfig, paper_nu0
from nasforge_nasi.strategy import make_config
from tests.plugins.nasi.tiny import TINY


def test_the_default_is_the_papers_rule_for_each_mode() -> None:
    assert NasiConfig().nu0 == "paper"
    assert paper_nu0("ada", 1.0)[0] == PAPER_ADA_NU0["small"] == 1000.0
    assert paper_nu0("ada", 2.0)[0] == PAPER_ADA_NU0["large"] == 500.0
    assert paper_nu0("fix", 2.0)[0] is None, "NASI-FIX's ν is eq. 40's mean (App. B.1)"
    assert NasiConfig(mode="ada", mu=1.0).nu0_rule() == (1000.0, "paper-ada: small-complexity nu0 = 1000")


def test_ada_starts_from_the_papers_nu0_without_calibrating(nb201, digits) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", mu=1.0, **TINY).produced_by["run"]
    assert run["nu0"] == 1000.0 and run["nus"][0] == 1000.0
    assert run["calibration"] == [], "the paper's ν₀ needs no eq. 40 sample"
    assert run["nu0_rule"].startswith("paper-ada")
    for t in range(1, len(run["nus"])):
        assert run["nus"][t] == pytest.approx((1000.0 + sum(run["proxies"][:t])) / (t + 1))
    assert Nasi().fit(nb201, digits, mode="ada", mu=2.0, **TINY).produced_by["run"]["nu0"] == 500.0


@pytest.mark.parametrize("spelling", ["eq40-mean", None])
def test_eq40_mean_stays_reachable_in_either_mode(nb201, digits, spelling) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", mu=1.0, nu0=spelling, **TINY).produced_by["run"]
    assert len(run["calibration"]) == TINY["calibration_samples"]
    assert run["nu0"] == pytest.approx(sum(run["calibration"]) / len(run["calibration"]))
    assert run["nus"][0] == run["nu0"] and run["nu0_rule"] == "eq40-mean"


def test_fix_under_the_paper_rule_calibrates_and_a_number_is_used_as_given(nb201, digits) -> None:
    fix = Nasi().fit(nb201, digits, **TINY).produced_by["run"]
    assert (
        fix["nu0_rule"] == "paper-fix: eq40-mean" and len(fix["calibration"]) == TINY["calibration_samples"]
    )
    given = Nasi().fit(nb201, digits, mode="ada", nu0=42.0, **TINY).produced_by["run"]
    assert (given["nu0"], given["nu0_rule"], given["calibration"]) == (42.0, "given", [])


def test_the_command_line_spelling_parses() -> None:
    assert make_config(parse_options(["nu0=eq40-mean"])).nu0 == "eq40-mean"
    assert make_config(parse_options(["nu0=paper"])).nu0 == "paper"
    assert make_config(parse_options(["nu0=500"])).nu0 == 500


@pytest.mark.parametrize("bad", ["large", "eq40", -1.0, 0, True, float("inf")])
def test_bad_nu0_is_one_line(bad) -> None:
    with pytest.raises(NasforgeError, match="nu0"):
        make_config({"nu0": bad})
