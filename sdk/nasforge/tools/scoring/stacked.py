"""Scoring the networks of a stack together: one pass, each network's quantities sliced out.

A space that offers :class:`~nasforge.kernel.search_space.NetworkStack` runs K of its
networks as one module whose layers hold the K networks' channels side by side, so
everything the zero-cost proxies read from a forward and its backward passes separates
per network: a network's loss depends only on its own weights, so the gradient of the
sum of the K losses holds each network's own gradient; its Hessian-gradient product
likewise (the double backward of Σ_k g_k·stopgrad(g_k)); its input is a copy of the batch
of its own (``x[:, k]``), so the input gradient separates too; BatchNorm statistics are
per channel. :class:`StackedPasses` runs the pass once and hands each network the
:class:`~nasforge.tools.scoring.passes.MainPass` its own network would have produced
(:meth:`StackedPasses.cell`), up to rounding.

A metric opts in by defining ``score_stacked(passes) -> list[float]``, one score per
network of the stack (:data:`STACKED_METHOD`); :func:`per_cell_scores` gives that for any
metric whose ``score_shared`` reads only ``passes.main(...)`` (and ``passes.model``'s
train mode), by calling it on each network's view. Metrics without it (the NTK family,
which takes its own kernels) are scored network by network.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, cast

import attrs
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.device import exact_float32
from nasforge.kernel.metric import Batch, Metric, MetricContext
from nasforge.tools.backends import prunable_layers
from nasforge.tools.scoring.outcome import MetricScore
from nasforge.tools.scoring.passes import (
    HESSIAN_GRAD,
    INPUT_GRAD,
    LAYER_GRADS,
    RELU_KERNEL,
    TAPS,
    WEIGHT_GRADS,
    MainPass,
)
from nasforge.tools.scoring.scorer import metric_label

#: The attribute of a stacked module's layer that only some networks use (one bool each).
STACK_CELLS = "stack_cells"
#: The method a metric defines to score every network of a stack at once.
STACKED_METHOD = "score_stacked"


def can_stack(metric: Metric) -> bool:
    """Whether ``metric`` scores stacks (defines :data:`STACKED_METHOD`)."""
    return callable(getattr(metric, STACKED_METHOD, None))


def cells_using(layer: nn.Module, count: int) -> list[bool]:
    """Which networks of a stack of ``count`` use ``layer`` (all, unless it says otherwise)."""
    cells = getattr(layer, STACK_CELLS, None)
    return [True] * count if cells is None else [bool(c) for c in cells]


def cell_mask(layer: nn.Module, count: int, device: torch.device | str) -> torch.Tensor:
    """:func:`cells_using` as a bool tensor on ``device`` (for metrics that sum per network)."""
    return torch.tensor(cells_using(layer, count), dtype=torch.bool, device=device)


@attrs.frozen(eq=False)
class StackedMain:
    """What one forward and its backward passes produced for a whole stack."""

    logits: torch.Tensor  # (batch, K, classes)
    losses: torch.Tensor  # (K,)
    layers: tuple[nn.Module, ...]  # the Conv/Linear layers with trainable weights, in order
    weights: tuple[torch.Tensor, ...]
    weight_grads: tuple[torch.Tensor, ...] | None = None
    hessian_grad: tuple[torch.Tensor, ...] | None = None
    #: (layer, output, d loss / d output) per layer call, in call order.
    outputs: tuple[tuple[nn.Module, torch.Tensor, torch.Tensor], ...] | None = None
    relu_kernel: torch.Tensor | None = None  # (K, batch, batch), float64
    input_grad: torch.Tensor | None = None  # (batch, K, *input)


def _losses(logits: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    """Each network's batch loss, as :class:`~nasforge.tools.scoring.passes.SharedPasses` takes it."""
    b, k, classes = logits.shape
    if kind == "mse":
        onehot = F.one_hot(y, classes).to(logits.dtype)
        return (logits - onehot[:, None, :]).pow(2).mean(dim=(0, 2))
    return F.cross_entropy(logits.transpose(1, 2), y[:, None].expand(b, k), reduction="none").mean(0)


