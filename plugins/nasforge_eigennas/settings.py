"""What an Eigen-NAS run scores its candidates with: every setting the scores depend on.

All candidates of one run must share the batch, the initialisation seed and the network
options (a score is only comparable to another made the same way), so they live in one
frozen, validated class; the run's options build it, and its JSON keys the score cache.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from attrs import validators as v

from nasforge.kernel.converters import to_dict
from nasforge.kernel.option_types import MAX_COUNT

Labels = Literal["true", "random"]


def _shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ValueError(f"input_shape must be a list of sizes, got {value!r}")
    return tuple(int(d) for d in value)


def _positive_shape(_inst: Any, attr: attrs.Attribute, value: tuple[int, ...]) -> None:
    if not value or any(d < 1 for d in value):
        raise ValueError(f"{attr.name} must be non-empty positive sizes, got {list(value)}")


def _count(low: int) -> Any:
    return [v.instance_of(int), v.ge(low), v.le(MAX_COUNT)]


@attrs.frozen
class ScoreSettings:
    """How every candidate is scored (the paper's pipeline by default, data-agnostic)."""

    #: A registered metric (the paper's trace proxy by default; any other to compare).
    metric: str = attrs.field(default="eigennas_trace", validator=v.min_len(1))
    #: What the batch is drawn from: the run's dataset (its name), "gaussian" (data-agnostic:
    #: N(0, I) inputs, uniform labels) or a dataset name.
    data: str = attrs.field(default="gaussian", validator=v.min_len(1))
    #: N, the samples per score (the paper follows KNAS: 50 single-sample gradients).
    batch_size: int = attrs.field(default=50, validator=_count(1))
    #: Shape of one Gaussian input (ignored for any dataset, the run's included).
    input_shape: tuple[int, ...] = attrs.field(
        default=(3, 32, 32), converter=_shape, validator=_positive_shape
    )
    #: Classes of the Gaussian labels and of the scored networks' heads (named data: its own).
    num_classes: int = attrs.field(default=10, validator=_count(1))
    #: "true" labels, or "random" ones (label-agnostic).
    labels: Labels = attrs.field(default="true", validator=v.in_(("true", "random")))
    #: ``space.build`` options for every candidate (e.g. {"C": 8, "N": 1}); the data fills
    #: ``num_classes``/``in_channels`` where the build takes them and these do not say.
    build: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    #: Seed of the batch and of every network's initialisation.
    init_seed: int = attrs.field(default=0, validator=v.instance_of(int))
    device: str = attrs.field(default="cpu", validator=v.instance_of(str))
    chunk_size: int = attrs.field(default=64, validator=_count(1))

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = list(self.input_shape)
        return data
