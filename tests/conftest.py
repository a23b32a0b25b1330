"""Shared fixtures: single-threaded torch (two busy cores are slower with two threads), one
way to run the CLI in-process (``cli``) for every test, the toy space registered, and a
score cache of the session's own (``XDG_CACHE_HOME``): strategies that rank a pool read
and write the user's shared cache by default, and a test must neither read a developer's
scores nor leave its own there.

The suite leaves the checkout as it found it: hypothesis keeps its example database in a
temporary directory (not ``.hypothesis/`` where the tests run), and when the session ends
``git status --ignored`` is compared with its state when the session began: anything new
(a run directory, a build, a cache written into the checkout) fails the session, naming
the paths. Python's own bytecode caches (``__pycache__``) are not counted.

The toy space and evaluators of the conformance kits are a plugin module that nothing
registers by default; the tests load it as a user would (``NASFORGE_PLUGINS``), set here,
before any registry is made, so the CLI run in this process and in subprocesses alike
knows ``--space toy``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

from nasforge.kernel.registry import PLUGINS_ENV
from tests.cli_run import CliRun, run_cli

TOY_PLUGIN = "nasforge.kernel.testing.toy"
# the checkout is importable (``tests.*``) in every process the suite starts, as pyproject's
# ``pythonpath`` makes it in this one: a Ray worker unpickles evaluators defined in tests
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)
# the command line's default threads depend on the machine: the suite runs every CLI
# invocation, in this process and in subprocesses, on one thread as it runs itself
os.environ.setdefault("NASFORGE_THREADS", "1")
_PLUGINS = [name for name in os.environ.get(PLUGINS_ENV, "").split(",") if name]
if TOY_PLUGIN not in _PLUGINS:
    os.environ[PLUGINS_ENV] = ",".join([*_PLUGINS, TOY_PLUGIN])

#: hypothesis's home (its example database) for this session, never ``.hypothesis/`` in
#: the directory the tests run from; removed when the session's process ends.
_HYPOTHESIS_HOME = Path(tempfile.mkdtemp(prefix="nasforge-hypothesis-"))
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
set_hypothesis_home_dir(_HYPOTHESIS_HOME)
settings.register_profile(
    "nasforge-tests", database=DirectoryBasedExampleDatabase(_HYPOTHESIS_HOME / "examples")
)
settings.load_profile("nasforge-tests")

#: The checkout the suite runs in (None outside a git checkout: nothing to compare).
ROOT = Path(__file__).resolve().parents[1]
_CHECKOUT_KEY = pytest.StashKey[set[str] | None]()


def checkout_entries(root: Path = ROOT) -> set[str] | None:
    """``git status --ignored --porcelain`` of the checkout, one entry a line, without
    bytecode caches; None where git or the checkout is not there."""
    try:
        done = subprocess.run(
            ["git", "status", "--ignored", "--porcelain", "--untracked-files=all"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return {line for line in done.stdout.splitlines() if line.strip() and "__pycache__" not in line}


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_CHECKOUT_KEY] = checkout_entries()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session when it left something new in the checkout."""
    before = session.config.stash.get(_CHECKOUT_KEY, None)
    after = checkout_entries() if before is not None else None
    if before is None or after is None:
        return
    new = sorted(after - before)
    if not new:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "the suite wrote into the checkout", red=True)
        for line in new:
            reporter.write_line(f"  {line}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))


@pytest.fixture(autouse=True, scope="session")
def _run_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The session's working directory is a temporary one: what a command writes by
    default relative to where it runs (``runs/...``, ``export/``, ``report.html``) lands
    there, not in the checkout."""
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(before)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli(*argv, ok=False)``: :func:`tests.cli_run.run_cli` with this test's ``capsys``."""

    def run(*argv: object, ok: bool = False) -> CliRun:
        return run_cli(capsys, *argv, ok=ok)

    return run
