"""The command line's torch threads when none is named, and the workers' share of them."""

from __future__ import annotations

import pytest
import torch

from nasforge.run import threads
from nasforge.run.executors import ProcessPoolExecutor


def test_one_thread_up_to_two_cpus_then_half_of_them() -> None:
    assert [threads.default_threads(n) for n in (1, 2, 3, 4, 16)] == [1, 1, 1, 2, 8]


def test_workers_share_the_threads() -> None:
    assert [threads.worker_threads(w, 8) for w in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]


def test_a_command_without_threads_uses_the_default(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NASFORGE_THREADS", raising=False)
    monkeypatch.setattr(threads, "usable_cpus", lambda: 4)
    try:
        cli("spaces", "--json", ok=True)
        assert torch.get_num_threads() == 2
        cli("--threads", "3", "spaces", "--json", ok=True)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(1)


def test_a_pool_divides_the_parents_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.set_num_threads(2)
    try:
        pool = ProcessPoolExecutor(workers=2)
        try:
            assert pool._threads == 1
        finally:
            pool.close()
    finally:
        torch.set_num_threads(1)
