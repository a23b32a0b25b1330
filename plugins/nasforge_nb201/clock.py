"""The simulated training clock of the tabular benchmark.

The bundled table has accuracies only, yet anytime curves and "simulated seconds" budgets
need each lookup to cost what training the cell would have cost. This is the cost model,
stated so anyone can recompute it:

    seconds = epochs * train_images * (seconds_per_image + seconds_per_image_gmac * GMACs)

where GMACs is the analytic forward cost of one image at the dataset's resolution
(:func:`nasforge_nb201.flops.network_macs`). An affine model rather than a pure FLOPs
ratio, because benchmark training was largely bound by data loading: the cheapest cells
were not proportionally faster. The two coefficients were fitted to two public NATS-Bench
figures on ``cifar10-valid`` (25k training images, 32x32): a mean ``train-per-time`` of
about 9.14 s/epoch over the whole space (mean 55.0M MACs) and 10.85 s/epoch for
``|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|``
(114.0M MACs). With them the all ``nor_conv_3x3`` cell (220.1M MACs) costs about 5,550 s
for 200 epochs on CIFAR-10's 50k images, and the all ``none`` cell about 3,090 s. The
figures are approximations of a GPU of that era; only their ratios matter for comparing
search strategies on one clock.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from nasforge_nb201.datasets import BenchmarkDataset
from nasforge_nb201.flops import network_macs


def _non_negative(_inst: object, attr: attrs.Attribute, value: float) -> None:
    if not value >= 0:
        raise ValueError(f"TrainingClock.{attr.name} must be >= 0, got {value}")


def _positive_int(_inst: object, attr: attrs.Attribute, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"TrainingClock.{attr.name} must be a positive int, got {value!r}")


@attrs.frozen
class TrainingClock:
    """Simulated seconds to train one cell for ``epochs`` on a benchmark dataset."""

    epochs: int = attrs.field(default=200, validator=_positive_int)
    #: Per-image cost independent of the network (data loading, optimiser step, overhead).
    seconds_per_image: float = attrs.field(default=3.0e-4, converter=float, validator=_non_negative)
    #: Per-image cost per GMAC of forward compute (covers the backward pass too).
    seconds_per_image_gmac: float = attrs.field(default=1.16e-3, converter=float, validator=_non_negative)

    def seconds(self, macs: int, train_images: int) -> float:
        """Training time of a network of ``macs`` per image on ``train_images`` images."""
        per_image = self.seconds_per_image + self.seconds_per_image_gmac * macs / 1e9
        return self.epochs * train_images * per_image

    def training_seconds(self, ops: Sequence[str], dataset: BenchmarkDataset) -> float:
        """Training time of the benchmark network (C=16, N=5) of ``ops`` on ``dataset``."""
        macs = network_macs(ops, resolution=dataset.resolution, num_classes=dataset.num_classes)
        return self.seconds(macs, dataset.train_images)
