"""How many of a run's trials failed, and the first of them: what every face of a run says.

A trial fails when its architecture cannot be built or trained (the evaluator returns a
failed result); the run goes on without it, and the journal keeps it. A search in which a
third of the trials failed is still a search, but not the one its user thinks they ran,
so the summary, stderr, ``inspect``, ``--json`` and the report all say how many failed,
with the first one's genotype and error: enough to find the bug in a space or evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.result import Trial

#: The journal end record's (and ``--json``'s) key of a run's failed trials.
FAILURES_KEY = "failed_trials"
#: The longest error kept (a traceback's first line is usually much shorter).
_ERROR_CHARS = 300


@attrs.frozen
class TrialFailures:
    """``count`` of ``of`` trials failed; the first was trial ``trial`` (``genotype``) with ``error``."""

    count: int
    of: int
    trial: int
    genotype: str
    error: str

    def line(self) -> str:
        """The failures in one line, as stderr, the summary and ``inspect`` say them."""
        return (
            f"{self.count} of {self.of} trials failed; the first, trial {self.trial} "
            f"({self.genotype}): {self.error}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "of": self.of,
            "first": {"trial": self.trial, "genotype": self.genotype, "error": self.error},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialFailures | None:
        first = data.get("first")
        if not isinstance(first, Mapping):
            return None
        try:
            return cls(
                int(data["count"]),
                int(data["of"]),
                int(first["trial"]),
                str(first["genotype"]),
                str(first["error"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def raw_text(g: Genotype) -> str:
    """A genotype's choices as text, where its space (and its own text form) is not at hand."""
    return "/".join(str(c) for c in g.choices)


def trial_failures(
    trials: Iterable[Trial], text: Callable[[Genotype], str] = raw_text
) -> TrialFailures | None:
    """The failed trials among ``trials`` (None when none failed); ``text`` writes a genotype
    (the space's ``format``)."""
    trials = list(trials)
    failed = [t for t in trials if t.result.failed]
    if not failed:
        return None
    first = failed[0]
    error = " ".join((first.result.error or "no error message").split())[:_ERROR_CHARS]
    return TrialFailures(len(failed), len(trials), first.index, text(first.genotype), error)


def recorded_failures(record: Mapping[str, Any] | None) -> TrialFailures | None:
    """The failures an end record holds (None for a run without, or before they were kept)."""
    found = (record or {}).get(FAILURES_KEY)
    return TrialFailures.from_json(found) if isinstance(found, Mapping) else None


__all__ = ["FAILURES_KEY", "TrialFailures", "raw_text", "recorded_failures", "trial_failures"]
