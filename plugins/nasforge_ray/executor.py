"""Evaluate genotypes as Ray tasks, for users who outgrow one machine.

Ray is an optional extra (``pip install 'nasforge[ray]'``), imported only when this
executor is built. Results come back in submission order, like every executor, so a
strategy run on Ray asks and learns exactly what it would in-process and the journal
(and resume) behave the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nasforge.evaluator import Evaluator
from nasforge.executors import Executor, evaluate_safely
from nasforge.genotype import Genotype
from nasforge.optional import require
from nasforge.result import Result


class RayExecutor(Executor):
    """``workers`` evaluations in flight as Ray tasks.

    ``address`` joins an existing cluster (``"auto"`` or ``"ray://host:port"``); without it a
    local Ray instance is started with ``workers`` CPUs and shut down again by ``close``.
    The evaluator is shipped to the tasks once per batch, so it must pickle.
    """

    name = "ray"

    def __init__(self, workers: int = 2, address: str | None = None, **_: Any) -> None:
        self.ray = require("ray", extra="ray", feature="the Ray executor")
        self.workers = workers
        self._started = False
        if not self.ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                options["num_cpus"] = workers
            else:
                options["address"] = address
            self.ray.init(**options)
            self._started = True
        self._task = self.ray.remote(evaluate_safely)

    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype]) -> list[Result]:
        shipped = self.ray.put(evaluator)
        return list(self.ray.get([self._task.remote(shipped, g) for g in genotypes]))

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
            self._started = False
