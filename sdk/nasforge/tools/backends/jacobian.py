"""Per-sample Jacobians of a network's outputs with respect to its parameters.

Built on torch.func so one code path serves CPU and CUDA: ``vmap(grad)`` over samples
when each sample is forwarded alone (one batched backward for the whole chunk), and
``jacrev`` of the batch function when BatchNorm couples the samples (exact, one backward
per output row). Chunks halve themselves on out-of-memory. ``bn="decomposed"`` is the
HNAS code's per-sample gradient instead: one backward of the batch, then each layer's
gradient split into per-sample shares (:func:`decomposed_jacobian`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call, grad, jacrev, vjp, vmap

from nasforge.kernel.device import resolve_device
from nasforge.tools.backends.chunking import map_chunks, retry_on_oom
from nasforge.tools.backends.functional import (
    batch_norm_mode,
    per_sample_head,
    prunable_layers,
    split_parameters,
)
from nasforge.tools.backends.spec import KernelSpec

Params = dict[str, torch.Tensor]


def sample_function(
    model: nn.Module, fixed: Params, spec: KernelSpec
) -> Callable[[Params, torch.Tensor, torch.Tensor], torch.Tensor]:
    """``f(params, x, y)``: one sample's head output, the sample forwarded alone."""

    def f(params: Params, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, (params, fixed), (x.unsqueeze(0),))[0]
        return per_sample_head(logits, y, spec.output, spec.loss)

    return f


def batch_function(
    model: nn.Module, fixed: Params, spec: KernelSpec, x: torch.Tensor, y: torch.Tensor
) -> Callable[[Params], torch.Tensor]:
    """``f(params)``: every sample's head output, flattened to one vector.

    With ``bn="batch"`` the batch is forwarded together (BN couples samples); otherwise
    samples are forwarded one by one under ``vmap`` so the two agree with the sample view.
    """
    if spec.bn == "batch":

        def coupled(params: Params) -> torch.Tensor:
            logits = functional_call(model, (params, fixed), (x,))
            heads = vmap(lambda lg, t: per_sample_head(lg, t, spec.output, spec.loss))(logits, y)
            return heads.reshape(-1)

        return coupled
    single = sample_function(model, fixed, spec)

    def separate(params: Params) -> torch.Tensor:
        return vmap(single, in_dims=(None, 0, 0))(params, x, y).reshape(-1)

    return separate


def _labels(y: torch.Tensor | None, n: int, device: torch.device) -> torch.Tensor:
    # A placeholder keeps one vmapped signature for label-free heads.
    return torch.zeros(n, dtype=torch.long, device=device) if y is None else y.to(device)


def _flatten(jac: Params, rows: int) -> torch.Tensor:
    return torch.cat([j.reshape(rows, -1) for j in jac.values()], dim=1)


def jacobian(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    spec: KernelSpec = KernelSpec(),
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
) -> torch.Tensor:
    """The ``(rows, P)`` Jacobian of per-sample outputs w.r.t. the chosen parameters.

    ``rows`` is the batch size, or batch x classes for ``output="full"``. Row order is
    sample-major. The model is left unchanged.
    """
    if spec.needs_labels and targets is None:
        raise ValueError(f"output '{spec.output}' needs targets")
    if spec.bn == "decomposed":
        return decomposed_jacobian(model, inputs, targets, spec=spec, device=device)
    dev = resolve_device(device)
    x = inputs.to(dev)
    y = _labels(targets, x.shape[0], dev)
    with batch_norm_mode(model, spec.bn):
        # inside the context: detached running statistics must not be passed back in
        params, fixed = split_parameters(model, spec.params, dev)
        if spec.bn == "batch":
            f = batch_function(model, fixed, spec, x, y)

            def run(size: int) -> Params:
                return jacrev(f, chunk_size=size)(params)

            jac = retry_on_oom(run, chunk_size)
            rows = next(iter(jac.values())).shape[0]
            return _flatten(jac, rows)
        single = sample_function(model, fixed, spec)
        per = jacrev(single) if spec.output == "full" else grad(single)
        batched = vmap(per, in_dims=(None, 0, 0))

        def chunk(a: int, b: int) -> torch.Tensor:
            jac = batched(params, x[a:b], y[a:b])
            k = 1 if spec.output != "full" else next(iter(jac.values())).shape[1]
            return _flatten(jac, (b - a) * k)

        return torch.cat(map_chunks(chunk, x.shape[0], chunk_size), dim=0)


