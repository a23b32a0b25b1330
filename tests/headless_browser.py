"""A real headless Chromium for the tests that check a static page renders (insight, report).

CI installs Chromium from the distribution and sets ``NASFORGE_REQUIRE_BROWSER=1``, so a
missing browser fails there; elsewhere such a test is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str:
    """The first headless-capable browser on PATH (fails or skips the test when none is)."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("NASFORGE_REQUIRE_BROWSER") == "1":
        pytest.fail(
            f"NASFORGE_REQUIRE_BROWSER=1 but no headless browser on PATH (tried {', '.join(BROWSERS)})"
        )
    pytest.skip("no Chromium on PATH (apt-get install chromium); NASFORGE_REQUIRE_BROWSER=1 makes this fail")


def headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``browser`` headless with a private profile and a virtual-time budget for scripts."""
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    argv += [
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
    ]
    return subprocess.run([*argv, *args], capture_output=True, timeout=120, check=False)
