"""The example third-party plugin, installed as a user would install it, and the CLI that sees it.

Installed into a private target directory (the test environment stays clean) and reached
through ``PYTHONPATH``, so the CLI discovers it by its entry point like any other plugin.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_plugin"


def install_example(target: Path) -> Path:
    """``pip install --target TARGET`` the example (no dependencies: nasforge is installed).

    Installed from a copy beside ``target``: building in place would leave ``build/`` and
    ``*.egg-info`` in the checkout's ``examples/`` folder."""
    source = example_copy(target)
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    argv = ["install", "--quiet", "--no-deps", "--no-build-isolation", "--target", str(target), str(source)]
    subprocess.run([sys.executable, "-m", "pip", *argv], check=True, capture_output=True, timeout=300)
    return target


def example_copy(installed: Path) -> Path:
    """Where :func:`install_example` copied the example to build it (outside the checkout)."""
    return installed.parent / f"{installed.name}-source"


def run_nasforge(installed: Path, *args: str, threads: int | None = None) -> subprocess.CompletedProcess:
    """``python -m nasforge ARGS`` in a subprocess that sees the installed example."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")]))
    if threads is not None:
        env["NASFORGE_THREADS"] = str(threads)
    return subprocess.run(
        [sys.executable, "-m", "nasforge", *args], capture_output=True, text=True, env=env, timeout=300
    )