def decomposed_jacobian(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    spec: KernelSpec,
    device: str | torch.device | None = "cpu",
) -> torch.Tensor:
    """The ``(batch, P)`` per-sample shares of the batch gradient of Σ_i head_i.

    The batch is forwarded together (BatchNorm on batch statistics, nothing written),
    Σ_i head_i back-propagated once to every Conv/Linear output, and each call of a layer
    split by sample: row i holds ∂⟨layer(a_i), δ_i⟩/∂θ_layer, a_i the layer's input and δ_i
    the back-propagated gradient at its output for sample i. That is the autograd-hacks
    per-sample gradient (back-prop ⊗ activation) the HNAS code forms its NTK from. The
    rows sum to the batch gradient; without a batch coupling (no train-mode BatchNorm)
    each row is the exact per-sample gradient. Columns follow ``model.named_parameters()``
    as :func:`jacobian`'s do; a layer that never runs contributes zeros.
    """
    if spec.needs_labels and targets is None:
        raise ValueError(f"output '{spec.output}' needs targets")
    if spec.output == "full":
        raise ValueError("a decomposed Jacobian takes a scalar output per sample, not 'full'")
    dev = resolve_device(device)
    x = inputs.to(dev)
    n = x.shape[0]
    y = _labels(targets, n, dev)
    with batch_norm_mode(model, "decomposed"):
        live, _ = split_parameters(model, spec.params, dev)
        owned: dict[nn.Module, tuple[str, list[str]]] = {}
        for name, layer in prunable_layers(model):
            prefix = f"{name}." if name else ""
            local = [p for p, _ in layer.named_parameters(recurse=False) if prefix + p in live]
            if local:
                owned[layer] = (prefix, local)
        calls: list[tuple[nn.Module, torch.Tensor, torch.Tensor]] = []

        def tap(layer: nn.Module, inp: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
            calls.append((layer, inp[0], out))

        hooks = [layer.register_forward_hook(tap) for layer in owned]
        try:
            with torch.enable_grad():
                # the input asks for a gradient so every layer output is in the graph
                logits = model(x.detach().requires_grad_(True))
                heads = vmap(lambda lg, t: per_sample_head(lg, t, spec.output, spec.loss))(logits, y)
        finally:
            for h in hooks:
                h.remove()
        outs = [out for _, _, out in calls]
        deltas = torch.autograd.grad(heads.sum(), outs, allow_unused=True) if outs else ()
    cols = {name: torch.zeros(n, t.numel(), dtype=t.dtype, device=dev) for name, t in live.items()}
    for (layer, a, _), delta in zip(calls, deltas, strict=True):
        if delta is None:
            continue
        prefix, local = owned[layer]
        own = {p: getattr(layer, p).detach().to(dev) for p in local}

        def share(ai: torch.Tensor, di: torch.Tensor, layer: nn.Module = layer, own: Params = own) -> Params:
            _, pullback = vjp(lambda q: functional_call(layer, q, (ai.unsqueeze(0),)), own)  # type: ignore[misc]  # a pair without has_aux
            return pullback(di.unsqueeze(0))[0]

        shares = vmap(share)(a.detach(), delta.detach())
        for p in local:
            cols[prefix + p] += shares[p].reshape(n, -1)
    return torch.cat(list(cols.values()), dim=1)


def per_sample_grads(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    loss: str = "cross_entropy",
    bn: str = "sample",
    params: str = "all",
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
) -> Params:
    """Per-sample loss gradients by parameter name, each ``(batch, *param.shape)``.

    The by-name layout is what optimisers and pruning code want; kernels use
    :func:`jacobian` instead, which returns the same numbers as one flat matrix.
    """
    spec = KernelSpec(output="loss", bn=bn, params=params, loss=loss)
    dev = resolve_device(device)
    live, _ = split_parameters(model, params, dev)
    flat = jacobian(model, inputs, targets, spec=spec, chunk_size=chunk_size, device=dev)
    out: Params = {}
    col = 0
    for name, p in live.items():
        out[name] = flat[:, col : col + p.numel()].reshape(flat.shape[0], *p.shape)
        col += p.numel()
    return out


def can_share_pass(specs: Sequence[KernelSpec]) -> bool:
    """Whether ``specs`` differ only in their scalar head, so one vmapped pass serves all."""
    first = specs[0]
    return all(
        s.method == "jacrev"
        and s.bn not in ("batch", "decomposed")
        and s.output != "full"
        and (s.bn, s.params, s.loss) == (first.bn, first.params, first.loss)
        for s in specs
    )


def joint_jacobians(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    specs: Sequence[KernelSpec],
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
) -> list[torch.Tensor]:
    """:func:`jacobian` for several specs at once, one forward per sample for all heads.

    The NTK (sum of logits) and KNAS (loss) kernels differ only in the head, so their
    per-sample forwards are shared and the backward passes batched together. Falls back
    to one :func:`jacobian` per spec when the specs cannot share a pass.
    """
    specs = list(specs)
    if len(specs) == 1 or not can_share_pass(specs):
        return [jacobian(model, inputs, targets, spec=s, chunk_size=chunk_size, device=device) for s in specs]
    if any(s.needs_labels for s in specs) and targets is None:
        raise ValueError("a requested output needs targets")
    base = specs[0]
    dev = resolve_device(device)
    x = inputs.to(dev)
    y = _labels(targets, x.shape[0], dev)
    outputs = [s.output for s in specs]

    with batch_norm_mode(model, base.bn):
        # inside the context: detached running statistics must not be passed back in
        params, fixed = split_parameters(model, base.params, dev)

        def heads(p: Params, xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
            logits = functional_call(model, (p, fixed), (xi.unsqueeze(0),))[0]
            return torch.stack([per_sample_head(logits, yi, o, base.loss) for o in outputs])

        batched = vmap(jacrev(heads), in_dims=(None, 0, 0))

        def chunk(a: int, b: int) -> list[torch.Tensor]:
            jac = batched(params, x[a:b], y[a:b])  # name -> (b - a, heads, *shape)
            return [torch.cat([j[:, k].reshape(b - a, -1) for j in jac.values()], dim=1) for k in range(n)]

        n = len(outputs)
        parts = map_chunks(chunk, x.shape[0], chunk_size)
    return [torch.cat([part[k] for part in parts], dim=0) for k in range(len(outputs))]
