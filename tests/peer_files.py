"""Files outside the repository that a few tests compare against: the peer reference code and
the benchmark's source table, in the folder ``shared/`` beside the checkout.

Such a test is marked ``peer``: excluded by default (a user's clone has no ``shared/``),
run with ``python -m pytest -m peer``, and there it fails, never skips, where the folder
is missing, so a run that was meant to check against the reference cannot pass silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def peer_path(*parts: str) -> Path:
    """``shared/PARTS``, which a test marked ``peer`` needs: a failure where it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: tests marked 'peer' need the shared/ folder beside the checkout")
    return path
