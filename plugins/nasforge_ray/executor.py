"""Evaluate genotypes as Ray tasks, for users who outgrow one machine.

Ray is an optional extra (``pip install 'nasforge[ray]'``), imported only when this
executor is built. A batch (``map``) comes back in submission order, like every
executor's, so a synchronous run on Ray asks and learns exactly what it would
in-process and its journal (and resume) is the same; an asynchronous run
(``submit``/``next_done``) takes results as they finish instead.

Each trial is one Ray task asking for ``trial_cpus`` CPUs and ``trial_gpus`` GPUs, so
Ray places it where those are free. Ray's own task retries are off: a task whose worker
died (``WorkerCrashedError``, a lost node) is resubmitted here, up to ``retries`` times,
so each retry is recorded in the trial's ``metadata["retries"]`` and journaled.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from collections.abc import Sequence
from typing import Any

from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.executor_contract import (
    DEFAULT_RETRIES,
    Done,
    Executor,
    collect_in_order,
    evaluate_safely,
    new_ticket,
    with_retries,
    worker_died,
)
from nasforge.kernel.fidelity import Proposal
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.optional import require
from nasforge.kernel.result import Result

logger = logging.getLogger("nasforge.ray")

#: Seconds to wait for a cluster's address to accept a connection before giving up
#: (Ray itself retries an unreachable address for minutes, silently).
CONNECT_TIMEOUT = 5.0
#: Ray's switch for token authentication ("token" or "disabled").
AUTH_MODE = "RAY_AUTH_MODE"


class RayExecutor(Executor):
    """``workers`` evaluations in flight as Ray tasks.

    ``address`` joins an existing cluster (``"host:port"`` of a ``ray start --head``,
    ``"auto"``, or ``"ray://host:port"`` for Ray Client); without it (and without a
    ``RAY_ADDRESS`` in the environment) a local Ray instance is started with enough CPUs
    for ``workers`` trials and shut down again by ``close``. Joining leaves the cluster
    running: ``close`` only disconnects. When Ray is already initialised in this process
    (a notebook, a test), that session is used as it is.

    ``trial_cpus``/``trial_gpus`` are each task's Ray resources (fractions allowed). The
    evaluator is shipped to the cluster once and shared by the tasks, so it must pickle.
    """

    name = "ray"
    #: The command line's names of this executor's options (``--ray-address HOST:PORT`` is
    #: ``--executor-option address=HOST:PORT``; the Python API's ``ray_address=``).
    flags = {"--ray-address": "address", "--trial-cpus": "trial_cpus", "--trial-gpus": "trial_gpus"}

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        trial_cpus: float = 1.0,
        trial_gpus: float = 0.0,
        retries: int = DEFAULT_RETRIES,
    ) -> None:
        check_resources(trial_cpus, trial_gpus)  # before Ray starts: a bad value costs nothing
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        if self.address is not None:
            use_cluster_token()  # before Ray is imported: it reads the mode once, on import
        self.ray = require("ray", extra="ray", feature="the Ray executor")
        if self.address is None and not self.ray.is_initialized():
            check_local_gpus(float(trial_gpus))  # a local instance has this machine's GPUs only
        self.workers = workers
        self.retries = retries
        self.trial_cpus, self.trial_gpus = float(trial_cpus), float(trial_gpus)
        self._started = False
        if not self.ray.is_initialized():
            self._init()
        self._check_resources()
        self._task = self.ray.remote(evaluate_safely).options(
            num_cpus=self.trial_cpus, num_gpus=self.trial_gpus, max_retries=0
        )
        self._shipped: tuple[Evaluator, Any] | None = None
        #: In flight: Ray object ref -> ticket; and each ticket's job.
        self._refs: dict[Any, int] = {}
        self._jobs: dict[int, _RayJob] = {}

    def _init(self) -> None:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.address is None:
            options["num_cpus"] = max(1, math.ceil(self.workers * self.trial_cpus))
        else:
            check_reachable(self.address)
            options["address"] = self.address
        try:
            self.ray.init(**options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            if self.address is None:
                raise NasforgeError(f"cannot start a local Ray instance: {_first_line(exc)}") from exc
            raise NasforgeError(
                f"cannot join the Ray cluster at {self.address}: {_first_line(exc)} (a cluster with token "
                f"authentication needs {AUTH_MODE}=token and its token, e.g. in ~/.ray/auth_token)"
            ) from exc
        self._started = True

    def _check_resources(self) -> None:
        """A task asking for more than any node has waits for ever: refused for a local
        instance (it cannot grow); only warned about on a cluster, which may autoscale."""
        total = self.ray.cluster_resources()
        short = [
            f"{asked:g} {kind} per trial, the cluster has {total.get(kind, 0):g}"
            for kind, asked in (("CPU", self.trial_cpus), ("GPU", self.trial_gpus))
            if asked > total.get(kind, 0)
        ]
        if not short:
            return
        message = "; ".join(short)
        if self.address is None and self._started:
            raise NasforgeError(f"the Ray executor cannot place a trial: {message}")
        logger.warning("trials may wait for resources (an autoscaling cluster adds them): %s", message)

    # --- evaluation -------------------------------------------------------------------
    def map(self, evaluator: Evaluator, genotypes: Sequence[Genotype | Proposal]) -> list[Result]:
        return collect_in_order(self, evaluator, genotypes)

    def submit(self, evaluator: Evaluator, g: Genotype | Proposal) -> int:
        ticket = new_ticket()
        self._jobs[ticket] = _RayJob(evaluator, g, time.perf_counter())
        self._launch(ticket)
        return ticket

    def next_done(self) -> Done:
        while True:
            if not self._refs:
                raise LookupError("no evaluation in flight")
            ready, _ = self.ray.wait(list(self._refs), num_returns=1)
            ref = ready[0]
            ticket = self._refs.pop(ref)
            job = self._jobs[ticket]
            try:
                result = self.ray.get(ref)
            except self.ray.exceptions.RayError as exc:  # the task's worker (or node) died
                job.reruns += 1
                if job.reruns > self.retries:
                    del self._jobs[ticket]
                    return Done(ticket, worker_died(type(exc).__name__, job.reruns), job.elapsed())
                logger.warning("trial's Ray worker died (%s); running it again", type(exc).__name__)
                self._launch(ticket)
                continue
            del self._jobs[ticket]
            return Done(ticket, with_retries(result, job.reruns), job.elapsed())

    def _launch(self, ticket: int) -> None:
        job = self._jobs[ticket]
        if self._shipped is None or self._shipped[0] is not job.evaluator:
            self._shipped = (job.evaluator, self.ray.put(job.evaluator))
        self._refs[self._task.remote(self._shipped[1], job.genotype)] = ticket

    def close(self) -> None:
        for ref in list(self._refs):  # a run that ends early leaves no task running
            try:
                self.ray.cancel(ref, force=True)
            except Exception as exc:  # noqa: BLE001 - closing must not raise over the real error
                logger.debug("cancelling a Ray task: %s", exc)
        self._refs.clear()
        self._jobs.clear()
        self._shipped = None
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
            self._started = False


class _RayJob:
    """A submission, until it is handed back (its retries counted)."""

    __slots__ = ("evaluator", "genotype", "reruns", "started")

    def __init__(self, evaluator: Evaluator, genotype: Genotype | Proposal, started: float) -> None:
        self.evaluator, self.genotype, self.started = evaluator, genotype, started
        self.reruns = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def check_resources(trial_cpus: float, trial_gpus: float) -> None:
    """Each trial's resources, refused in one line where no task could ask for them."""
    if not float(trial_cpus) > 0:
        raise OptionError(f"trial CPUs must be > 0, got {float(trial_cpus):g}")
    if not float(trial_gpus) >= 0:
        raise OptionError(f"trial GPUs must be >= 0, got {float(trial_gpus):g}")


