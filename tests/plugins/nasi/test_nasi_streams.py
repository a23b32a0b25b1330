"""Eq. 40's calibration has a stream of its own, so every ν₀ rule searches the same samples.

NASI's T samples are taken at α₀ = 0 (uniform architectures) on batches from the search's
generator; ν only weighs their gradients. If the calibration drew from that generator, a
rule that calibrates (eq40-mean) and one that does not (a given ν₀) would search different
architecture and batch streams, and a comparison of rules would compare streams too.
"""

from __future__ import annotations

import pytest

from nasforge_nasi import Nasi
from nasforge_nasi.config import RELATIVE_FACTOR
from tests.plugins.nasi.tiny import TINY


def _run(nb201, digits, **options):
    out = Nasi(seed=3).fit(nb201, digits, mode="ada", mu=1.0, **{**TINY, **options})
    return [t.genotype for t in out.history], out.produced_by["run"]


@pytest.mark.slow
def test_a_calibrating_rule_and_a_given_nu0_search_identical_streams(nb201, digits) -> None:
    calibrated, cal_run = _run(nb201, digits, nu0="eq40-mean")
    given, given_run = _run(nb201, digits, nu0=42.0)
    assert len(cal_run["calibration"]) == TINY["calibration_samples"] and given_run["calibration"] == []
    assert calibrated == given, "the sampled architectures must not depend on the nu0 rule"
    assert cal_run["proxies"] == given_run["proxies"], "nor the batches they were scored on"


def test_the_relative_rule_is_a_factor_on_the_same_calibration(nb201, digits) -> None:
    _, mean = _run(nb201, digits, nu0="eq40-mean")
    _, relative = _run(nb201, digits, nu0="eq40-relative")
    assert relative["calibration"] == mean["calibration"]
    assert relative["nu0"] == pytest.approx(RELATIVE_FACTOR * mean["nu0"])
    assert relative["nu0_rule"] == f"eq40-relative (x{RELATIVE_FACTOR:g})"
    assert relative["proxies"] == mean["proxies"]


@pytest.mark.slow
def test_the_calibration_stream_is_a_function_of_the_seed(nb201, digits) -> None:
    _, first = _run(nb201, digits, nu0="eq40-mean")
    _, again = _run(nb201, digits, nu0="eq40-mean")
    assert first["calibration"] == again["calibration"]
    other = Nasi(seed=4).fit(nb201, digits, mode="ada", mu=1.0, nu0="eq40-mean", **TINY)
    assert other.produced_by["run"]["calibration"] != first["calibration"]
