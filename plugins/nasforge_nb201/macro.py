"""The NAS-Bench-201 macro skeleton, shared by stand-alone networks and the supernet.

stem (conv3x3 + BN) -> N cells at C -> reduction -> N cells at 2C -> reduction ->
N cells at 4C -> BN + ReLU -> global average pool -> linear. Stand-alone networks and the
supernet differ only in what a cell is, so the skeleton takes a cell factory and a cell
runner; one implementation means the supernet's inherited weights sit in exactly the
same places as a stand-alone network's.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch
from torch import nn

from nasforge.kernel.errors import OptionError, show
from nasforge_nb201.ops import ReLUConvBN

#: Most weights a network may have (about 4 GB of float32): C, N and the class count are
#: user input, and past this a typo allocates until the machine gives up.
MAX_PARAMETERS = 10**9


def _positive_int(_inst: object, attr: attrs.Attribute, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise OptionError(f"nb201 network: {attr.name} must be a positive int, got {show(value)}")


@attrs.frozen
class MacroConfig:
    """Width, depth and I/O of the macro network (validated once, at the boundary)."""

    C: int = attrs.field(default=16, validator=_positive_int)
    N: int = attrs.field(default=5, validator=_positive_int)
    num_classes: int = attrs.field(default=10, validator=_positive_int)
    in_channels: int = attrs.field(default=3, validator=_positive_int)

    def __attrs_post_init__(self) -> None:
        if self.approx_parameters > MAX_PARAMETERS:
            raise OptionError(
                f"nb201 network with C={self.C}, N={self.N}, num_classes={self.num_classes}, "
                f"in_channels={self.in_channels} would have about {self.approx_parameters:.2g} "
                f"parameters (at most {MAX_PARAMETERS:.0g})"
            )

    @property
    def stage_channels(self) -> tuple[int, int, int]:
        return (self.C, 2 * self.C, 4 * self.C)

    @property
    def approx_parameters(self) -> int:
        """An upper estimate of the weights: every edge a 3x3 conv (9c^2), 3N cells over
        widths C, 2C, 4C (1134 N C^2), two reductions (280 C^2), the stem and the head."""
        c = self.C
        return (1134 * self.N + 280) * c * c + 9 * self.in_channels * c + 4 * c * self.num_classes


class ResidualReduction(nn.Module):
    """ResNet basic block with stride 2 between stages: halves the size, doubles channels.

    The shortcut pools with ``ceil_mode=True`` so that it matches the stride-2 conv's
    ``ceil(H / 2)`` on odd sizes too; on even sizes (every benchmark dataset) it is the
    benchmark's plain 2x2 average pool.
    """

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, stride=2)
        self.conv_b = ReLUConvBN(c_out, c_out, 3)
        self.shortcut = nn.Sequential(
            nn.AvgPool2d(kernel_size=2, stride=2, ceil_mode=True),
            nn.Conv2d(c_in, c_out, 1, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


CellFactory = Callable[[int], nn.Module]
CellRunner = Callable[[nn.Module, torch.Tensor], torch.Tensor]


class MacroNetwork(nn.Module):
    """Stem, three stages of cells with reductions between them, and the classifier head."""

    def __init__(self, config: MacroConfig, make_cell: CellFactory) -> None:
        super().__init__()
        self.config = config
        c = config.C
        self.stem = nn.Sequential(
            nn.Conv2d(config.in_channels, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        )
        layers: list[nn.Module] = []
        for stage, width in enumerate(config.stage_channels):
            if stage > 0:
                layers.append(ResidualReduction(c, width))
                c = width
            layers.extend(make_cell(width) for _ in range(config.N))
        self.layers = nn.ModuleList(layers)
        self.lastact = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(inplace=False))
        self.classifier = nn.Linear(c, config.num_classes)

    def run(self, x: torch.Tensor, run_cell: CellRunner) -> torch.Tensor:
        """Logits of ``x``; ``run_cell(cell, h)`` applies one cell however the caller needs."""
        h = self.stem(x)
        for layer in self.layers:
            h = layer(h) if isinstance(layer, ResidualReduction) else run_cell(layer, h)
        h = self.lastact(h)
        # mean over H, W (not AdaptiveAvgPool2d) exports cleanly with dynamic sizes
        return self.classifier(h.mean(dim=(2, 3)))

    def cells(self) -> list[nn.Module]:
        """The cells in forward order (reduction blocks left out)."""
        return [m for m in self.layers if not isinstance(m, ResidualReduction)]
