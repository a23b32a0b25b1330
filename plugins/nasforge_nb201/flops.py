"""Analytic multiply-accumulate counts of NAS-Bench-201 networks, without building one.

Size and cost baselines (the ``flops`` metric, sweeps over all 15,625 cells) need the count in
microseconds, so it is closed-form: convolutions and the classifier only (BN, ReLU, pooling and additions are
bandwidth-bound and left out, as most FLOP counters do). For the all ``nor_conv_3x3`` cell
at C=16, N=5 on 32x32 this gives 220.12M MACs, the benchmark's reported maximum of
about 220 MFLOPs. A test cross-checks it against hooks on real modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from nasforge_nb201.arch import check_ops

#: MACs per output pixel per (input channel x output channel) for each edge op.
_EDGE_KERNEL = {
    "none": 0,
    "skip_connect": 0,
    "nor_conv_1x1": 1,
    "nor_conv_3x3": 9,
    "avg_pool_3x3": 0,
}


def _halve(size: int) -> int:
    """Spatial size after a stride-2 3x3 conv with padding 1 (``ceil(size / 2)``)."""
    return (size + 1) // 2


def cell_macs(ops: Sequence[str], channels: int, height: int, width: int) -> int:
    """MACs of one cell with ``ops`` at ``channels`` channels and ``height x width``."""
    check_ops(ops)
    return sum(_EDGE_KERNEL[op] for op in ops) * channels * channels * height * width


def network_macs(
    ops: Sequence[str],
    *,
    C: int = 16,
    N: int = 5,
    resolution: int = 32,
    in_channels: int = 3,
    num_classes: int = 10,
) -> int:
    """MACs of one forward pass of one ``resolution x resolution`` image."""
    check_ops(ops)
    size = resolution
    total = 9 * in_channels * C * size * size  # stem
    c = C
    for stage in range(3):
        if stage > 0:
            c_out, size = 2 * c, _halve(size)
            area = size * size
            total += (9 * c * c_out + 9 * c_out * c_out + c * c_out) * area  # reduction
            c = c_out
        total += N * cell_macs(ops, c, size, size)
    return total + c * num_classes
