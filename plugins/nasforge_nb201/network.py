"""Stand-alone NAS-Bench-201 networks: the macro skeleton with one fixed cell everywhere.

At ``C=16, N=5`` on 32x32x3 inputs this is the network the benchmark trained, so its
parameter count and FLOPs match the benchmark's (1,531,546 parameters for the all
``nor_conv_3x3`` cell at 10 classes). Smaller ``C``/``N`` and other input sizes (down to
8x8, e.g. sklearn digits with ``in_channels=1``) give the cheap stand-ins that CPU demos
and training-free metrics use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import torch

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge_nb201.arch import SPACE_NAME, check_ops
from nasforge_nb201.cell import NB201Cell
from nasforge_nb201.flops import network_macs
from nasforge_nb201.macro import MacroConfig, MacroNetwork


class NB201Network(MacroNetwork):
    """A NAS-Bench-201 network whose 3N cells all share one op assignment.

    Its ops between convolutions are ReLU, average pooling, identity, zero and sums, each
    example on its own once BN is removed: the promise of
    :mod:`nasforge.tools.backends.monotone` (synflow takes its forward-only path).
    """

    nasforge_monotone: ClassVar[bool] = True

    def __init__(self, ops: Sequence[str], config: MacroConfig | None = None) -> None:
        check_ops(ops)
        ops = tuple(ops)
        super().__init__(config or MacroConfig(), lambda c: NB201Cell(ops, c))
        self.ops = ops

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x, lambda cell, h: cell(h))

    def forward_flops(self, input_shape: Sequence[int]) -> float | None:
        """FLOPs of one sample of ``input_shape`` (C, H, W) as torch's FlopCounterMode counts
        them (convolutions and the classifier, 2 a multiply-add), in closed form: the
        ``flops`` metric reads this instead of tracing a forward (50 ms a network). None
        where the closed form does not apply (non-square inputs, other channel counts)."""
        if len(input_shape) != 3 or input_shape[1] != input_shape[2]:
            return None
        cfg = self.config
        if input_shape[0] != cfg.in_channels:
            return None
        macs = network_macs(
            self.ops,
            C=cfg.C,
            N=cfg.N,
            resolution=int(input_shape[1]),
            in_channels=cfg.in_channels,
            num_classes=cfg.num_classes,
        )
        return 2.0 * macs


def build(
    g: Genotype | Sequence[str],
    C: int = 16,
    N: int = 5,
    num_classes: int = 10,
    in_channels: int = 3,
) -> NB201Network:
    """The stand-alone network of ``g`` (a nb201 Genotype or its 6 op names)."""
    if isinstance(g, Genotype):
        if g.space != SPACE_NAME:
            raise InvalidGenotypeError(f"genotype is from space '{g.space}', not '{SPACE_NAME}'")
        ops: Sequence[str] = g.choices  # type: ignore[assignment]
    else:
        ops = g
    config = MacroConfig(C=C, N=N, num_classes=num_classes, in_channels=in_channels)
    return NB201Network(ops, config)
