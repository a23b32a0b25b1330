"""Validated settings of the evaluation network (the boundary of ``DartsSpace.build``)."""

from __future__ import annotations

from typing import Any

import attrs
from attrs import validators as v

_DEFAULTS: dict[str, dict[str, int]] = {
    "cifar": {"C": 36, "layers": 20, "num_classes": 10},
    "imagenet": {"C": 48, "layers": 14, "num_classes": 1000},
}


@attrs.frozen
class EvalNetConfig:
    """Width ``C``, cell count, classes, auxiliary head, drop-path and the stem flavour.

    ``dataset='cifar'`` is the 3x3-conv stem for small images (any ``in_channels``, e.g. 1
    for digits); ``'imagenet'`` is the three stride-2 convs for 224x224 inputs.
    """

    dataset: str = attrs.field(default="cifar", validator=v.in_(tuple(_DEFAULTS)))
    C: int = attrs.field(default=36, validator=[v.instance_of(int), v.ge(2)])
    layers: int = attrs.field(default=20, validator=[v.instance_of(int), v.ge(3)])
    num_classes: int = attrs.field(default=10, validator=[v.instance_of(int), v.ge(1)])
    auxiliary: bool = attrs.field(default=True, validator=v.instance_of(bool))
    drop_path: float = attrs.field(default=0.0, converter=float, validator=[v.ge(0.0), v.lt(1.0)])
    in_channels: int = attrs.field(default=3, validator=[v.instance_of(int), v.ge(1)])
    stem_multiplier: int = attrs.field(default=3, validator=[v.instance_of(int), v.ge(1)])

    @C.validator
    def _even(self, _attr: attrs.Attribute, value: int) -> None:
        if value % 2:
            raise ValueError(f"C must be even (FactorizedReduce halves it), got {value}")

    @classmethod
    def create(cls, dataset: str = "cifar", **options: Any) -> EvalNetConfig:
        """Fill ``C``, ``layers`` and ``num_classes`` with the dataset's published defaults."""
        if dataset not in _DEFAULTS:
            raise ValueError(f"dataset must be one of {sorted(_DEFAULTS)}, got {dataset!r}")
        unknown = set(options) - {f.name for f in attrs.fields(cls)}
        if unknown:
            raise TypeError(f"unknown evaluation-network options: {sorted(unknown)}")
        merged = {**_DEFAULTS[dataset], **{k: x for k, x in options.items() if x is not None}}
        return cls(dataset=dataset, **merged)

    @property
    def reduction_cells(self) -> tuple[int, int]:
        """0-based indices of the reduction cells: floor(L/3) and floor(2L/3), as DARTS."""
        return (self.layers // 3, 2 * self.layers // 3)
