"""Fidelity: evaluating a genotype on a smaller budget (fewer epochs) than the full one.

Multi-fidelity strategies (successive halving, Hyperband) spend most of a search on
cheap, short evaluations and only the survivors on full ones. Two small additions make
that possible without changing anything for the strategies and evaluators that ignore it:

- an evaluator declares the budget option it can vary (``Evaluator.fidelity``, e.g.
  ``"epochs"`` for short-train; its full value is the configured one) and measures at a
  given budget through ``evaluate_at(g, fidelity)``;
- a strategy that wants a fidelity returns a :class:`Proposal` from ``ask`` instead of a
  bare genotype, and is told the result with that same proposal;
- an evaluator that trains reports its objective after every epoch
  (``Result.metadata["per_epoch"]``, a learning curve the journal keeps), and a proposal
  may carry ``stop_below``: thresholds after which an evaluation that reports worse stops
  early, recorded as stopped (``metadata["stopped_at"]``) with the value it reached (a
  median pruner's decision, made before the trial starts, so it works on any executor
  and replays exactly).

The run journals each trial's fidelity (a trial without one is a full evaluation),
deduplicates by (genotype, fidelity), and counts the budget spent
(:mod:`nasforge.run.fidelity_spent`): what a multi-fidelity search saves.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.genotype import Genotype


def _thresholds(value: Any) -> tuple[float, ...] | None:
    return None if value is None else tuple(float(v) for v in value)


def _positive_or_none(_inst: Any, _attr: attrs.Attribute, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"a fidelity is a whole budget >= 1 (e.g. epochs), got {value!r}")


@attrs.frozen
class Proposal:
    """A genotype to evaluate at ``fidelity`` (``None``: the evaluator's full budget)."""

    genotype: Genotype = attrs.field(validator=attrs.validators.instance_of(Genotype))
    fidelity: int | None = attrs.field(default=None, validator=_positive_or_none)
    #: After report k (epoch k, 1-based) the evaluation stops if its objective is worse
    #: than ``stop_below[k - 1]`` (NaN, or no entry: go on). None: never stopped early.
    stop_below: tuple[float, ...] | None = attrs.field(default=None, converter=_thresholds)


def is_worse(value: float, threshold: float, higher_is_better: bool) -> bool:
    """Whether a reported value falls short of a stop threshold (NaN thresholds never stop)."""
    if threshold != threshold:  # NaN
        return False
    return value < threshold if higher_is_better else value > threshold


def should_stop(
    stop_below: tuple[float, ...] | None, report: int, value: float, higher_is_better: bool
) -> bool:
    """Whether an evaluation stops after its ``report``-th report (1-based) of ``value``."""
    if not stop_below or report > len(stop_below):
        return False
    return is_worse(value, stop_below[report - 1], higher_is_better)


#: What ``Strategy.ask`` returns: a genotype (full fidelity) or a Proposal.
Ask = Genotype | Proposal


def split(asked: Ask) -> tuple[Genotype, int | None]:
    """(genotype, fidelity) of what a strategy asked."""
    if isinstance(asked, Proposal):
        return asked.genotype, asked.fidelity
    return asked, None


def asked_budget(evaluator: str, full: int, fidelity: int | None, unit: str = "epochs") -> int:
    """The budget an ``evaluate_at(g, fidelity)`` call trains: ``full`` for None, else
    ``fidelity``, refused in one line outside 1 .. ``full``."""
    budget = full if fidelity is None else int(fidelity)
    if not 1 <= budget <= full:
        raise NasforgeError(f"{evaluator} trains 1 to {full} {unit} (its full budget), not {budget}")
    return budget


def max_fidelity(evaluator: Any) -> int | None:
    """The evaluator's full budget (its ``fidelity`` option's value), None if it has none."""
    name = getattr(evaluator, "fidelity", None)
    if not name:
        return None
    value = getattr(evaluator, name, None)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
