"""Shared fixtures: single-threaded torch (two busy cores are slower with two threads), one
way to run the CLI in-process (``cli``) for every test, the toy space registered, and a
score cache of the session's own (``XDG_CACHE_HOME``): strategies that rank a pool read
and write the user's shared cache by default, and a test must neither read a developer's
scores nor leave its own there.

The toy space and evaluators of the conformance kits are a plugin module that nothing
registers by default; the tests load it as a user would (``NASFORGE_PLUGINS``), set here,
before any registry is made, so the CLI run in this process and in subprocesses alike
knows ``--space toy``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import torch

from nasforge.kernel.registry import PLUGINS_ENV
from tests.cli_run import CliRun, run_cli

TOY_PLUGIN = "nasforge.kernel.testing.toy"
_PLUGINS = [name for name in os.environ.get(PLUGINS_ENV, "").split(",") if name]
if TOY_PLUGIN not in _PLUGINS:
    os.environ[PLUGINS_ENV] = ",".join([*_PLUGINS, TOY_PLUGIN])


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli(*argv, ok=False)``: :func:`tests.cli_run.run_cli` with this test's ``capsys``."""

    def run(*argv: object, ok: bool = False) -> CliRun:
        return run_cli(capsys, *argv, ok=ok)

    return run
