"""``nasforge export RUN_DIR`` builds the network the run evaluated: the network options the
search was given (``--build-option``, journaled in its spec) come with the run, and the
command's own ``--build-option`` goes over them."""

from __future__ import annotations

import json

import onnx
import pytest


def _stem_channels(path: str) -> set[int]:
    """Output channels of every 3x3 convolution reading the 3-channel input."""
    model = onnx.load(path)
    return {int(t.dims[0]) for t in model.graph.initializer if list(t.dims[1:]) == [3, 3, 3]}


@pytest.mark.slow
def test_a_run_directory_exports_with_the_runs_build_options(cli, tmp_path) -> None:
    run_dir = tmp_path / "run"
    cli(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "nb201-table",
        "--budget-trials", "2", "-q", "--run-dir", run_dir, "--build-option", "C=4", "--build-option", "N=1",
        ok=True,
    )  # fmt: skip
    out = cli("export", run_dir, "--out", tmp_path / "e", "--json", ok=True)
    result = json.loads(out.out)
    assert result["build"] == {"C": 4, "N": 1, "in_channels": 3}  # a table's run: CIFAR's 3 channels
    assert _stem_channels(result["onnx"]) == {4}
    over = cli("export", run_dir, "--out", tmp_path / "e2", "--json", "--build-option", "C=6", ok=True)
    result = json.loads(over.out)
    assert result["build"] == {"C": 6, "N": 1, "in_channels": 3}  # the command's option over the run's
    assert _stem_channels(result["onnx"]) == {6}


def test_a_run_given_no_build_options_exports_as_before(cli, tmp_path) -> None:
    run_dir = tmp_path / "run"
    cli(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "nb201-table",
        "--budget-trials", "1", "-q", "--run-dir", run_dir, ok=True,
    )  # fmt: skip
    result = json.loads(cli("export", run_dir, "--out", tmp_path / "e", "--json", "--no-onnx", ok=True).out)
    assert "build" not in result
