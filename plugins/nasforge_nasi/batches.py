"""The mini-batches D_t that NASI's proxy sees, in the standard and agnostic modes.

Only the batch changes between the modes (paper Sec. 5.3): true data;
true inputs with uniform random labels, drawn once per example so a seed reproduces
them (label-agnostic); or N(0, I) inputs of the data's shape with uniform labels
(data-agnostic). Every
draw comes from the source's own generator; :meth:`ProxyBatches.fork` gives eq. 40's
calibration a source of the same kind (the same random labels) on a generator of its own.
"""

from __future__ import annotations

import copy

import torch

from nasforge.kernel.datasets import TensorData
from nasforge_nasi.config import INPUTS, LABELS


class ProxyBatches:
    """Draws one batch per call from ``data`` or from N(0, I)."""

    def __init__(
        self,
        data: TensorData | None,
        *,
        batch_size: int,
        generator: torch.Generator,
        inputs: str = "true",
        labels: str = "true",
        input_shape: tuple[int, ...] | None = None,
        num_classes: int | None = None,
    ) -> None:
        if inputs not in INPUTS or labels not in LABELS:
            raise ValueError(f"inputs must be in {INPUTS} and labels in {LABELS}")
        if data is None and inputs != "gaussian":
            raise ValueError("a dataset is needed unless inputs='gaussian'")
        self.data = data
        self.batch_size = batch_size
        self.generator = generator
        self.inputs = inputs
        self.input_shape = tuple(input_shape or (data.input_shape if data is not None else ()))
        self.num_classes = int(num_classes or (data.num_classes if data is not None else 0))
        if not self.input_shape or self.num_classes < 1:
            raise ValueError("data-agnostic batches need input_shape and num_classes")
        self._labels: torch.Tensor | None = None
        if data is not None:
            self._labels = data.y
            if labels == "random":  # own stream, so the batches' draws are unchanged
                own = torch.Generator().manual_seed(generator.initial_seed() + 1)
                self._labels = torch.randint(0, self.num_classes, (len(data),), generator=own)

    def fork(self, generator: torch.Generator) -> ProxyBatches:
        """A source of the same batches' kind (data, shapes, the example's random labels)
        drawing from ``generator``: draws from one leave the other's stream untouched."""
        twin = copy.copy(self)
        twin.generator = generator
        return twin

    def __call__(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.inputs == "gaussian":
            x = torch.randn((self.batch_size, *self.input_shape), generator=self.generator)
            y = torch.randint(0, self.num_classes, (self.batch_size,), generator=self.generator)
            return x, y
        assert self.data is not None and self._labels is not None
        n = len(self.data)
        idx = torch.randperm(n, generator=self.generator)[: min(self.batch_size, n)]
        return self.data.x[idx], self._labels[idx]
