"""The build backend's editable install is a path file that static tools read.

``pip install -e .`` (the README's set-up) goes through ``build_support/editable_paths.py``:
setuptools' editable wheel with its import hook (which mypy cannot follow) replaced by a
``.pth`` naming ``sdk/`` and ``plugins/``. Built here from a copy of the project's
configuration around two one-file packages, outside the checkout; CI checks the real
install with ``mypy --strict examples/host_program.py`` run from outside the checkout.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path) -> Path:
    """The checkout's pyproject, README and backend around a package in each folder."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, project / name)
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "build_support", project / "build_support", ignore=skip)
    for package in ("sdk/nasforge", "plugins/nasforge_nb201"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text('"""A stand-in."""\n', encoding="utf-8")
    return project


def _build_editable(project: Path, settings: dict[str, str] | None = None) -> dict[str, bytes]:
    """The entries of the editable wheel the backend builds in ``project`` (as pip calls it:
    a process whose working directory is the project, the backend found on backend-path)."""
    script = (
        "import json, sys; import editable_paths as backend; "
        "print(backend.build_editable('dist', json.loads(sys.argv[1]) or None))"
    )
    env = dict(os.environ, PYTHONPATH=str(project / "build_support"))
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(settings or {})],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    wheel = project / "dist" / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as opened:
        return {info.filename: opened.read(info) for info in opened.infolist()}


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


@pytest.mark.filterwarnings("ignore")
def test_the_editable_wheel_names_the_package_folders(tmp_path: Path) -> None:
    project = _project(tmp_path)
    entries = _build_editable(project)
    (pth,) = [n for n in entries if n.endswith(".pth")]
    assert entries[pth].decode("utf-8").splitlines() == [
        str((project / "sdk").resolve()),
        str((project / "plugins").resolve()),
    ]
    assert not [n for n in entries if n.endswith("_finder.py")], "no import hook left"
    (record,) = [n for n in entries if n.endswith(".dist-info/RECORD")]
    rows = [line.split(",") for line in entries[record].decode("utf-8").splitlines()]
    assert sorted(row[0] for row in rows) == sorted(entries)
    for name, digest, size in rows:
        if name != record:
            assert digest == f"sha256={_digest(entries[name])}" and int(size) == len(entries[name]), name
    points = next(n for n in entries if n.endswith(".dist-info/entry_points.txt"))
    assert "nasforge_nb201.plugin" in entries[points].decode("utf-8"), "entry points kept"


@pytest.mark.filterwarnings("ignore")
def test_a_mode_asked_for_is_setuptools_own(tmp_path: Path) -> None:
    entries = _build_editable(_project(tmp_path), {"editable_mode": "strict"})
    (pth,) = [n for n in entries if n.endswith(".pth")]
    assert "__editable__" in entries[pth].decode("utf-8"), "strict mode's link folder, untouched"
