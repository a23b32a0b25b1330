"""SynFlow (Tanaka et al. 2020): data-free synaptic flow, the zero-cost paper's recipe."""

from __future__ import annotations

from typing import ClassVar, cast

import torch
from torch.func import functional_call
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd

from nasforge.kernel.metric import MetricInfo
from nasforge.tools.backends import is_monotone, prunable_layers
from nasforge.tools.scoring import SharedPasses, SharedPassMetric, StackedPasses
from nasforge_zerocost.modes import batch_norm_removed


class Synflow(SharedPassMetric):
    """Σ |θ ⊙ ∂R/∂θ| over Conv/Linear weights, R = Σ f(𝟙; |θ|).

    The zero-cost recipe: every parameter replaced by its absolute value, BatchNorm
    removed, float64, a single all-ones input of the batch's shape. BN removal matters:
    with BN the score loses the depth/width product that makes it predictive; float64
    matters because R reaches 1e30-1e60 on NAS-Bench-201 and overflows float32. Runs
    functionally on converted copies of the tensors, so the caller's model is unchanged.

    Networks that promise monotone, example-wise layers (:mod:`nasforge.tools.backends.monotone`,
    e.g. every NAS-Bench-201 network) take a forward-only path: there every
    ``dR/dtheta >= 0``, so the score is ``d/dc R(c * theta)`` at c=1, carried as a second
    "tangent" example through one batch-2 forward (each Conv/Linear maps the pair (x, t) to
    (Wx, W(x + t)), everything else acts on both alike). Equal to the backward's score to
    float64 rounding (at most 1e-15 relative on NAS-Bench-201, tested), 20-30% faster
    (benchmarks/sweep_scaling.py --all) and without a graph in memory.

    Not bit-for-bit the published NAS-Bench-201 numbers: the zero-cost-nas NB201 model
    drops BN only where its ``use_bn`` flag reaches, and its reduction blocks build their
    ReLUConvBN with BN regardless, so the published score keeps (train-mode) BN in the two
    reduction blocks; this removes every BN. The ranking is unaffected (Spearman 0.9998
    between the two on NAS-Bench-201 cells).
    """

    info: ClassVar[MetricInfo] = MetricInfo(
        name="synflow",
        needs_labels=False,
        needs_data=False,
        bn="remove",
        log_scale=True,
        sign="nonnegative",
        description="synaptic flow with |weights|, all-ones input, every BN removed, float64",
        version="2",
    )

    def score_shared(self, passes: SharedPasses) -> float:
        model = passes.model
        x = passes.batch[0]
        if is_monotone(model):
            return _forward_only(model, x)
        weight_names = {f"{n}.weight" if n else "weight" for n, _ in prunable_layers(model)}
        params = {
            n: p.detach().to(torch.float64).abs().requires_grad_(n in weight_names)
            for n, p in model.named_parameters()
        }
        buffers = {n: b.to(torch.float64) if b.is_floating_point() else b for n, b in model.named_buffers()}
        ones = torch.ones((1, *x.shape[1:]), dtype=torch.float64, device=x.device)
        with batch_norm_removed(model), torch.enable_grad():
            r = functional_call(model, (params, buffers), (ones,)).sum()
        # in the model's order, not the set's: set order follows PYTHONHASHSEED, which made
        # the float64 sum (and so the score's last digits) differ from process to process
        live = [p for n, p in params.items() if n in weight_names]
        grads = torch.autograd.grad(r, live, allow_unused=True)
        return float(
            sum((w.detach() * g).abs().sum() for w, g in zip(live, grads, strict=True) if g is not None)
        )

    def score_stacked(self, passes: StackedPasses) -> list[float]:
        """Every network of a stack at once: the forward-only path on the stacked module
        (one all-ones input per network), each network's tangent logits summed. A stack
        that does not promise monotone layers is refused (scored network by network)."""
        model = passes.module
        if not is_monotone(model):
            raise TypeError("synflow scores stacks of monotone networks only")
        x = passes.batch[0]
        ones = torch.ones((1, passes.count, *x.shape[1:]), dtype=torch.float64, device=x.device)
        out = _tangent_forward(model, torch.cat([ones, torch.zeros_like(ones)]))
        return [float(v) for v in out[1].sum(dim=-1).cpu()]


def _forward_only(model: torch.nn.Module, x: torch.Tensor) -> float:
    """The score of a monotone network: the tangent half of a batch-2 forward, no graph."""
    ones = torch.ones((1, *x.shape[1:]), dtype=torch.float64, device=x.device)
    pair = torch.cat([ones, torch.zeros_like(ones)])
    if pair.dim() == 4:  # NHWC: CPU average pooling is ~4x faster on it (equal to rounding)
        pair = pair.contiguous(memory_format=torch.channels_last)
    return float(_tangent_forward(model, pair)[1].sum())


def _tangent_forward(model: torch.nn.Module, pair: torch.Tensor) -> torch.Tensor:
    """The output of a monotone network on (input, tangent), no graph.

    With BatchNorm silenced (:func:`batch_norm_removed`), one walk over the modules swaps
    every other parameter for its float64 absolute value (and floating buffers for float64
    copies) and hooks the Conv/Linear layers; all of it is undone on the way out.
    (``functional_call`` does the same swap generically, at several walks' cost: a third of
    the time on NAS-Bench-201.)
    """
    swaps: list[tuple[dict[str, torch.Tensor | None], str, torch.Tensor]] = []
    converted: dict[int, torch.Tensor] = {}  # tied parameters stay tied
    handles = []
    try:
        with batch_norm_removed(model):
            for m in model.modules():
                if isinstance(m, _BatchNorm):  # removed: its tensors are never read
                    continue
                params = cast("dict[str, torch.Tensor | None]", m._parameters)  # swapped for tensors here
                for table, absolute in ((params, True), (m._buffers, False)):
                    for name, t in table.items():
                        if t is None or not t.is_floating_point():
                            continue
                        new = converted.get(id(t))
                        if new is None:
                            new = t.detach().to(torch.float64)
                            new = converted[id(t)] = new.abs() if absolute else new
                        swaps.append((table, name, t))
                        table[name] = new
                if isinstance(m, _ConvNd | torch.nn.Linear):
                    handles.append(m.register_forward_pre_hook(_tangent_in))
                    handles.append(m.register_forward_hook(_tangent_out))
            with torch.no_grad():
                return model(pair)
    finally:
        for h in handles:
            h.remove()
        for table, name, t in reversed(swaps):
            table[name] = t


def _tangent_in(_layer: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """(x, t) -> (x, x + t): the layer's weights are the direction, so W's tangent output
    W t + (dW) x is W (x + t)."""
    (pair,) = args
    return (torch.cat([pair[:1], pair[:1] + pair[1:]]),)


def _tangent_out(layer: torch.nn.Module, _args: object, out: torch.Tensor) -> torch.Tensor:
    """The bias is not scaled with the weights: take it back off the tangent half."""
    bias = getattr(layer, "bias", None)
    if bias is None:
        return out
    return torch.cat([out[:1], out[1:] - bias.view(1, -1, *([1] * (out.dim() - 2)))])
