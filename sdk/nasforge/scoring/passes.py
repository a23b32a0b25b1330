"""One forward/backward per (model, batch), shared by every metric that can use it.

Most zero-cost proxies are functionals of the same few quantities: the loss gradient of
the Conv/Linear weights (grad_norm, snip), its Hessian product (grasp), layer outputs and
their gradients (fisher), the input gradient (jacob_cov), the ReLU activation pattern
(naswot) and an empirical kernel (NTK trace, condition number, lambda_min, KNAS).
:class:`SharedPasses` computes each once, on demand, and memoises it; metrics read from
it instead of running their own passes. Metrics declare up front which taps of the main
pass they need, so one forward captures all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.backends import KernelSpec, Spectrum, can_share_pass, empirical_ntks, prunable_layers, spectrum
from nasforge.metric import Batch, MetricContext

#: Taps of the main pass a metric may declare in ``needs``.
WEIGHT_GRADS = "weight_grads"  # d loss / d W for every Conv/Linear weight
HESSIAN_GRAD = "hessian_grad"  # H g for the same weights (double backward)
LAYER_GRADS = "layer_grads"  # Conv/Linear outputs and d loss / d output
RELU_KERNEL = "relu_kernel"  # sum over ReLUs of the binary-pattern agreement kernel
INPUT_GRAD = "input_grad"  # d (sum of logits) / d input
TAPS = frozenset({WEIGHT_GRADS, HESSIAN_GRAD, LAYER_GRADS, RELU_KERNEL, INPUT_GRAD})


@attrs.frozen(eq=False)
class MainPass:
    """What one forward and its backward passes produced (absent taps are ``None``)."""

    logits: torch.Tensor
    loss: torch.Tensor
    weights: tuple[torch.Tensor, ...]
    weight_grads: tuple[torch.Tensor, ...] | None = None
    hessian_grad: tuple[torch.Tensor, ...] | None = None
    layer_outputs: tuple[torch.Tensor, ...] | None = None
    layer_output_grads: tuple[torch.Tensor, ...] | None = None
    #: Per layer output, the weights that feed each of its channels (``weight[0].numel()``:
    #: C_in/groups·k·k for a conv), for metrics that spread a channel's value over them.
    layer_fan_in: tuple[int, ...] | None = None
    relu_kernel: torch.Tensor | None = None
    input_grad: torch.Tensor | None = None


def _loss(logits: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "mse":
        onehot = F.one_hot(y, logits.shape[-1]).to(logits.dtype)
        return F.mse_loss(logits, onehot)
    return F.cross_entropy(logits, y)


def _zeros_for_unused(grads: tuple[torch.Tensor | None, ...], like: list[torch.Tensor]) -> tuple:
    # A layer the loss never reaches (e.g. behind a `none` op) has a zero gradient.
    return tuple(
        (g if g is not None else torch.zeros_like(t)).detach() for g, t in zip(grads, like, strict=True)
    )


class SharedPasses:
    """Lazily computed, memoised intermediate results for one model on one batch.

    The model is used as given (train/eval mode included) and not modified, apart from
    BatchNorm running statistics that a train-mode forward updates as usual.
    """

    def __init__(
        self,
        model: nn.Module,
        batch: Batch,
        ctx: MetricContext,
        needs: frozenset[str] = frozenset(),
        kernels: frozenset[KernelSpec] = frozenset(),
    ) -> None:
        unknown = set(needs) - TAPS
        if unknown:
            raise ValueError(f"unknown shared-pass taps {sorted(unknown)}; known: {sorted(TAPS)}")
        self.model = model
        self.batch = batch
        self.ctx = ctx
        self.needs = frozenset(needs)
        #: Kernels the metrics will ask for: computed together where they can share a pass.
        self.kernels = frozenset(self._normalise(k) for k in kernels)
        self._main: MainPass | None = None
        self._computed: frozenset[str] = frozenset()
        self._memo: dict[Any, Any] = {}
        #: How many main passes ran (the scorer's tests and benchmark read it).
        self.main_passes = 0

    # --- the main forward/backward ----------------------------------------------------
    def main(self, needs: frozenset[str] = frozenset()) -> MainPass:
        """The main pass with at least ``needs``; recomputed only if a tap is missing."""
        wanted = self.needs | needs
        if self._main is None or not wanted <= self._computed:
            self.needs = wanted
            self._main = self._run_main(wanted)
            self._computed = wanted
            self.main_passes += 1
        return self._main

    def _run_main(self, needs: frozenset[str]) -> MainPass:
        x, y = self.batch
        model = self.model
        layers = [m for _, m in prunable_layers(model)]
        # frozen weights have no gradient to take (autograd.grad would refuse them)
        weights = [m.weight for m in layers if isinstance(m.weight, torch.Tensor) and m.weight.requires_grad]
        outputs: list[torch.Tensor] = []
        fan_in: list[int] = []
        kernel: list[torch.Tensor] = []
        hooks = []
        if LAYER_GRADS in needs:

            def layer_tap(m: nn.Module, _i: object, out: torch.Tensor) -> None:
                outputs.append(out)
                fan_in.append(m.weight[0].numel())

            for m in layers:
                hooks.append(m.register_forward_hook(layer_tap))
        if RELU_KERNEL in needs:
            n = x.shape[0]
            kernel.append(torch.zeros(n, n, dtype=torch.float64, device=x.device))

            def relu_tap(_m: nn.Module, inp: tuple[torch.Tensor, ...]) -> None:
                # K = c cᵀ + (1-c)(1-c)ᵀ = 2 c cᵀ - s_i - s_j + F with s the active counts:
                # one matmul, in float32 (exact: integer counts far below 2^24).
                codes = (inp[0].detach() > 0).reshape(inp[0].shape[0], -1).to(torch.float32)
                active = codes.sum(1, dtype=torch.float64)
                both = (codes @ codes.T).to(torch.float64)
                kernel[0] += 2 * both - active[:, None] - active[None, :] + codes.shape[1]

            for m in model.modules():
                if isinstance(m, nn.ReLU):
                    hooks.append(m.register_forward_pre_hook(relu_tap))
        x_in = x.detach().requires_grad_(INPUT_GRAD in needs)
        try:
            with torch.enable_grad():
                logits = model(x_in)
        finally:
            for h in hooks:
                h.remove()
        loss = _loss(logits, y, self.ctx.loss)
        input_grad = None
        if INPUT_GRAD in needs:
            (input_grad,) = torch.autograd.grad(logits.sum(), x_in, retain_graph=True)
        wg = hg = og = None
        if needs & {WEIGHT_GRADS, HESSIAN_GRAD, LAYER_GRADS}:
            targets = weights + outputs
            second = HESSIAN_GRAD in needs
            grads = torch.autograd.grad(loss, targets, create_graph=second, allow_unused=True)
            w_raw, o_raw = grads[: len(weights)], grads[len(weights) :]
            wg = _zeros_for_unused(w_raw, weights)
            og = _zeros_for_unused(o_raw, outputs) if outputs else None
            if second:
                z = sum((g * d).sum() for g, d in zip(w_raw, wg, strict=True) if g is not None)
                if isinstance(z, torch.Tensor) and z.requires_grad:
                    hg = _zeros_for_unused(torch.autograd.grad(z, weights, allow_unused=True), weights)
                else:
                    hg = tuple(torch.zeros_like(w) for w in weights)
        return MainPass(
            logits=logits.detach(),
            loss=loss.detach(),
            weights=tuple(w.detach() for w in weights),
            weight_grads=wg,
            hessian_grad=hg,
            layer_outputs=tuple(o.detach() for o in outputs) if outputs else None,
            layer_output_grads=og,
            layer_fan_in=tuple(fan_in) if outputs else None,
            relu_kernel=kernel[0] if kernel else None,
            input_grad=None if input_grad is None else input_grad.detach(),
        )

    # --- kernels -------------------------------------------------------------------------
    def _normalise(self, spec: KernelSpec) -> KernelSpec:
        # a loss-gradient kernel follows the context's loss, like the main pass
        return attrs.evolve(spec, loss=self.ctx.loss) if spec.output == "loss" else spec

    def kernel(self, spec: KernelSpec) -> torch.Tensor:
        """The empirical kernel of ``spec`` on this batch (memoised by spec).

        Declared kernels that can share a pass with ``spec`` are computed with it.
        """
        spec = self._normalise(spec)
        key = ("kernel", spec)
        if key not in self._memo:
            others = sorted(
                (k for k in self.kernels if k != spec and ("kernel", k) not in self._memo),
                key=KernelSpec.key,
            )
            group = [spec] + [k for k in others if can_share_pass([spec, k])]
            x, y = self.batch
            found = empirical_ntks(
                self.model, x, y, specs=group, chunk_size=self.ctx.chunk_size, device=self.ctx.device
            )
            for k, theta in zip(group, found, strict=True):
                self._memo[("kernel", k)] = theta
        return self._memo[key]

    def spectrum(self, spec: KernelSpec) -> Spectrum:
        """Trace and eigenvalues of :meth:`kernel` (one eigendecomposition per spec)."""
        spec = self._normalise(spec)
        return self.memo(("spectrum", spec), lambda: spectrum(self.kernel(spec)))

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Memoise any other quantity several metrics share, under a hashable key."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]