def check_local_gpus(trial_gpus: float) -> None:
    """Refuse GPUs per trial that this machine does not have, before a local Ray instance
    starts (it would start, log its own lines, and only then find the trial unplaceable).
    The GPUs counted are torch's, which every trial computes with."""
    if trial_gpus <= 0:
        return
    import torch

    have = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if trial_gpus > have:
        raise NasforgeError(
            f"the Ray executor cannot place a trial: {trial_gpus:g} GPU per trial, this machine has {have} "
            "(join a cluster that has them with --ray-address)"
        )


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse, in one line, an address nothing listens on.

    Why: ``ray.init`` retries an unreachable cluster for minutes without a word. ``auto``
    (a running cluster found from the environment) is Ray's to resolve; ``host:port``
    (with or without ``ray://``) is tried with one TCP connection here. Without an address
    a local Ray instance is started, so there is no address for one.
    """
    if address == "auto":
        return
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise NasforgeError(
            f"Ray address {address!r}: expected HOST:PORT (e.g. 127.0.0.1:6379), ray://HOST:PORT or auto"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise NasforgeError(
            f"cannot reach a Ray cluster at {address}: {exc.strerror or exc} "
            "(is `ray start --head` running there, and is the port right?)"
        ) from exc


def use_cluster_token() -> None:
    """Join with Ray's token authentication where a token is at hand.

    Why: ``ray start`` turns token authentication on for its cluster whenever a token
    exists (``~/.ray/auth_token``, ``RAY_AUTH_TOKEN_PATH`` or ``RAY_AUTH_TOKEN``), but a
    driver joining it by address does not, and is refused ("InvalidAuthToken") after
    half a minute of retries. Ray reads the mode when it is imported, so this runs
    before. An explicit ``RAY_AUTH_MODE`` is left as the user set it.
    """
    if AUTH_MODE in os.environ:
        return
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(
        os.path.expanduser("~"), ".ray", "auth_token"
    )
    if os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(path):
        os.environ[AUTH_MODE] = "token"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
