"""What a reader must be told before trusting an insight page.

Two things make its comparisons mean less than they seem. Networks that stayed at chance
have not trained: their loss landscape is that of an untrained network, not the
neighbourhood of an optimum the chapter reads it as. And variants whose parameter counts
differ by more than a tenth may converge differently because of their size rather than
their topology (the thesis's op variants differ by about 30 %, Table 4.3, and it says
so). Each caution is one sentence, shown on the page, printed and logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Held-out accuracy at or below this multiple of chance counts as "at chance".
AT_CHANCE = 1.5
#: Parameter counts further apart than this share of the smallest are flagged.
PARAMETER_SPREAD = 0.10


def at_chance(results: Sequence[Any], num_classes: int) -> list[str]:
    """One caution per trained genotype whose final held-out accuracy is near chance."""
    chance = 1.0 / max(num_classes, 1)
    out = []
    for r in results:
        if r.summary is not None and r.summary.test_accuracy <= AT_CHANCE * chance:
            out.append(
                f"'{r.subject.label}' is at chance (held-out accuracy {100 * r.summary.test_accuracy:.1f} %, "
                f"chance {100 * chance:.1f} %): it has not trained, so its landscape is an untrained "
                "network's, not the neighbourhood of an optimum; train longer or at another --lr"
            )
    return out


def parameter_spread(results: Sequence[Any]) -> list[str]:
    """A caution when the networks' parameter counts differ by more than :data:`PARAMETER_SPREAD`."""
    sized = [(r.parameters, r.subject.label) for r in results if r.parameters]
    if len(sized) < 2:
        return []
    (low, small), (high, large) = min(sized), max(sized)
    if high <= (1 + PARAMETER_SPREAD) * low:
        return []
    return [
        f"parameter counts differ by {100 * (high / low - 1):.0f} % ({low:,} in '{small}', {high:,} in "
        f"'{large}'): differences in convergence may come from size, not topology"
    ]
