"""How many torch threads nasforge's command line uses when the user names none, and how
many each worker process of a pool gets.

torch starts with one intra-op thread per core. On a 2-core machine with anything else
running (a browser, an IDE, a second search) two threads fight the other work for the two
cores, and torch's threads wait on each other: a 30-epoch training took 1,021 s with the
default against 96.5 s with one thread, and networks of a NAS search are small enough that
a second thread gains little even on idle cores (the figures are on the speed page,
printed by ``benchmarks/threads.py``). So where the process may use at most two CPUs, the
command line uses one thread; on a larger machine half of its CPUs (not yet measured
there: ``benchmarks/threads.py`` prints the same table on any machine). ``--threads`` or
``NASFORGE_THREADS`` overrides it. The Python API leaves torch's setting as the calling
program has it: a library changes no process-wide state.

Worker processes of a pool share the machine: each gets the parent's threads divided
among the workers (at least one), so ``--workers 4`` does not start four times the
threads the machine has.
"""

from __future__ import annotations

import os

#: At most this many usable CPUs, one thread.
ONE_THREAD_UP_TO = 2


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads(cpus: int | None = None) -> int:
    """The command line's torch threads when none is named: 1 on up to two usable CPUs,
    else half of them."""
    cpus = usable_cpus() if cpus is None else cpus
    return 1 if cpus <= ONE_THREAD_UP_TO else cpus // 2


def worker_threads(workers: int, threads: int) -> int:
    """Each of ``workers`` processes' share of ``threads`` (at least one)."""
    return max(1, threads // max(1, workers))
