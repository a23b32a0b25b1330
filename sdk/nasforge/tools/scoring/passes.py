"""One forward/backward per (model, batch), shared by every metric that can use it.

Most zero-cost proxies are functionals of the same few quantities: the loss gradient of
the Conv/Linear weights (grad_norm, snip), its Hessian product (grasp), layer outputs and
their gradients (fisher), the input gradient (jacob_cov), the ReLU activation pattern
(naswot) and an empirical kernel (condition number, lambda_min). A metric that reads a
kernel only through its diagonal (an NTK trace, Eigen-NAS's score) or the sum of its
entries (KNAS) asks for per-sample gradient norms instead, which never form the kernel's
Jacobian (:meth:`SharedPasses.norms`). :class:`SharedPasses` computes each once, on demand,
and memoises it; metrics read from it instead of running their own passes. Metrics declare
up front which taps of the main pass and which kernels they need, so one forward captures
all of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import attrs
import torch
import torch.nn.functional as F
from torch import nn

from nasforge.kernel.metric import Batch, MetricContext
from nasforge.tools.backends import (
    KernelSpec,
    SampleNorms,
    Spectrum,
    can_share_norms,
    can_share_pass,
    empirical_ntks,
    is_out_of_memory,
    joint_sample_grad_norms,
    prunable_layers,
    resolve_device,
    spectrum,
)

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


def _hessian_product(
    w_raw: tuple[torch.Tensor | None, ...], direction: tuple[torch.Tensor, ...], weights: list[torch.Tensor]
) -> tuple[torch.Tensor, ...]:
    """H v for the weights, from gradients taken with ``create_graph``: one double backward
    of z = Σ (∂L/∂w) · stopgrad(v) (Pearlmutter; no second forward, unlike the reference)."""
    z = sum((g * d).sum() for g, d in zip(w_raw, direction, strict=True) if g is not None)
    if isinstance(z, torch.Tensor) and z.requires_grad:
        return _zeros_for_unused(torch.autograd.grad(z, weights, allow_unused=True), weights)
    return tuple(torch.zeros_like(w) for w in weights)


def _relu_kernel(codes: torch.Tensor) -> torch.Tensor:
    """Σ over units of [c_i = c_j] for binary codes (samples x units), in float64.

    K = c cᵀ + (1-c)(1-c)ᵀ = 2 c cᵀ - s_i - s_j + F with s the active counts: one matmul,
    in float32 (exact: integer counts far below 2^24).
    """
    c = codes.to(torch.float32)
    active = c.sum(1, dtype=torch.float64)
    both = (c @ c.T).to(torch.float64)
    return 2 * both - active[:, None] - active[None, :] + c.shape[1]


def _release_cached_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _check_model_device(model: nn.Module, device: torch.device) -> None:
    """Refuse a model whose parameters are not on ``device`` (see :class:`SharedPasses`)."""
    for p in model.parameters():
        here = p.device
        if here.type != device.type or (device.index is not None and here.index != device.index):
            raise ValueError(
                f"model is on {here} but the metric context's device is {device}: "
                "move the model there (model.to(device)) or set MetricContext(device=...)"
            )
        return


@attrs.define
class _Forward:
    """What one forward (of the batch or of a chunk) captured."""

    logits: torch.Tensor = attrs.field(default=None)
    x_in: torch.Tensor = attrs.field(default=None)
    outputs: list[torch.Tensor] = attrs.Factory(list)
    fan_in: list[int] = attrs.Factory(list)
    kernel: torch.Tensor | None = None
    codes: list[torch.Tensor] = attrs.Factory(list)


class SharedPasses:
    """Lazily computed, memoised intermediate results for one model on one batch.

    The model is used as given (train/eval mode included) and not modified, apart from
    BatchNorm running statistics that a train-mode forward updates as usual.

    Everything runs on ``ctx.device``: the batch is moved there, and the model must
    already be there (moving the caller's network behind its back would surprise it; a
    model elsewhere is a clear error, not a device-mismatch deep in a kernel). The main
    pass starts on the whole batch and halves its chunk on out-of-memory
    (:meth:`_run_main`); ``main_chunk`` caps the first try (tests, known-small GPUs).
    """

    def __init__(
        self,
        model: nn.Module,
        batch: Batch,
        ctx: MetricContext,
        needs: frozenset[str] = frozenset(),
        kernels: frozenset[KernelSpec] = frozenset(),
        *,
        diagonals: frozenset[KernelSpec] = frozenset(),
        totals: frozenset[KernelSpec] = frozenset(),
        main_chunk: int | None = None,
    ) -> None:
        unknown = set(needs) - TAPS
        if unknown:
            raise ValueError(f"unknown shared-pass taps {sorted(unknown)}; known: {sorted(TAPS)}")
        self.device = resolve_device(ctx.device)
        _check_model_device(model, self.device)
        self.model = model
        x, y = batch
        self.batch = (x.to(self.device), y.to(self.device))
        self.ctx = ctx
        self.needs = frozenset(needs)
        #: Kernels the metrics will ask for: computed together where they can share a pass.
        self.kernels = frozenset(self._normalise(k) for k in kernels)
        #: Kernels read only through their diagonal, and through the sum of their entries:
        #: served by per-sample gradient norms (one pass for those that can share it).
        self.diagonals = frozenset(self._normalise(k) for k in diagonals)
        self.totals = frozenset(self._normalise(k) for k in totals)
        self._main: MainPass | None = None
        self._computed: frozenset[str] = frozenset()
        self._memo: dict[Any, Any] = {}
        #: How many main passes ran (the scorer's tests and benchmark read it).
        self.main_passes = 0
        #: Samples per chunk of the main pass: ``None`` (the whole batch) until a pass
        #: ran, then the size that fitted; set it to start smaller.
        self.main_chunk: int | None = main_chunk
        #: Every out-of-memory split of the main pass, as (chunk tried, chunk next).
        self.oom_retries: list[tuple[int, int]] = []
        #: Wall seconds per phase of the main pass (forward, input_grad, backward,
        #: hessian, and main for all of it): where the time goes (benchmarks read it;
        #: on CUDA without synchronisation, only ``main`` is meaningful).
        self.phase_seconds: dict[str, float] = {}

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
        """The main pass over the whole batch, split into chunks on out-of-memory.

        The whole batch first; on an out-of-memory error the chunk is halved and the pass
        re-run from the start (a pass is all or nothing: half-accumulated gradients are
        dropped), down to one sample. Each split is recorded in :attr:`oom_retries`.
        """
        x, y = self.batch
        n = int(x.shape[0])
        size = min(self.main_chunk, n) if self.main_chunk else n
        while True:
            try:
                start = time.perf_counter()
                out = self._run_whole(needs) if size >= n else self._run_chunked(needs, size)
                self.phase_seconds["main"] = self.phase_seconds.get("main", 0.0) + time.perf_counter() - start
                self.main_chunk = size
                return out
            except (RuntimeError, MemoryError) as exc:
                if not is_out_of_memory(exc) or size <= 1:
                    raise
                smaller = max(1, (size + 1) // 2)
                self.oom_retries.append((size, smaller))
                _release_cached_memory()
                size = smaller

    def _tick(self, phase: str, since: float) -> float:
        now = time.perf_counter()
        self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + now - since
        return now

    def _weights(self) -> tuple[list[nn.Module], list[torch.Tensor]]:
        layers = [m for _, m in prunable_layers(self.model)]
        # frozen weights have no gradient to take (autograd.grad would refuse them)
        weights = [m.weight for m in layers if isinstance(m.weight, torch.Tensor) and m.weight.requires_grad]
        return layers, weights

    def _forward(
        self, x: torch.Tensor, needs: frozenset[str], layers: list[nn.Module], *, keep_codes: bool
    ) -> _Forward:
        """One forward of ``x`` with the taps ``needs`` asks for.

        The ReLU kernel is accumulated inside the hook (no code is kept) unless
        ``keep_codes``: a chunk cannot form the kernel's cross-chunk entries alone, so it
        keeps each ReLU's binary pattern (1 byte a unit, no graph) for :func:`_relu_kernel`.
        """
        fwd = _Forward()
        hooks = []
        if LAYER_GRADS in needs:

            def layer_tap(m: nn.Module, _i: object, out: torch.Tensor) -> None:
                fwd.outputs.append(out)
                fwd.fan_in.append(cast(torch.Tensor, m.weight)[0].numel())

            for m in layers:
                hooks.append(m.register_forward_hook(layer_tap))
        if RELU_KERNEL in needs:
            if not keep_codes:
                b = x.shape[0]
                fwd.kernel = torch.zeros(b, b, dtype=torch.float64, device=x.device)

            def relu_tap(_m: nn.Module, inp: tuple[torch.Tensor, ...]) -> None:
                codes = (inp[0].detach() > 0).reshape(inp[0].shape[0], -1)
                if fwd.kernel is None:
                    fwd.codes.append(codes)
                else:
                    fwd.kernel += _relu_kernel(codes)

            for m in self.model.modules():
                if isinstance(m, nn.ReLU):
                    hooks.append(m.register_forward_pre_hook(relu_tap))
        fwd.x_in = x.detach().requires_grad_(INPUT_GRAD in needs)
        try:
            with torch.enable_grad():
                fwd.logits = self.model(fwd.x_in)
        finally:
            for h in hooks:
                h.remove()
        return fwd

    def _run_whole(self, needs: frozenset[str]) -> MainPass:
        """Everything from one forward on the whole batch; Hg from the same graph as g."""
        x, y = self.batch
        layers, weights = self._weights()
        t = time.perf_counter()
        fwd = self._forward(x, needs, layers, keep_codes=False)
        loss = _loss(fwd.logits, y, self.ctx.loss)
        t = self._tick("forward", t)
        input_grad = None
        if INPUT_GRAD in needs:
            (input_grad,) = torch.autograd.grad(fwd.logits.sum(), fwd.x_in, retain_graph=True)
            t = self._tick("input_grad", t)
        wg = hg = og = None
        outputs = fwd.outputs
        if needs & {WEIGHT_GRADS, HESSIAN_GRAD, LAYER_GRADS}:
            second = HESSIAN_GRAD in needs
            grads = torch.autograd.grad(loss, weights + outputs, create_graph=second, allow_unused=True)
            w_raw, o_raw = grads[: len(weights)], grads[len(weights) :]
            wg = _zeros_for_unused(w_raw, weights)
            og = _zeros_for_unused(o_raw, outputs) if outputs else None
            t = self._tick("backward", t)
            if second:
                hg = _hessian_product(w_raw, wg, weights)
                t = self._tick("hessian", t)
        return MainPass(
            logits=fwd.logits.detach(),
            loss=loss.detach(),
            weights=tuple(w.detach() for w in weights),
            weight_grads=wg,
            hessian_grad=hg,
            layer_outputs=tuple(o.detach() for o in outputs) if outputs else None,
            layer_output_grads=og,
            layer_fan_in=tuple(fwd.fan_in) if outputs else None,
            relu_kernel=fwd.kernel,
            input_grad=None if input_grad is None else input_grad.detach(),
        )

    def _run_chunked(self, needs: frozenset[str], size: int) -> MainPass:
        """The same quantities, ``size`` samples at a time.

        The batch loss is the mean over samples, so chunk c contributes its own mean loss
        times n_c/N: gradients, layer-output gradients and H g add up over chunks; H g
        needs the whole-batch g, so it takes a second sweep (the zero-cost ``split_data``
        order). Exact for networks whose samples do not interact; BatchNorm in train mode
        normalises each chunk with the chunk's own statistics, as the reference's split
        does, so there the scores move by the difference of statistics.
        """
        x, y = self.batch
        n = int(x.shape[0])
        layers, weights = self._weights()
        spans = [(a, min(n, a + size)) for a in range(0, n, size)]
        logits, losses, input_grads, codes = [], [], [], []
        outputs: list[list[torch.Tensor]] = []
        output_grads: list[list[torch.Tensor]] = []
        fan_in: list[int] = []
        wg: list[torch.Tensor] | None = None
        first = needs - {HESSIAN_GRAD}
        for a, b in spans:
            t = time.perf_counter()
            fwd = self._forward(x[a:b], first, layers, keep_codes=True)
            loss = _loss(fwd.logits, y[a:b], self.ctx.loss) * ((b - a) / n)
            t = self._tick("forward", t)
            if INPUT_GRAD in needs:
                input_grads.append(
                    torch.autograd.grad(fwd.logits.sum(), fwd.x_in, retain_graph=True)[0].detach()
                )
                t = self._tick("input_grad", t)
            if needs & {WEIGHT_GRADS, HESSIAN_GRAD, LAYER_GRADS}:
                grads = torch.autograd.grad(loss, weights + fwd.outputs, allow_unused=True)
                part = _zeros_for_unused(grads[: len(weights)], weights)
                wg = list(part) if wg is None else [s + p for s, p in zip(wg, part, strict=True)]
                if fwd.outputs:
                    og = _zeros_for_unused(grads[len(weights) :], fwd.outputs)
                    outputs.append([o.detach() for o in fwd.outputs])
                    output_grads.append(list(og))
                    fan_in = fwd.fan_in
                t = self._tick("backward", t)
            logits.append(fwd.logits.detach())
            losses.append(loss.detach())
            codes.append(fwd.codes)
        hg: list[torch.Tensor] | None = None
        if HESSIAN_GRAD in needs:
            assert wg is not None
            for a, b in spans:
                t = time.perf_counter()
                fwd = self._forward(x[a:b], frozenset(), layers, keep_codes=True)
                loss = _loss(fwd.logits, y[a:b], self.ctx.loss) * ((b - a) / n)
                w_raw = torch.autograd.grad(loss, weights, create_graph=True, allow_unused=True)
                part = _hessian_product(w_raw, tuple(wg), weights)
                hg = list(part) if hg is None else [s + p for s, p in zip(hg, part, strict=True)]
                self._tick("hessian", t)
        kernel = None
        if RELU_KERNEL in needs:
            per_relu = zip(*codes, strict=True)  # the same ReLUs fire, in the same order, per chunk
            zero = torch.zeros(n, n, dtype=torch.float64, device=x.device)
            kernel = sum((_relu_kernel(torch.cat(c)) for c in per_relu), zero)
        cat_layers = [torch.cat(parts) for parts in zip(*outputs, strict=True)] if outputs else []
        cat_grads = [torch.cat(parts) for parts in zip(*output_grads, strict=True)] if outputs else []
        return MainPass(
            logits=torch.cat(logits),
            loss=torch.stack(losses).sum(),
            weights=tuple(w.detach() for w in weights),
            weight_grads=None if wg is None else tuple(wg),
            hessian_grad=None if hg is None else tuple(hg),
            layer_outputs=tuple(cat_layers) if cat_layers else None,
            layer_output_grads=tuple(cat_grads) if cat_grads else None,
            layer_fan_in=tuple(fan_in) if cat_layers else None,
            relu_kernel=kernel,
            input_grad=torch.cat(input_grads) if input_grads else None,
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

    def norms(self, spec: KernelSpec, *, total: bool = False) -> SampleNorms:
        """The diagonal of ``spec``'s kernel (and, with ``total``, the sum of its entries).

        From the kernel itself where it is computed anyway (declared in ``kernels``, or
        already memoised); otherwise from per-sample gradient norms, together with every
        declared diagonal and total that can share their forward. Memoised by spec.
        """
        spec = self._normalise(spec)
        key = ("norms", spec)
        found = self._memo.get(key)
        if found is not None and (found.total is not None or not total):
            return found
        if spec in self.kernels or ("kernel", spec) in self._memo:
            theta = self.kernel(spec)
            diag = torch.diagonal(theta).clone()
            rows = diag.reshape(self.batch[0].shape[0], -1) if spec.output == "full" else diag
            self._memo[key] = SampleNorms(rows, float(theta.sum()))
            return self._memo[key]
        wanted = self.diagonals | self.totals
        others = sorted(
            (k for k in wanted if k != spec and ("norms", k) not in self._memo and k not in self.kernels),
            key=KernelSpec.key,
        )
        group = [spec] + [k for k in others if can_share_norms([spec, k])]
        flags = [k in self.totals or (k == spec and total) for k in group]
        x, y = self.batch
        results = joint_sample_grad_norms(
            self.model, x, y, specs=group, chunk_size=self.ctx.chunk_size, device=self.device, totals=flags
        )
        for k, result in zip(group, results, strict=True):
            self._memo[("norms", k)] = result
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
