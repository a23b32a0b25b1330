"""Random cells export through the CLI by genotype string and pass the ONNX parity check.

Issue 8, "must show": 200 NB201 and 20 DARTS cells (the slow test; also the figure
``benchmarks/export_parity.py`` prints), and a seeded subset in the default suite. The
test drives the benchmark's own code, so the printed figure is what is tested.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from nasforge.tools.export.parity import DEFAULT_RTOL

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "export_parity.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("export_parity_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # attrs needs the module registered to resolve hints
    spec.loader.exec_module(module)
    return module


def _assert_all_pass(sweep, counts: dict[str, int]) -> None:
    failed = [f"{o.space} {o.text}: {o.error}" for o in sweep.outcomes if not o.passed]
    assert not failed, failed
    assert len(sweep.outcomes) == sum(counts.values())
    assert {o.space for o in sweep.outcomes} == set(counts)
    assert all(o.max_rel_error is not None for o in sweep.outcomes)
    assert sweep.worst_rel < DEFAULT_RTOL


def test_sampled_cells_are_distinct_and_seeded(bench) -> None:
    first = bench.sample_cells("nb201", 30, seed=0)
    assert len(set(first)) == 30
    assert first == bench.sample_cells("nb201", 30, seed=0)
    assert first != bench.sample_cells("nb201", 30, seed=1)


@pytest.mark.slow
def test_seeded_subset_exports_through_the_cli(bench, tmp_path) -> None:
    counts = {"nb201": 15, "darts": 2}
    sweep = bench.run_sweep(counts, seed=0, workdir=tmp_path)
    _assert_all_pass(sweep, counts)
    assert list(tmp_path.iterdir()) == []  # every export lived in the sweep's temporary folder
    assert sweep.summary().startswith("17/17 passed")


@pytest.mark.slow
def test_200_nb201_and_20_darts_cells_export_through_the_cli(bench, tmp_path) -> None:
    counts = {"nb201": 200, "darts": 20}
    _assert_all_pass(bench.run_sweep(counts, seed=0, workdir=tmp_path), counts)