def _zeros_for_unused(
    grads: Sequence[torch.Tensor | None], like: Sequence[torch.Tensor]
) -> tuple[torch.Tensor, ...]:
    """A layer the loss never reaches (behind a ``none`` op, or an op no network uses here)
    has a zero gradient."""
    return tuple(
        (g if g is not None else torch.zeros_like(t)).detach() for g, t in zip(grads, like, strict=True)
    )


def _per_cell(t: torch.Tensor, count: int) -> torch.Tensor:
    """A layer tensor whose first dimension is the networks' blocks, as (K, per-network...)."""
    return t.view(count, t.shape[0] // count, *t.shape[1:])


def _relu_kernels(codes: torch.Tensor) -> torch.Tensor:
    """Per network, Σ over units of [c_i = c_j] for binary codes (batch, K, units), float64
    (the single network's formula, one batched matmul)."""
    c = codes.to(torch.float32).transpose(0, 1)  # (K, batch, units)
    active = c.sum(2, dtype=torch.float64)
    both = torch.bmm(c, c.transpose(1, 2)).to(torch.float64)
    return 2 * both - active[:, :, None] - active[:, None, :] + c.shape[2]


class StackedPasses:
    """The main pass of a stacked module on one batch, and each network's view of it.

    ``module`` maps (batch, count, *input) to (batch, count, classes) (the contract of
    :class:`~nasforge.kernel.search_space.NetworkStack`); the batch is the sweep's, each
    network given its own copy. Runs on the module's device, in the module's mode.
    """

    def __init__(
        self, module: nn.Module, count: int, batch: Batch, ctx: MetricContext, needs: frozenset[str]
    ) -> None:
        unknown = set(needs) - TAPS
        if unknown:
            raise ValueError(f"unknown shared-pass taps {sorted(unknown)}; known: {sorted(TAPS)}")
        self.model = self.module = module
        self.count = count
        device = next(module.parameters()).device
        x, y = batch
        self.batch = (x.to(device), y.to(device))
        self.ctx = ctx
        self.needs = frozenset(needs)
        self._main: StackedMain | None = None
        self._computed: frozenset[str] = frozenset()
        self._views: dict[int, MainPass] = {}
        self.phase_seconds: dict[str, float] = {}

    def main(self, needs: frozenset[str] = frozenset()) -> StackedMain:
        """The stack's main pass with at least ``needs`` (recomputed only if a tap is missing)."""
        wanted = self.needs | needs
        if self._main is None or not wanted <= self._computed:
            start = time.perf_counter()
            self._main = self._run(wanted)
            self.needs = self._computed = wanted
            self._views.clear()
            self.phase_seconds["main"] = self.phase_seconds.get("main", 0.0) + time.perf_counter() - start
        return self._main

    def _run(self, needs: frozenset[str]) -> StackedMain:
        x, y = self.batch
        k = self.count
        layers = [m for _, m in prunable_layers(self.module)]
        layers = [m for m in layers if isinstance(m.weight, torch.Tensor) and m.weight.requires_grad]
        weights = [cast(torch.Tensor, m.weight) for m in layers]
        taps: list[tuple[nn.Module, torch.Tensor]] = []
        kernel: list[torch.Tensor] = []
        hooks = []
        if LAYER_GRADS in needs:
            for m in layers:
                hooks.append(m.register_forward_hook(lambda m, _i, out: taps.append((m, out))))
        if RELU_KERNEL in needs:
            kernel.append(torch.zeros(k, x.shape[0], x.shape[0], dtype=torch.float64, device=x.device))

            def relu_tap(m: nn.Module, inp: tuple[torch.Tensor, ...]) -> None:
                codes = (inp[0].detach() > 0).reshape(inp[0].shape[0], k, -1)
                used = [i for i, u in enumerate(cells_using(m, k)) if u]
                if len(used) == k:
                    kernel[0] += _relu_kernels(codes)
                elif used:
                    index = torch.tensor(used, device=codes.device)
                    kernel[0].index_add_(0, index, _relu_kernels(codes.index_select(1, index)))

            for m in self.module.modules():
                if isinstance(m, nn.ReLU):
                    hooks.append(m.register_forward_pre_hook(relu_tap))
        x_in = x[:, None].expand(x.shape[0], k, *x.shape[1:])
        if INPUT_GRAD in needs:
            x_in = x_in.contiguous().requires_grad_(True)
        try:
            with torch.enable_grad():
                logits = self.module(x_in)
        finally:
            for h in hooks:
                h.remove()
        losses = _losses(logits, y, self.ctx.loss)
        input_grad = None
        if INPUT_GRAD in needs:
            (input_grad,) = torch.autograd.grad(logits.sum(), x_in, retain_graph=True)
        wg = hg = None
        outputs = None
        if needs & {WEIGHT_GRADS, HESSIAN_GRAD, LAYER_GRADS}:
            second = HESSIAN_GRAD in needs
            outs = [o for _, o in taps]
            grads = torch.autograd.grad(losses.sum(), weights + outs, create_graph=second, allow_unused=True)
            w_raw, o_raw = grads[: len(weights)], grads[len(weights) :]
            wg = _zeros_for_unused(w_raw, weights)
            if taps:
                outputs = tuple(
                    (m, o.detach(), (g if g is not None else torch.zeros_like(o)).detach())
                    for (m, o), g in zip(taps, o_raw, strict=True)
                )
            if second:
                z = sum((g * d).sum() for g, d in zip(w_raw, wg, strict=True) if g is not None)
                if isinstance(z, torch.Tensor) and z.requires_grad:
                    hg = _zeros_for_unused(torch.autograd.grad(z, weights, allow_unused=True), weights)
                else:
                    hg = tuple(torch.zeros_like(w) for w in weights)
        return StackedMain(
            logits=logits.detach(),
            losses=losses.detach(),
            layers=tuple(layers),
            weights=tuple(w.detach() for w in weights),
            weight_grads=wg,
            hessian_grad=hg,
            outputs=outputs,
            relu_kernel=kernel[0] if kernel else None,
            input_grad=None if input_grad is None else input_grad.detach(),
        )

    # --- one network's view -------------------------------------------------------------
    def cell(self, index: int) -> CellPasses:
        """Network ``index``'s view, read as a :class:`SharedPasses` by ``score_shared``."""
        if not 0 <= index < self.count:
            raise IndexError(f"network {index} of a stack of {self.count}")
        return CellPasses(self, index)

    def cell_main(self, index: int, needs: frozenset[str] = frozenset()) -> MainPass:
        """The :class:`MainPass` network ``index``'s own network would have produced."""
        main = self.main(needs)
        view = self._views.get(index)
        if view is None:
            view = self._views[index] = self._slice(main, index)
        return view

    def _slice(self, main: StackedMain, i: int) -> MainPass:
        k = self.count
        own = [cells_using(m, k)[i] for m in main.layers]

        def mine(ts: tuple[torch.Tensor, ...] | None) -> tuple[torch.Tensor, ...] | None:
            if ts is None:
                return None
            return tuple(_per_cell(t, k)[i] for t, keep in zip(ts, own, strict=True) if keep)

        outputs = grads = fan_in = None
        if main.outputs is not None:
            kept = [(m, o, g) for m, o, g in main.outputs if cells_using(m, k)[i]]

            def channels(t: torch.Tensor) -> torch.Tensor:
                return t.view(t.shape[0], k, t.shape[1] // k, *t.shape[2:])[:, i]

            outputs = tuple(channels(o) for _, o, _ in kept)
            grads = tuple(channels(g) for _, _, g in kept)
            fan_in = tuple(int(cast(torch.Tensor, m.weight)[0].numel()) for m, _, _ in kept)
        return MainPass(
            logits=main.logits[:, i],
            loss=main.losses[i],
            weights=mine(main.weights) or (),
            weight_grads=mine(main.weight_grads),
            hessian_grad=mine(main.hessian_grad),
            layer_outputs=outputs or None,
            layer_output_grads=grads or None,
            layer_fan_in=fan_in or None,
            relu_kernel=None if main.relu_kernel is None else main.relu_kernel[i],
            input_grad=None if main.input_grad is None else main.input_grad[:, i],
        )


class CellPasses:
    """One network's view of a :class:`StackedPasses`: what ``score_shared`` of a metric
    that reads only the main pass sees (``model`` is the stack's module, in its mode)."""

    def __init__(self, stacked: StackedPasses, index: int) -> None:
        self._stacked, self.index = stacked, index
        self.model = stacked.module
        self.batch = stacked.batch
        self.ctx = stacked.ctx

    def main(self, needs: frozenset[str] = frozenset()) -> MainPass:
        return self._stacked.cell_main(self.index, needs)

    def __getattr__(self, name: str) -> Any:  # kernels, spectra: not a stacked quantity
        raise AttributeError(f"a stacked network's view has no {name!r}: score this metric per network")


def layer_sum(
    passes: StackedPasses, layers: Sequence[nn.Module], values: Sequence[torch.Tensor]
) -> torch.Tensor:
    """Per network, the sum over ``layers`` it uses of ``values`` (one (K,) tensor per layer,
    aligned with ``layers``): what a per-network sum over its own layers adds up. A layer a
    network does not use is left out by selection, so whatever it holds there never counts."""
    count = passes.count
    if not values:
        return torch.zeros(count, dtype=torch.float64)
    stacked = torch.stack(list(values))
    masks = torch.tensor([cells_using(m, count) for m in layers], device=stacked.device)
    return torch.where(masks, stacked, torch.zeros((), dtype=stacked.dtype, device=stacked.device)).sum(0)


def per_cell_scores(metric: Any, passes: StackedPasses) -> list[float]:
    """``metric.score_shared`` on each network's view: the ``score_stacked`` of a metric
    whose ``score_shared`` reads only the main pass."""
    return [float(metric.score_shared(passes.cell(i))) for i in range(passes.count)]


def stack_requirements(metrics: Sequence[Metric]) -> frozenset[str]:
    """The main-pass taps the stacked metrics of one sweep need together."""
    needs: frozenset[str] = frozenset()
    for m in metrics:
        needs |= frozenset(getattr(m, "requirements", frozenset()))
    return needs & TAPS


def score_stack(
    module: nn.Module,
    count: int,
    used: int,
    batch: Batch,
    metrics: Sequence[Metric],
    *,
    ctx: MetricContext,
) -> tuple[list[dict[str, MetricScore]], dict[str, str]]:
    """Scores of the first ``used`` networks of a stacked module of ``count``, per metric
    (each must :func:`can_stack`), and the metrics that failed on the stack with why.

    A stack's shared pass is charged to the first metric that needs it, and each metric's
    seconds are split evenly over the networks. Out-of-memory errors are raised (the
    caller splits the stack); any other error fails that metric for the stack only, and
    the caller scores it network by network (where a bad network is flagged as ever).
    """
    with exact_float32():
        passes = StackedPasses(module, count, batch, ctx, stack_requirements(metrics))
        rows: list[dict[str, MetricScore]] = [{} for _ in range(used)]
        failed: dict[str, str] = {}
        for m in metrics:
            label = metric_label(m)
            start = time.perf_counter()
            try:
                values = list(getattr(m, STACKED_METHOD)(passes))
            except Exception as exc:  # noqa: BLE001 - out of memory is re-raised below
                from nasforge.tools.backends import is_out_of_memory

                if is_out_of_memory(exc):
                    raise
                failed[label] = f"{type(exc).__name__}: {exc}"
                continue
            if len(values) != count:
                failed[label] = f"{len(values)} scores for a stack of {count}"
                continue
            each = (time.perf_counter() - start) / max(1, used)
            for row, v in zip(rows, values[:used], strict=True):
                row[label] = MetricScore(label, float(v) if v is not None else math.nan, each)
        return rows, failed


__all__ = [
    "STACKED_METHOD",
    "STACK_CELLS",
    "CellPasses",
    "StackedMain",
    "StackedPasses",
    "can_stack",
    "cell_mask",
    "cells_using",
    "layer_sum",
    "per_cell_scores",
    "score_stack",
    "stack_requirements",
]
