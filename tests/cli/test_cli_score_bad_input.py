"""`nasforge score` takes bad options in one line (issue 8: found by the fuzz benchmark)."""

from __future__ import annotations

import pytest
import torch

from nasforge.kernel.device import DeviceError, resolve_device

CELL = "|nor_conv_3x3~0|+|avg_pool_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|avg_pool_3x3~1|avg_pool_3x3~2|"
TOY = "relu_linear-skip-relu_linear-relu_linear"
SCORE = ["score", "-m", "params", "--no-cache", "-q"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--space", "toy", "--build-option", "c=4", "--", TOY], "cannot build the toy network"),
        (["--space", "toy", "--build-option", "width=x", "--", TOY], "cannot build the toy network"),
        (["--space", "toy", "--build-option", "width=-1", "--", TOY], "cannot build the toy network"),
        (["--space", "nb201", "--labels", "", "--", CELL], "labels must be one of"),
        (["--space", "nb201", "--device", "", "--", CELL], "is not a device"),
        (["--space", "nb201", "--device", "xla", "--", CELL], "not supported"),
        (["--space", "nb201", "--seed", str(2**64), "--", CELL], "--seed"),
        (["--space", "nb201", "--sample", "-1"], "--sample"),
    ],
)
def test_bad_score_options_are_one_line(cli, args, needle) -> None:
    cli(*SCORE, *args).assert_one_line_error(needle)


def test_cuda_where_there_is_none_is_one_line(cli, monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cli(*SCORE, "--space", "nb201", "--device", "cuda", "--", CELL).assert_one_line_error(
        "CUDA is not available"
    )


@pytest.mark.parametrize("device", ["", "gpu0", "xla", "cuda:-1"])
def test_resolve_device_refuses_what_is_no_usable_device(device) -> None:
    with pytest.raises(DeviceError):
        resolve_device(device)


def test_resolve_device_keeps_the_cpu() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("cpu:1") == torch.device("cpu"), "a CPU index names the one CPU"


def test_score_on_an_indexed_cpu_scores_as_on_the_cpu(cli) -> None:
    """Was a traceback: the metrics' device check compared a network on ``cpu`` with ``cpu:1``."""
    argv = ("score", "--space", "nb201", "--no-cache", "--batch-size", "4", "-m", "snip", "--json")
    tiny = ("--build-option", "C=4", "--build-option", "N=1", "--", CELL)
    indexed = cli(*argv, "--device", "cpu:1", *tiny, ok=True).json()
    plain = cli(*argv, "--device", "cpu", *tiny, ok=True).json()
    assert indexed["rows"][0]["scores"]["snip"]["value"] == plain["rows"][0]["scores"]["snip"]["value"]
