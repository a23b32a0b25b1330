"""Shared fixtures: single-threaded torch (two busy cores are slower with two threads)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> None:
    torch.set_num_threads(1)
