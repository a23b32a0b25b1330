"""Where a run's parallel work goes, as the user named it, for strategies that do work of
their own.

A run evaluates trials on its executor (``--executor process --workers 2``). Some
strategies also compute something heavy while they ask: a pre-ranking or Eigen-NAS
scores a pool of thousands of untrained networks before its first proposal, HNAS scores
its pool as it grows. Such work should run where the user said the run's work runs, not
in one process whatever the flags say. A strategy that declares the run-context field
``parallelism`` (:mod:`nasforge.kernel.run_context`) is handed the run's choice, and runs
its sweep there with :func:`nasforge.tools.scoring.sweep_for`.

Where work runs never changes what it computes (a sweep gives the same scores on every
runner), so this is not part of a run's spec: a run resumed with other flags replays the
same trials.
"""

from __future__ import annotations

from typing import Any

import attrs


def _workers(_inst: Any, _attr: attrs.Attribute, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"workers must be an integer >= 1, got {value!r}")


@attrs.frozen
class Parallelism:
    """An executor by name (``inprocess``, ``process`` or a registered one such as ``ray``),
    how many workers, and the executor's own options (a cluster's address)."""

    executor: str = attrs.field(default="inprocess", validator=attrs.validators.min_len(1))
    workers: int = attrs.field(default=1, validator=_workers)
    options: dict[str, Any] = attrs.field(factory=dict, converter=dict)


#: What a strategy gets when nobody says otherwise: this process, one worker.
IN_PROCESS = Parallelism()
