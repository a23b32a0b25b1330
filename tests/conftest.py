"""Shared fixtures: single-threaded torch (two busy cores are slower with two threads), and
one way to run the CLI in-process (``cli``) for every test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cli_run import CliRun, run_cli


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli(*argv, ok=False)``: :func:`tests.cli_run.run_cli` with this test's ``capsys``."""

    def run(*argv: object, ok: bool = False) -> CliRun:
        return run_cli(capsys, *argv, ok=ok)

    return run
