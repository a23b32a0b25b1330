"""Squared norms of per-sample gradients without the Jacobian: the diagonal of Θ = J Jᵀ.

A metric that reads only the trace of an empirical kernel (an NTK trace, Eigen-NAS's score)
needs ‖∂head_i/∂θ‖² for every row i, not J. The batch is forwarded once with every
Conv/Linear/BatchNorm call tapped; each output cotangent (per sample, the head's gradient at
the logits, or each logit's unit vector for ``output="full"``) is back-propagated to the
tapped outputs, and each layer's per-sample gradient formed from its input and that output
gradient (:mod:`nasforge.tools.backends.layer_grads`), summed over the layer's calls, then
squared: one layer's per-sample gradients in memory at a time, never rows x P.

What a row means is the :class:`KernelSpec`'s, unchanged:

- ``bn="sample"`` (each sample forwarded alone in train mode): a sample alone is normalised
  over its own positions, so the batch is forwarded together with every BatchNorm
  normalising each sample by its own statistics: the same function, and separable.
  ``bn="eval"`` separates the samples as it is. Checked: the first sample forwarded alone
  must give the batched forward's logits, else (a module that couples samples) every
  parameter takes the exact path below;
- ``bn="decomposed"``: the HNAS code's rows, which are these per-layer products by
  definition, of one backward through the batch forwarded together;
- ``bn="batch"`` (each row through the coupled batch): no per-layer identity; the rows are
  taken from :func:`~nasforge.tools.backends.jacobian.jacobian`.

Parameters of a module without an identity (a LayerNorm, a transposed conv, a custom module)
take an exact path: their per-sample gradients by ``torch.func`` (each sample forwarded alone;
for ``decomposed`` the module's own vector-Jacobian product). Their squared norms add to the
others', since norms add over disjoint parameters.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import attrs
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vjp, vmap
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd

from nasforge.kernel.device import resolve_device
from nasforge.tools.backends.chunking import map_chunks
from nasforge.tools.backends.forward_patch import forwards_replaced
from nasforge.tools.backends.functional import batch_norm_mode, per_sample_head, split_parameters
from nasforge.tools.backends.jacobian import _labels, jacobian
from nasforge.tools.backends.layer_grads import has_identity, layer_grads, prepare
from nasforge.tools.backends.pool_backward import convolution_pool_backward
from nasforge.tools.backends.spec import KernelSpec

Params = dict[str, torch.Tensor]
Holders = dict[str, list[tuple[nn.Module, str]]]

#: Output cotangents back-propagated together (``is_grads_batched``), per device type. On a
#: CPU the batched backward costs as much arithmetic as one backward per cotangent and more
#: memory (measured: no faster at 16 samples, slower at 64); on a GPU a network this size is
#: bound by kernel launches, which batching divides by the cotangents (ten for ten logits).
_COTANGENTS_PER_BACKWARD: dict[str, int] = {"cpu": 1}
_COTANGENTS_DEFAULT = 64


#: Whether conv weights on small maps take the Gram form (:func:`_gram_is_cheaper`); False
#: forms every per-sample gradient (a benchmark compares the two in one run).
GRAM_FORM = True


def _cotangents_per_backward(device: torch.device) -> int:
    return _COTANGENTS_PER_BACKWARD.get(device.type, _COTANGENTS_DEFAULT)


@attrs.frozen(eq=False)
class SampleNorms:
    """The diagonal of one kernel Θ = J Jᵀ and the sum of all its entries, in float64.

    ``rows`` is ``(n,)``, or ``(n, C)`` for ``output="full"`` (row (i, c): sample i's
    logit c); ``total``, where asked for, is ‖Σ_r J_r‖² = 1ᵀΘ1, the squared norm of the
    summed gradient (KNAS's mean kernel entry times the rows squared).
    """

    rows: torch.Tensor
    total: float | None = None

    @property
    def size(self) -> int:
        """The kernel's side: rows of J."""
        return int(self.rows.numel())

    @property
    def trace(self) -> float:
        return float(self.rows.sum())


@attrs.frozen(eq=False)
class _Call:
    """One call of a tapped module: its input and output, and the output's version; for a
    per-sample BatchNorm, its affine parameters as the call used them, repeated per sample
    (their gradient is each sample's own: the BatchNorm backward sums δ·x̂ and δ anyway)."""

    module: nn.Module
    inp: torch.Tensor
    out: torch.Tensor
    version: int
    affine: dict[str, torch.Tensor] | None = None


class _NotSeparable(Exception):
    """The batched forward does not equal forwarding each sample alone."""


@contextmanager
def _per_sample_batch_norm(model: nn.Module, calls: list[_Call], record: set[nn.Module]) -> Iterator[None]:
    """Every BatchNorm that normalises by batch statistics normalises each sample by its own;
    the calls of those in ``record`` are appended to ``calls``.

    A sample forwarded alone through a train-mode BatchNorm is normalised over its own
    positions, per channel: the batch viewed as one sample of n·C channels, each sample's
    affine repeated (what ``F.instance_norm`` computes, with the repeated affine kept).
    """
    replacements: dict[nn.Module, Callable[[torch.Tensor], torch.Tensor]] = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.running_mean is None:

            def forward(x: torch.Tensor, m: _BatchNorm = m) -> torch.Tensor:
                if x.dim() <= 2:
                    raise ValueError(
                        "a sample alone in train-mode BatchNorm has one value per channel "
                        f"(input {tuple(x.shape)})"
                    )
                n, c = x.shape[:2]
                affine = {k: t.repeat(n) for k in ("weight", "bias") if (t := getattr(m, k)) is not None}
                folded = x.contiguous().view(1, n * c, *x.shape[2:])
                y = F.batch_norm(
                    folded, None, None, affine.get("weight"), affine.get("bias"), True, 0.0, m.eps
                ).view_as(x)
                if m in record:
                    calls.append(_Call(m, x, y, y._version, affine))
                return y

            replacements[m] = forward
    with forwards_replaced(replacements):
        yield


@contextmanager
def _taps(modules: Sequence[nn.Module]) -> Iterator[list[_Call]]:
    calls: list[_Call] = []

    def tap(module: nn.Module, inp: tuple[object, ...], out: object) -> None:
        if not (inp and isinstance(inp[0], torch.Tensor) and isinstance(out, torch.Tensor)):
            raise _NotSeparable(f"{type(module).__name__} takes or returns something other than one tensor")
        calls.append(_Call(module, inp[0], out, out._version))

    hooks = [m.register_forward_hook(tap) for m in modules]
    try:
        yield calls
    finally:
        for h in hooks:
            h.remove()


def _holders(model: nn.Module, live: Params) -> Holders:
    """Per live parameter, every (module, local name) that holds it (a tied parameter has
    several: its per-sample gradient is the sum over all their calls)."""
    name_of = {id(p): n for n, p in model.named_parameters() if n in live}
    holders: Holders = {}
    for module in model.modules():
        for local, p in module.named_parameters(recurse=False):
            if id(p) in name_of:
                holders.setdefault(name_of[id(p)], []).append((module, local))
    return holders


def _cotangents(logits: torch.Tensor, y: torch.Tensor, specs: Sequence[KernelSpec]) -> torch.Tensor:
    """``(B, n, C)``: per spec, its rows' cotangents at the logits (the head's gradient, or
    each unit vector for ``output="full"``), the specs one after another."""
    n, c = logits.shape
    parts = []
    for s in specs:
        if s.output == "full":
            parts.append(torch.eye(c, dtype=logits.dtype, device=logits.device)[:, None, :].expand(c, n, c))
        else:
            head = grad(lambda lg, t, s=s: per_sample_head(lg, t, s.output, s.loss))
            parts.append(vmap(head)(logits, y)[None])
    return torch.cat(parts)


def _widths(specs: Sequence[KernelSpec], classes: int) -> list[int]:
    return [classes if s.output == "full" else 1 for s in specs]


def _sizes(live: Params) -> dict[str, int]:
    return {k: v.numel() for k, v in live.items()}


class _Accumulator:
    """Per cotangent column, the rows' squared norms; per spec whose ``totals`` flag is set,
    the summed gradient (a pass over every per-sample gradient, so only where asked)."""

    def __init__(
        self, n: int, widths: list[int], sizes: dict[str, int], like: torch.Tensor, totals: Sequence[bool]
    ) -> None:
        self.widths = widths
        self.totals = list(totals)
        self.spec_of = [k for k, w in enumerate(widths) for _ in range(w)]
        self.offsets = dict(zip(sizes, itertools.accumulate([0, *sizes.values()]), strict=False))
        # in the network's precision (a few hundred positive terms a row), float64 at the end
        self.rows = torch.zeros(n, sum(widths), dtype=like.dtype, device=like.device)
        self.sums = torch.zeros(len(widths), sum(sizes.values()) if any(totals) else 0, dtype=torch.float64)
        self.sums = self.sums.to(like.device)

    def add(self, name: str, g: torch.Tensor, first: int) -> None:
        """``g``: ``(n, B, ...)`` gradients of parameter ``name`` for columns first.. ."""
        b = g.shape[1]
        norm = torch.linalg.vector_norm(g, dim=tuple(range(2, g.dim())))
        self.rows[:, first : first + b].addcmul_(norm, norm)
        wanted = [j for j in range(b) if self.totals[self.spec_of[first + j]]]
        if not wanted:
            return
        start = self.offsets[name]
        summed = g.sum(0).reshape(b, -1).to(torch.float64)  # (B, numel)
        for j in wanted:
            self.sums[self.spec_of[first + j], start : start + summed.shape[-1]] += summed[j]

    def add_squared(self, squared: torch.Tensor, first: int) -> None:
        """``squared``: ``(n, B)`` squared norms of one parameter's gradients for columns
        first.. (formed without the gradients: only where :meth:`needs_gradients` is False)."""
        self.rows[:, first : first + squared.shape[1]] += squared

    def needs_gradients(self, first: int, b: int) -> bool:
        """Whether a column first..first+b asks for the summed gradient, not only norms."""
        return any(self.totals[self.spec_of[j]] for j in range(first, first + b))

    def merge(self, other: _Accumulator) -> _Accumulator:
        self.rows = torch.cat([self.rows, other.rows])
        self.sums += other.sums
        return self

    def results(self, specs: Sequence[KernelSpec]) -> list[SampleNorms]:
        out, col = [], 0
        rows64 = self.rows.to(torch.float64)
        for k, (s, w) in enumerate(zip(specs, self.widths, strict=True)):
            rows = rows64[:, col : col + w]
            total = float(self.sums[k].square().sum()) if self.totals[k] else None
            out.append(SampleNorms(rows if s.output == "full" else rows[:, 0], total))
            col += w
        return out


def _module_local_grads(module: nn.Module, a: torch.Tensor, delta: torch.Tensor) -> Params:
    """``(n, B, numel)`` per local parameter: the module's own vector-Jacobian product per
    sample (the decomposed rows' definition, for a module without an identity)."""
    own = {p: t.detach() for p, t in module.named_parameters(recurse=False)}

    def one(ai: torch.Tensor, di: torch.Tensor) -> Params:
        pull = vjp(lambda q: functional_call(module, q, (ai.unsqueeze(0),)), own)[1]
        return vmap(lambda d: pull(d.unsqueeze(0))[0])(di)

    shares = vmap(one)(a.detach(), delta)
    return {p: g.reshape(g.shape[0], g.shape[1], -1) for p, g in shares.items()}


def _functional_grads(
    model: nn.Module, rest: Params, sub: Params, x: torch.Tensor, cot: torch.Tensor
) -> Params:
    """``(n, B, numel)`` per parameter of ``sub``: each sample forwarded alone, its B
    cotangents pulled back through the whole network (the exact per-sample definition)."""

    def one(xi: torch.Tensor, ci: torch.Tensor) -> Params:
        pull = vjp(lambda p: functional_call(model, (p, rest), (xi.unsqueeze(0),))[0], sub)[1]
        return vmap(lambda v: pull(v)[0])(ci)

    rows = vmap(one)(x, cot.transpose(0, 1))
    return {p: g.reshape(g.shape[0], g.shape[1], -1) for p, g in rows.items()}


def _layer_rows(
    holders: Holders,
    calls: list[_Call],
    logits: torch.Tensor,
    cot: torch.Tensor,
    acc: _Accumulator,
) -> None:
    """Every tapped parameter's per-sample gradients, cotangent by cotangent, into ``acc``.

    One backward per cotangent on a CPU (the same arithmetic as batching them, a tenth of
    the memory for ten logits), the cotangents batched elsewhere
    (:func:`_cotangents_per_backward`); each call's operand (unfolded input, x̂) formed once.
    """
    by_module: dict[nn.Module, list[_Call]] = {}
    for c in calls:
        by_module.setdefault(c.module, []).append(c)
    operands: dict[int, torch.Tensor | Params] = {}
    grams: dict[tuple[str, int], torch.Tensor] = {}
    # what each call is differentiated at: its output, or its per-sample affine parameters
    keys = [
        (id(c), k)
        for c in calls
        for k in ([None] if c.affine is None else [k for k in c.affine if c.affine[k].requires_grad])
    ]
    by_id = {id(c): c for c in calls}
    targets = [by_id[i].out if k is None else by_id[i].affine[k] for i, k in keys]  # type: ignore[index]
    step = _cotangents_per_backward(logits.device)
    for j in range(0, cot.shape[0], step):
        block = cot[j : j + step]
        b = block.shape[0]
        if b > 1:
            found = torch.autograd.grad(
                logits,
                targets,
                grad_outputs=block,
                retain_graph=True,
                allow_unused=True,
                is_grads_batched=True,
            )
        else:
            found = torch.autograd.grad(
                logits, targets, grad_outputs=block[0], retain_graph=True, allow_unused=True
            )
            found = tuple(None if d is None else d.unsqueeze(0) for d in found)
        deltas: dict[tuple[int, str | None], torch.Tensor | None] = {}
        for (i, k), d in zip(keys, found, strict=True):
            if d is not None:
                # (B, n, *out) -> (n, B, *out); a repeated affine's (B, n·C) -> (n, B, C)
                d = (
                    d.transpose(0, 1)
                    if k is None
                    else d.reshape(b, by_id[i].inp.shape[0], -1).transpose(0, 1)
                )
            deltas[(i, k)] = d
        del found
        for name, hs in holders.items():
            single = _single_call(hs, by_module)
            if single is not None and not acc.needs_gradients(j, b):
                d_out = deltas[(id(single), None)]
                if d_out is not None and _gram_is_cheaper(single, hs[0][1], cot.shape[0]):
                    if ("gram", id(single)) not in grams:
                        grams[("gram", id(single))] = _patch_gram(single)
                    acc.add_squared(_conv_squared_norms(grams[("gram", id(single))], d_out), j)
                    continue
            g = None
            for module, local in hs:
                for c in by_module.get(module, []):
                    if c.affine is not None:  # a per-sample BatchNorm: its own gradient, per sample
                        part = deltas.get((id(c), local))
                        if part is not None:
                            g = part if g is None else g + part
                        continue
                    d_out = deltas[(id(c), None)]
                    if d_out is None:
                        continue
                    if has_identity(module):
                        if id(c) not in operands:
                            operands[id(c)] = prepare(module, c.inp, c.out)
                        part = layer_grads(module, operands[id(c)], d_out, local)  # type: ignore[arg-type]
                    else:  # decomposed rows of a module without an identity
                        part = _module_local_grads(module, c.inp, d_out)[local]
                    g = part if g is None else g + part
            if g is not None:
                acc.add(name, g, j)


def _single_call(
    holders: list[tuple[nn.Module, str]], by_module: dict[nn.Module, list[_Call]]
) -> _Call | None:
    """The one call of a parameter held by one module called once (else None: its
    per-sample gradient is a sum over calls, whose norm needs the gradient itself)."""
    if len(holders) != 1:
        return None
    calls = by_module.get(holders[0][0], [])
    return calls[0] if len(calls) == 1 and calls[0].affine is None else None


def _gram_is_cheaper(call: _Call, local: str, cotangents: int) -> bool:
    """Whether a conv weight's per-sample squared norms cost fewer multiply-adds in Gram form.

    Per sample, the gradient is G = Δ Uᵀ (Δ: C_out x L output gradient, U: K x L patches),
    and ‖G‖² = Σ_pq (ΔᵀΔ)_pq (UᵀU)_pq. Formed directly, G costs L·K·C_out per cotangent; in
    Gram form, UᵀU costs L²·K once for all ``cotangents`` and ΔᵀΔ costs L²·C_out each. So
    the Gram form wins on the late, small maps (8x8 with 64 channels: about 4x fewer) and
    loses on the early, large ones (32x32 with 16 channels: about 13x more).
    """
    m = call.module
    if not GRAM_FORM or local != "weight" or not isinstance(m, _ConvNd) or m.transposed or m.groups != 1:
        return False
    length = math.prod(call.out.shape[2:])
    k = m.in_channels * math.prod(m.kernel_size)
    c_out = m.out_channels
    return length * (k / cotangents + c_out + 1) < k * c_out


def _patch_gram(call: _Call) -> torch.Tensor:
    """``(n, L, L)``: UᵀU per sample, U the call's unfolded input (shared by every cotangent)."""
    u = prepare(call.module, call.inp, call.out)  # (n, K, L)
    return torch.bmm(u.transpose(1, 2), u)


def _conv_squared_norms(gram: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """``(n, B)``: ‖Δ Uᵀ‖² per sample and cotangent from UᵀU (``gram``) and Δ ``(n, B, C_out, *out)``."""
    n, b, c_out = delta.shape[:3]
    d = delta.reshape(n * b, c_out, -1)
    dd = torch.bmm(d.transpose(1, 2), d).reshape(n, b, d.shape[-1], d.shape[-1])  # ΔᵀΔ
    return (dd * gram[:, None]).sum((2, 3))


def _separable_chunk(
    model: nn.Module,
    live: Params,
    fixed: Params,
    holders: Holders,
    exact: list[str],
    x: torch.Tensor,
    y: torch.Tensor,
    specs: Sequence[KernelSpec],
    alone: torch.Tensor | None,
    totals: Sequence[bool],
) -> _Accumulator:
    """Norms and sums of one chunk of samples under a separable BatchNorm mode; ``alone``
    (the first sample forwarded by itself), when given, is checked against the batch."""
    modules = list(dict.fromkeys(m for hs in holders.values() for m, _ in hs))
    # BatchNorms normalising by batch statistics record their own calls (per-sample affine)
    own: set[nn.Module] = {m for m in modules if isinstance(m, _BatchNorm) and m.running_mean is None}
    with (
        _taps([m for m in modules if m not in own]) as calls,
        _per_sample_batch_norm(model, calls, own),
        convolution_pool_backward(model),
        torch.enable_grad(),
    ):
        logits = model(x)
    n = x.shape[0]
    if any(c.out._version != c.version or c.inp.shape[0] != n or c.out.shape[0] != n for c in calls):
        raise _NotSeparable("a tapped output was modified in place, or a layer saw another batch")
    if alone is not None:
        scale = float(alone.abs().max()) + 1e-30
        if not torch.allclose(alone, logits[0].detach(), rtol=1e-3, atol=1e-3 * scale):
            raise _NotSeparable("the first sample forwarded alone gives other logits than the batch")
    cot = _cotangents(logits.detach(), y, specs)
    acc = _Accumulator(n, _widths(specs, logits.shape[1]), _sizes(live), logits, totals)
    _layer_rows(holders, calls, logits, cot, acc)
    del calls, logits
    if exact:
        sub = {k: live[k] for k in exact}
        rest = {**fixed, **{k: v for k, v in live.items() if k not in sub}}
        for name, g in _functional_grads(model, rest, sub, x, cot).items():
            acc.add(name, g, 0)
    return acc


def _exact_chunk(
    model: nn.Module,
    live: Params,
    fixed: Params,
    x: torch.Tensor,
    y: torch.Tensor,
    specs: Sequence[KernelSpec],
    totals: Sequence[bool],
) -> _Accumulator:
    """Norms and sums of one chunk by ``torch.func`` alone, each sample forwarded alone."""
    with torch.no_grad():
        logits = vmap(lambda xi: functional_call(model, (live, fixed), (xi.unsqueeze(0),))[0])(x)
    cot = _cotangents(logits, y, specs)
    acc = _Accumulator(x.shape[0], _widths(specs, logits.shape[1]), _sizes(live), logits, totals)
    for name, g in _functional_grads(model, fixed, live, x, cot).items():
        acc.add(name, g, 0)
    return acc


def _separable(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    specs: Sequence[KernelSpec],
    chunk_size: int,
    totals: Sequence[bool],
) -> list[SampleNorms]:
    with batch_norm_mode(model, specs[0].bn):
        live, fixed = split_parameters(model, specs[0].params, x.device)
        every = _holders(model, live)
        holders = {n: hs for n, hs in every.items() if all(has_identity(m) for m, _ in hs)}
        exact = [n for n in live if n not in holders]
        with torch.no_grad():
            alone = model(x[:1])[0]  # the first sample forwarded alone, as the definition does
        check: list[torch.Tensor | None] = [alone]

        def chunk(a: int, b: int) -> _Accumulator:
            acc = _separable_chunk(
                model, live, fixed, holders, exact, x[a:b], y[a:b], specs, check[0], totals
            )
            check[0] = None
            return acc

        try:
            parts = map_chunks(chunk, x.shape[0], chunk_size)
        except _NotSeparable:  # every parameter by the exact per-sample path
            parts = map_chunks(
                lambda a, b: _exact_chunk(model, live, fixed, x[a:b], y[a:b], specs, totals),
                x.shape[0],
                chunk_size,
            )
    acc = parts[0]
    for p in parts[1:]:
        acc.merge(p)
    return acc.results(specs)


def _decomposed(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, specs: Sequence[KernelSpec], totals: Sequence[bool]
) -> list[SampleNorms]:
    """The HNAS code's rows: one backward of Σ_i head_i through the batch forwarded together
    (batch statistics), each layer call's per-sample share of its gradient."""
    with batch_norm_mode(model, "decomposed"):
        live, _ = split_parameters(model, specs[0].params, x.device)
        holders = _holders(model, live)
        modules = list(dict.fromkeys(m for hs in holders.values() for m, _ in hs))
        try:
            with convolution_pool_backward(model), _taps(modules) as calls, torch.enable_grad():
                # the input asks for a gradient so every layer output is in the graph
                logits = model(x.detach().requires_grad_(True))
        except _NotSeparable as exc:
            raise ValueError(f"no per-layer decomposition: {exc}") from exc
        if any(c.out._version != c.version for c in calls):
            raise ValueError("no per-layer decomposition: a layer's output was modified in place")
        cot = _cotangents(logits.detach(), y, specs)
        acc = _Accumulator(x.shape[0], _widths(specs, logits.shape[1]), _sizes(live), logits, totals)
        _layer_rows(holders, calls, logits, cot, acc)
    return acc.results(specs)


def _from_jacobian(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor | None, spec: KernelSpec, chunk_size: int
) -> SampleNorms:
    jac = jacobian(model, x, y, spec=spec, chunk_size=chunk_size, device=x.device).to(torch.float64)
    rows = jac.square().sum(1)
    if spec.output == "full":
        rows = rows.reshape(x.shape[0], -1)
    return SampleNorms(rows, float(jac.sum(0).square().sum()))


def can_share_norms(specs: Sequence[KernelSpec]) -> bool:
    """Whether one forward serves every spec: one BatchNorm mode (not "batch", whose rows
    are each their own backward) and one parameter set; heads and losses may differ."""
    first = specs[0]
    return first.bn != "batch" and all((s.bn, s.params) == (first.bn, first.params) for s in specs)


def joint_sample_grad_norms(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    specs: Sequence[KernelSpec],
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
    totals: bool | Sequence[bool] = False,
) -> list[SampleNorms]:
    """:func:`sample_grad_norms` of several specs; specs that :func:`can_share_norms` share
    the forward. ``totals`` asks for 1ᵀΘ1 of every spec, or (a sequence) of each spec
    that has True. The model is left as it was."""
    specs = list(specs)
    wanted = [bool(totals)] * len(specs) if isinstance(totals, bool) else [bool(t) for t in totals]
    if len(wanted) != len(specs):
        raise ValueError(f"totals has {len(wanted)} flags for {len(specs)} specs")
    if any(s.needs_labels for s in specs) and targets is None:
        raise ValueError("a requested output needs targets")
    dev = resolve_device(device)
    x = inputs.to(dev)
    y = _labels(targets, x.shape[0], dev)
    out: dict[int, SampleNorms] = {}
    groups: dict[tuple[str, str], list[int]] = {}
    for i, s in enumerate(specs):
        groups.setdefault((s.bn, s.params), []).append(i)
    for (bn, _), idx in groups.items():
        group = [specs[i] for i in idx]
        flags = [wanted[i] for i in idx]
        if bn == "batch":
            found = [_from_jacobian(model, x, targets, s, chunk_size) for s in group]
        elif bn == "decomposed":
            found = _decomposed(model, x, y, group, flags)
        else:
            found = _separable(model, x, y, group, chunk_size, flags)
        out.update(zip(idx, found, strict=True))
    return [out[i] for i in range(len(specs))]


def sample_grad_norms(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    spec: KernelSpec = KernelSpec(),
    chunk_size: int = 64,
    device: str | torch.device | None = "cpu",
    totals: bool = False,
) -> SampleNorms:
    """The diagonal of ``spec``'s kernel on ``inputs`` (and 1ᵀΘ1 with ``totals``), without
    forming J.

    Equal to the squared row norms of :func:`~nasforge.tools.backends.jacobian.jacobian`
    (and the squared norm of its summed rows). ``chunk_size`` samples are forwarded together
    (their memory does not grow with the rows per sample: the cotangents go back one at a
    time); a chunk that runs out of memory is halved and retried.
    """
    return joint_sample_grad_norms(
        model, inputs, targets, specs=[spec], chunk_size=chunk_size, device=device, totals=totals
    )[0]
