"""Plugins installed as a user installs them: packages with an entry point in the ``nasforge``
group, pip-installed beside the first-party ones, found by the command line as any plugin is.

The faster tests of the same behaviour hand the registry the plugin objects
(:mod:`tests.core.test_plugin_event_faults`, :mod:`tests.core.test_name_clashes`); these
install real distributions (offline: no index, no dependencies, no build isolation) into a
fresh virtual environment and run ``python -m nasforge`` there:

* a package whose ``nasforge_trial_end``, ``nasforge_should_stop`` and
  ``nasforge_search_end`` raise: the README's search exits 0 with the best cell of a run
  without it, one stderr line per hook names the plugin, ``inspect`` shows the faults;
* a package registering a metric named ``synflow``: ``plugins`` exits 1 with the clash on
  stderr, ``trial:synflow`` and ``zerocost:synflow`` each score with their own, and the
  bare name keeps the first-party one (as the plugin reference says).
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from nasforge.kernel.registry import PLUGINS_ENV
from nasforge.run.plugin_faults import FAULTS_KEY

pytestmark = pytest.mark.slow

SEARCH = (
    "search", "--space", "nb201", "--strategy", "rea", "--evaluator", "nb201-table", "--budget-trials", "50",
)  # fmt: skip
HOOKS = ("nasforge_trial_end", "nasforge_should_stop", "nasforge_search_end")

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.0.1"

[project.entry-points.nasforge]
{plugin} = "{package}.plugin"
"""

BROKEN_HOOKS = '''\
"""A logger plugin with a bug in every event hook."""

from nasforge import hookimpl


@hookimpl
def nasforge_trial_end(experiment, trial):
    raise RuntimeError("the trial logger broke")


@hookimpl
def nasforge_should_stop(experiment, trial):
    raise ValueError("the stop rule broke")


@hookimpl
def nasforge_search_end(experiment, outcome):
    raise KeyError("the end logger broke")
'''

PARAMETER_SYNFLOW = '''\
"""Not synaptic flow: a network's parameter count, under the first-party name synflow."""

from nasforge import Metric, MetricInfo, hookimpl


class ParameterSynflow(Metric):
    name = "synflow"
    info = MetricInfo(name="synflow", needs_labels=False, needs_data=False, description="parameters")

    def score(self, model, batch, *, ctx):
        return float(sum(p.numel() for p in model.parameters()))


@hookimpl
def nasforge_register_metrics():
    return [ParameterSynflow]
'''


def _package(root: Path, dist: str, plugin: str, source: str) -> Path:
    """A distribution's source tree: its pyproject (one entry point) and its plugin module."""
    package = dist.replace("-", "_")
    tree = root / dist
    (tree / package).mkdir(parents=True)
    (tree / "pyproject.toml").write_text(
        PYPROJECT.format(dist=dist, plugin=plugin, package=package), encoding="utf-8"
    )
    (tree / package / "__init__.py").write_text("", encoding="utf-8")
    (tree / package / "plugin.py").write_text(source, encoding="utf-8")
    return tree


