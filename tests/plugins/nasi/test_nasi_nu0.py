"""ν₀ rules, each named for what it is: eq. 40's mean (NASI-FIX's ν), a factor on it (a
"relatively large" ν₀, NASI-ADA's rule), or the absolute values the paper used in
NAS-Bench-1Shot1 (1000) and DARTS (500); "paper" is the mode's rule."""

from __future__ import annotations

import pytest

from nasforge.kernel.errors import NasforgeError
from nasforge.tools.cli.options import parse_options
from nasforge_nasi import Nasi
from nasforge_nasi.config import ABSOLUTE_NU0, RELATIVE_FACTOR, NasiConfig, paper_nu0
from nasforge_nasi.strategy import make_config
from tests.plugins.nasi.tiny import TINY


def test_the_default_is_the_papers_rule_for_each_mode() -> None:
    assert NasiConfig().nu0 == "paper"
    assert paper_nu0("fix") == "eq40-mean", "NASI-FIX's ν is eq. 40's mean (App. B.1)"
    assert paper_nu0("ada") == "eq40-relative", "a relatively large ν₀ (App. B.1)"
    assert NasiConfig(mode="ada", mu=1.0).nu0_rule() == (None, RELATIVE_FACTOR, "eq40-relative (x5)")
    assert NasiConfig(mode="fix").nu0_rule() == (None, 1.0, "eq40-mean")


@pytest.mark.slow
@pytest.mark.parametrize("rule", sorted(ABSOLUTE_NU0))
def test_the_papers_absolute_values_start_ada_without_calibrating(nb201, digits, rule) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", mu=1.0, nu0=rule, **TINY).produced_by["run"]
    value = ABSOLUTE_NU0[rule]
    assert run["nu0"] == value and run["nus"][0] == value and run["nu0_rule"] == rule
    assert run["calibration"] == [], "an absolute ν₀ needs no eq. 40 sample"
    for t in range(1, len(run["nus"])):
        assert run["nus"][t] == pytest.approx((value + sum(run["proxies"][:t])) / (t + 1))


@pytest.mark.slow
def test_ada_under_the_paper_rule_starts_relatively_large(nb201, digits) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", mu=1.0, **TINY).produced_by["run"]
    assert len(run["calibration"]) == TINY["calibration_samples"]
    mean = sum(run["calibration"]) / len(run["calibration"])
    assert run["nu0"] == pytest.approx(RELATIVE_FACTOR * mean) and run["nus"][0] == run["nu0"]
    factor = Nasi().fit(nb201, digits, mode="ada", mu=1.0, nu0_factor=2.0, **TINY).produced_by["run"]
    assert factor["nu0"] == pytest.approx(2.0 * mean)


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["eq40-mean", None])
def test_eq40_mean_stays_reachable_in_either_mode(nb201, digits, spelling) -> None:
    run = Nasi().fit(nb201, digits, mode="ada", mu=1.0, nu0=spelling, **TINY).produced_by["run"]
    assert len(run["calibration"]) == TINY["calibration_samples"]
    assert run["nu0"] == pytest.approx(sum(run["calibration"]) / len(run["calibration"]))
    assert run["nus"][0] == run["nu0"] and run["nu0_rule"] == "eq40-mean"


@pytest.mark.slow
def test_fix_under_the_paper_rule_calibrates_and_a_number_is_used_as_given(nb201, digits) -> None:
    fix = Nasi().fit(nb201, digits, **TINY).produced_by["run"]
    assert fix["nu0_rule"] == "eq40-mean" and len(fix["calibration"]) == TINY["calibration_samples"]
    given = Nasi().fit(nb201, digits, mode="ada", nu0=42.0, **TINY).produced_by["run"]
    assert (given["nu0"], given["nu0_rule"], given["calibration"]) == (42.0, "given", [])


def test_the_command_line_spelling_parses() -> None:
    assert make_config(parse_options(["nu0=eq40-mean"])).nu0 == "eq40-mean"
    assert make_config(parse_options(["nu0=paper"])).nu0 == "paper"
    assert make_config(parse_options(["nu0=nb1shot1-absolute"])).nu0 == "nb1shot1-absolute"
    assert make_config(parse_options(["nu0=500"])).nu0 == 500


@pytest.mark.parametrize("bad", ["large", "eq40", -1.0, 0, True, float("inf")])
def test_bad_nu0_is_one_line(bad) -> None:
    with pytest.raises(NasforgeError, match="nu0"):
        make_config({"nu0": bad})


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_bad_nu0_factor_is_one_line(bad) -> None:
    with pytest.raises(NasforgeError, match="nu0_factor"):
        make_config({"nu0_factor": bad})
