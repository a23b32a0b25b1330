"""One metric's outcome on one architecture, with NaN/inf/errors flagged, not raised."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs

from nasforge.kernel.errors import NasforgeError, first_line


@attrs.frozen
class MetricScore:
    """A score, how long it took, and why it is unusable when it is.

    A metric that returns NaN or inf, or raises, still yields a ``MetricScore``: one bad
    architecture (a cell of only ``none``) must not abort a sweep of thousands, and the
    ranking functions place flagged scores last.
    """

    metric: str = attrs.field(validator=attrs.validators.min_len(1))
    value: float = attrs.field(converter=float)
    seconds: float = attrs.field(default=0.0, converter=float)
    error: str | None = None
    cached: bool = attrs.field(default=False, eq=False)
    #: The network could not be built (``error`` is the build's): no metric ran, and the
    #: score is never cached (a fixed space must be tried again).
    unbuilt: bool = attrs.field(default=False, eq=False)

    @property
    def flag(self) -> str | None:
        """``"error"``, ``"nan"``, ``"inf"`` or ``None`` for a usable score."""
        if self.error is not None:
            return "error"
        if math.isnan(self.value):
            return "nan"
        if math.isinf(self.value):
            return "inf"
        return None

    @property
    def ok(self) -> bool:
        return self.flag is None

    def to_json(self) -> dict[str, Any]:
        value: float | str = self.value if math.isfinite(self.value) else repr(self.value)
        return {"metric": self.metric, "value": value, "seconds": self.seconds, "error": self.error}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MetricScore:
        return cls(
            metric=data["metric"],
            value=float(data["value"]),
            seconds=float(data.get("seconds", 0.0)),
            error=data.get("error"),
        )


def unbuilt_error(exc: BaseException) -> str:
    """Why a network could not be built, in one line (text, so a builder process can hand
    it back whatever the exception's class)."""
    if isinstance(exc, NasforgeError):  # build_network's own words name the space and options
        return first_line(exc)
    return f"cannot build the network: {type(exc).__name__}: {first_line(exc)}"


def unbuilt_scores(labels: Sequence[str], error: BaseException | str) -> dict[str, MetricScore]:
    """The scores of a network that could not be built: each flagged with the build's error."""
    text = error if isinstance(error, str) else unbuilt_error(error)
    return {label: MetricScore(label, math.nan, error=text, unbuilt=True) for label in labels}