def _environment(root: Path, *packages: Path) -> Path:
    """A fresh venv that sees this interpreter's packages (nasforge and its first-party
    plugins among them), with ``packages`` pip-installed into it; its python.

    ``--system-site-packages`` gives a venv its base interpreter's packages, not those of
    the venv the tests may run in, so a ``.pth`` line adds this interpreter's site
    directories too (their own ``.pth`` files, an editable install's, processed)."""
    venv = root / "venv"
    make = [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv]
    subprocess.run(make, check=True)
    python = venv / "bin" / "python"
    own = subprocess.run(
        [python, "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    parents = [d for d in site.getsitepackages() if Path(d) != Path(own)]
    (Path(own) / "_nasforge_test_parent.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in parents), encoding="utf-8"
    )
    for package in packages:
        argv = ["install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", str(package)]
        subprocess.run([python, "-m", "pip", *argv], check=True, capture_output=True, timeout=300, cwd=root)
    return python


def _nasforge(python: Path | str, *argv: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m nasforge ARGV``, the plugins found only through entry points."""
    env = {k: v for k, v in os.environ.items() if k != PLUGINS_ENV}
    return subprocess.run(
        [str(python), "-m", "nasforge", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A venv with both test packages installed, and a directory to run in."""
    root = tmp_path_factory.mktemp("installed-plugins")
    hooks = _package(root / "src", "nasforge-trial-hooks", "trialhooks", BROKEN_HOOKS)
    clash = _package(root / "src", "nasforge-trial", "trial", PARAMETER_SYNFLOW)
    return _environment(root, hooks, clash), root


def _listed(python: Path, cwd: Path) -> dict[str, dict[str, object]]:
    shown = _nasforge(python, "plugins", "--json", cwd=cwd)
    return {p["name"]: p for p in json.loads(shown.stdout)["items"]}


def test_raising_event_hooks_of_an_installed_plugin_change_nothing(installed: tuple[Path, Path]) -> None:
    python, root = installed
    listed = _listed(python, root)
    assert listed["trialhooks"]["ok"] and "nb201" in listed, "installed beside the first-party plugins"
    plain = _nasforge(sys.executable, *SEARCH, "--run-dir", root / "plain", "--json", "-q", cwd=root)
    assert plain.returncode == 0, plain.stderr
    run = _nasforge(python, *SEARCH, "--run-dir", root / "hooks", "--json", "-q", cwd=root)
    assert run.returncode == 0, run.stderr
    got, expected = json.loads(run.stdout), json.loads(plain.stdout)
    assert got["best"] == expected["best"] and got["trials"] == expected["trials"] == 50
    assert got["reported_value"] == expected["reported_value"]
    warned = [line for line in run.stderr.splitlines() if "plugin 'trialhooks'" in line]
    assert len(warned) == 3, run.stderr
    for hook, line in zip(HOOKS, warned, strict=True):
        assert f"its {hook} hook raised" in line, line
    assert "plugin '" not in plain.stderr
    assert [(f["plugin"], f["hook"]) for f in got[FAULTS_KEY]] == [("trialhooks", h) for h in HOOKS]
    shown = _nasforge(python, "inspect", root / "hooks", "--json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)[FAULTS_KEY] == got[FAULTS_KEY]
    table = _nasforge(python, "inspect", root / "hooks", cwd=root)
    assert "plugin faults" in table.stdout and "trialhooks" in table.stdout


def _synflow(python: Path, metric: str, cwd: Path) -> float:
    run = _nasforge(
        python, "score", "--space", "nb201", "-m", metric, "--sample", "2", "--json", "--no-cache", cwd=cwd
    )
    assert run.returncode == 0, run.stderr
    (row, *_) = json.loads(run.stdout)["rows"]
    return float(row["scores"]["synflow"]["value"])


def test_two_installed_plugins_registering_synflow(installed: tuple[Path, Path]) -> None:
    python, root = installed
    listing = _nasforge(python, "plugins", cwd=root)
    assert listing.returncode == 1
    (line,) = [line for line in listing.stderr.splitlines() if "synflow" in line]
    assert "metric 'synflow' is registered by plugins 'zerocost' and 'trial'" in line
    assert "trial:synflow" in line
    document = _nasforge(python, "plugins", "--json", cwd=root)
    assert document.returncode == 1
    (clash,) = json.loads(document.stdout)["clashes"]
    assert clash["qualified"] == ["zerocost:synflow", "trial:synflow"]
    assert clash["default"] == "zerocost:synflow"
    theirs, ours = _synflow(python, "trial:synflow", root), _synflow(python, "zerocost:synflow", root)
    assert theirs < 1e7 < ours, "a parameter count against synaptic flow"
    assert _synflow(python, "synflow", root) == ours, "a bare name keeps meaning the first-party one"
