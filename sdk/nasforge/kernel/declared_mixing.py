"""The mixed operations of a declared space's supernet, and the input selection of its networks.

Each choice of a declaration becomes one module of the supernet that weights its
alternatives by the choice's row of edge weights (:class:`ArchRows`, set by the supernet
before every forward):

- :class:`MixedLayer`: a layer choice; the weighted sum of its candidates' outputs, which
  must have one shape (a declaration whose candidates disagree is refused, naming both).
- :class:`MixedDepth`: a repeat; the blocks run in turn and the output is the weighted sum
  of the outputs at each depth the repeat may have.
- :class:`MixedScope`: the value choices (widths included) made in one scope; the scope's
  code is run once per combination of their values (a *variant*), each variant kept as a
  weightless template, and all variants share one set of weights: each tensor is stored
  once at its largest shape and every variant computes with its slice (leading entries,
  a convolution's kernel cropped about its centre), as NNI's mixed operations slice the
  widest candidate. A variant's weight is the product of its values' weights; variants that
  differ only in sizes run as one forward of the largest with mixed weights
  (:mod:`nasforge.kernel.declared_variants`).
- :class:`MixedInputs`: an input choice; the weighted sum of what each selection reads.

Outputs that differ in shape between alternatives (a width choice's channels) are padded
with zeros to the largest, found once per input shape by running every alternative on one
example, in evaluation mode and without gradients (a *probe*: nothing it runs changes);
zero channels read by the next convolution or
linear map add nothing, so under one-hot weights the supernet computes exactly the network
``build(g)`` makes. Alternatives whose weight is exactly zero are not computed when the
forward is sparse or the weights need no gradient (the supernet contract).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call
from torch.nn.modules.conv import _ConvNd

from nasforge.kernel.declared_choices import DeclarationError, Token
from nasforge.kernel.declared_variants import groups as variant_groups

Shape = tuple[int, ...]


class ArchRows:
    """The edge weights of the current forward, one row per choice label, shared by every
    mixed operation of one supernet (a plain object, not a module)."""

    def __init__(self) -> None:
        self.rows: dict[str, torch.Tensor] = {}
        #: Per label, which alternatives carry weight, where zero-weight ones may be left
        #: out (sparse, or no gradient needed); absent: every alternative runs.
        self.on: dict[str, list[bool]] = {}
        self.sparse = False
        self.probing = False

    def set(self, cells: Sequence[tuple[torch.Tensor, Sequence[str]]], *, sparse: bool) -> None:
        """The weights of one forward: each cell's tensor and the labels of its rows (the
        nonzero pattern read once a cell, not once a choice: one device transfer each)."""
        self.rows, self.on, self.sparse = {}, {}, sparse
        for w, labels in cells:
            for i, label in enumerate(labels):
                self.rows[label] = w[i]
            if sparse or not w.requires_grad:
                for label, pattern in zip(labels, w.detach().ne(0).cpu().tolist(), strict=True):
                    self.on[label] = [bool(v) for v in pattern]

    def active(self, label: str, n: int) -> list[bool]:
        """Which of the ``n`` alternatives of choice ``label`` run."""
        found = self.on.get(label)
        return found if found is not None else [True] * n

    def row(self, label: str) -> torch.Tensor:
        try:
            return self.rows[label]
        except KeyError:
            raise RuntimeError(
                f"no edge weights set for choice '{label}' (call the supernet, not its parts)"
            ) from None

    @contextlib.contextmanager
    def probe(self) -> Iterator[None]:
        """Mixed operations return zeros of their output's shape while it lasts."""
        before, self.probing = self.probing, True
        try:
            yield
        finally:
            self.probing = before


def pad_to(t: torch.Tensor, shape: Shape) -> torch.Tensor:
    """``t`` padded with zeros at the end of each dimension after the first to ``shape``."""
    if tuple(t.shape[1:]) == shape[1:]:
        return t
    if t.dim() != len(shape):
        raise DeclarationError(
            f"alternatives give outputs of {t.dim()} and {len(shape)} dimensions: "
            f"{tuple(t.shape)} and {shape}"
        )
    pads: list[int] = []
    for d in reversed(range(1, t.dim())):
        pads += [0, shape[d] - t.shape[d]]
    return F.pad(t, pads)


def probe_call(
    module: nn.Module,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tensors: dict[str, torch.Tensor] | None = None,
) -> Any:
    """``module(*args, **kwargs)`` (with ``tensors`` in place of its own, where given) in
    evaluation mode without gradients: for its output's shape, changing nothing."""
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        with torch.no_grad():
            if tensors is None:
                return module(*args, **kwargs)
            return functional_call(module, tensors, args, kwargs)
    finally:
        for m, mode in modes:
            m.training = mode


def _one_example(a: Any) -> Any:
    if isinstance(a, torch.Tensor):
        return a[:1] if a.dim() else a
    if isinstance(a, list | tuple):
        return type(a)(_one_example(x) for x in a)
    return a


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What the output shape may depend on: the inputs' shapes after the batch dimension."""

    def one(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return (tuple(a.shape[1:]), a.dtype)
        if isinstance(a, list | tuple):
            return tuple(one(x) for x in a)
        return type(a).__name__

    return (tuple(one(a) for a in args), tuple(sorted((k, one(v)) for k, v in kwargs.items())))


def _tensor_out(out: Any, *, what: str) -> torch.Tensor:
    if not isinstance(out, torch.Tensor):
        raise DeclarationError(f"{what} returns {type(out).__name__}; a mixed operation needs one tensor")
    return out


def shown(shape: Shape) -> str:
    """A shape with its batch dimension as ``N``: ``(N, 16, 8, 8)``."""
    return "(" + ", ".join(["N", *map(str, shape[1:])]) + ")"


def _largest(shapes: Sequence[Shape], *, what: str) -> Shape:
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise DeclarationError(
            f"{what}: alternatives give outputs of shapes {shown(shapes[0])} and {shown(shapes[-1])}"
        )
    return tuple(max(dims) for dims in zip(*shapes, strict=True))


def _first(args: tuple[Any, ...]) -> torch.Tensor:
    for a in args:
        if isinstance(a, torch.Tensor):
            return a
        if isinstance(a, list | tuple):
            for x in a:
                if isinstance(x, torch.Tensor):
                    return x
    raise DeclarationError("a mixed operation was called without a tensor")


class _Mixed(nn.Module):
    """What the mixed operations share: the rows they read and their output-shape cache."""

    def __init__(self, rows: ArchRows) -> None:
        super().__init__()
        self.__dict__["_rows"] = rows  # shared, never a submodule
        self.__dict__["_targets"] = {}

    @property
    def arch(self) -> ArchRows:
        return self.__dict__["_rows"]

    def target(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        """The (padded) output shape for inputs like ``args`` (probed once per input shape
        after the batch dimension, which passes through)."""
        single = args[0] if len(args) == 1 and not kwargs else None
        if isinstance(single, torch.Tensor):  # the usual call: _signature's key, made quickly
            key: tuple[Any, ...] = (((tuple(single.shape[1:]), single.dtype),), ())
        else:
            key = _signature(args, kwargs)
        targets: dict[Any, Shape] = self.__dict__["_targets"]
        if key not in targets:
            with self.arch.probe():
                one = tuple(_one_example(a) for a in args)
                targets[key] = self.probe(one, {k: _one_example(v) for k, v in kwargs.items()})[1:]
        return (_first(args).shape[0], *targets[key])

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        raise NotImplementedError

    def zeros(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor:
        like = _first(args)
        return torch.zeros(self.target(args, kwargs), dtype=like.dtype, device=like.device)


class MixedLayer(_Mixed):
    """A layer choice: ``sum_k w[k] * candidate_k(x)``; the candidate named ``zero`` (which
    outputs zeros) adds nothing, so it is never run."""

    def __init__(
        self,
        label: str,
        tokens: Sequence[Token],
        candidates: Sequence[nn.Module],
        rows: ArchRows,
        *,
        zero: Token | None = None,
    ) -> None:
        super().__init__(rows)
        self.label = label
        self.tokens = tuple(tokens)
        self.candidates = nn.ModuleList(candidates)
        self.zero = None if zero is None else self.tokens.index(zero)

    def candidate(self, token: Token) -> nn.Module:
        return self.candidates[self.tokens.index(token)]

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        shapes = []
        for token, cand in zip(self.tokens, self.candidates, strict=True):
            out = _tensor_out(
                probe_call(cand, args, kwargs), what=f"layer choice '{self.label}': candidate '{token}'"
            )
            shapes.append(tuple(out.shape))
            if shapes[-1] != shapes[0]:
                raise DeclarationError(
                    f"layer choice '{self.label}': candidates '{self.tokens[0]}' and '{token}' give "
                    f"outputs of shapes {shown(shapes[0])} and {shown(shapes[-1])}; a layer choice's "
                    "candidates must agree"
                )
        return shapes[0]

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        if self.arch.probing:
            return self.zeros(args, kwargs)
        row = self.arch.row(self.label)
        self.target(args, kwargs)  # the candidates agree in shape (checked once per input shape)
        on = self.arch.active(self.label, len(self.tokens))
        out: torch.Tensor | None = None
        for k, cand in enumerate(self.candidates):
            if not on[k] or k == self.zero:
                continue
            term = row[k] * cand(*args, **kwargs)
            out = term if out is None else out + term
        return self.zeros(args, kwargs) if out is None else out


class MixedDepth(_Mixed):
    """A repeat: blocks in turn; ``sum_d w[d] * (output after d blocks)``."""

    def __init__(
        self, label: str, depths: Sequence[int], blocks: Sequence[nn.Module], rows: ArchRows
    ) -> None:
        super().__init__(rows)
        self.label = label
        self.depths = tuple(depths)
        self.blocks = nn.ModuleList(blocks)

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        h = args[0]
        shapes = []
        for i, blk in enumerate(self.blocks):
            h = _tensor_out(probe_call(blk, (h,), {}), what=f"repeat '{self.label}': block {i}")
            if i + 1 in self.depths:
                shapes.append(tuple(h.shape))
        return _largest(shapes, what=f"repeat '{self.label}'")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.arch.probing:
            return self.zeros((x,), {})
        row = self.arch.row(self.label)
        target = self.target((x,), {})
        on = self.arch.active(self.label, len(self.depths))
        deepest = max((d for d, o in zip(self.depths, on, strict=True) if o), default=0)
        out: torch.Tensor | None = None
        h = x
        for i in range(deepest):
            h = self.blocks[i](h)
            if i + 1 in self.depths and on[self.depths.index(i + 1)]:
                term = row[self.depths.index(i + 1)] * pad_to(h, target)
                out = term if out is None else out + term
        return self.zeros((x,), {}) if out is None else out


class MixedInputs(_Mixed):
    """An input choice: ``sum_p w[p] * reduce(inputs in selection p)``."""

    def __init__(self, label: str, picks: Sequence[tuple[int, ...]], reduce: str, rows: ArchRows) -> None:
        super().__init__(rows)
        self.label = label
        self.picks = tuple(tuple(p) for p in picks)
        self.reduce = reduce

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        xs = inputs_of(args)
        shapes = [tuple(reduce_inputs(xs, p, self.reduce).shape) for p in self.picks]
        return _largest(shapes, what=f"input choice '{self.label}'")

    def forward(self, *args: Any) -> torch.Tensor:
        if self.arch.probing:
            return self.zeros(args, {})
        xs = inputs_of(args)
        row = self.arch.row(self.label)
        target = self.target(args, {})
        on = self.arch.active(self.label, len(self.picks))
        out: torch.Tensor | None = None
        for k, pick in enumerate(self.picks):
            if on[k]:
                term = row[k] * pad_to(reduce_inputs(xs, pick, self.reduce), target)
                out = term if out is None else out + term
        return self.zeros(args, {}) if out is None else out


class SelectInputs(nn.Module):
    """An input choice of a built network: the chosen inputs, combined (no weights)."""

    def __init__(self, pick: Sequence[int], reduce: str) -> None:
        super().__init__()
        self.pick = tuple(pick)
        self.reduce = reduce

    def forward(self, *args: Any) -> torch.Tensor:
        return reduce_inputs(inputs_of(args), self.pick, self.reduce)


def inputs_of(args: tuple[Any, ...]) -> list[torch.Tensor]:
    """The candidate tensors, given as one list or as separate arguments."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def reduce_inputs(xs: Sequence[torch.Tensor], pick: Sequence[int], reduce: str) -> torch.Tensor:
    if max(pick) >= len(xs):
        raise DeclarationError(f"an input choice reads input {max(pick)} of {len(xs)} given")
    chosen = [xs[i] for i in pick]
    if reduce == "concat":
        return torch.cat(chosen, dim=1)
    out = chosen[0]
    for t in chosen[1:]:
        out = out + t
    return out / len(chosen) if reduce == "mean" else out


# --- the value choices of one scope ---------------------------------------------------------
def _centred(owner: nn.Module, leaf: str, dim: int) -> bool:
    """Whether ``dim`` of tensor ``leaf`` of ``owner`` is cropped about its centre (a
    convolution's kernel) rather than cut at the end (channels, features)."""
    return isinstance(owner, _ConvNd) and leaf == "weight" and dim >= 2


def slices(owner: nn.Module, leaf: str, small: Shape, large: Shape) -> tuple[slice, ...]:
    """Where a tensor of shape ``small`` sits in the stored tensor of shape ``large``."""
    out = []
    for d, (n, m) in enumerate(zip(small, large, strict=True)):
        if n == m:
            out.append(slice(None))
        elif _centred(owner, leaf, d):
            off = (m - n) // 2
            out.append(slice(off, off + n))
        else:
            out.append(slice(0, n))
    return tuple(out)


def owner_of(module: nn.Module, name: str) -> tuple[nn.Module, str]:
    path, _, leaf = name.rpartition(".")
    return (module.get_submodule(path) if path else module), leaf


def _tensors(module: nn.Module) -> dict[str, torch.Tensor]:
    return dict(itertools.chain(module.named_parameters(), module.named_buffers()))


class MixedScope(_Mixed):
    """The value choices of one scope (see the module docstring): ``sum_v w(v) * variant_v(x)``.

    ``tokens`` are each label's tokens, ``combos`` the token indices of each variant (one
    per label, in ``labels`` order),
    ``templates`` the variants' modules on the meta device, and ``make_real(v)`` builds
    variant ``v`` with real, initialised tensors: it is called, in order, for the variants
    whose tensors are stored (each tensor's first variant of largest shape).
    """

    def __init__(
        self,
        path: str,
        labels: Sequence[str],
        tokens: Sequence[Sequence[Token]],
        combos: Sequence[tuple[int, ...]],
        templates: Sequence[nn.Module],
        make_real: Callable[[int], nn.Module],
        rows: ArchRows,
    ) -> None:
        super().__init__(rows)
        self.path = path
        self.labels = tuple(labels)
        self.tokens = tuple(tuple(t) for t in tokens)
        self.combos = tuple(tuple(c) for c in combos)
        self.__dict__["templates"] = list(templates)  # weightless: never submodules
        shapes: dict[str, dict[int, Shape]] = {}
        for v, template in enumerate(templates):
            for name, t in _tensors(template).items():
                shapes.setdefault(name, {})[v] = tuple(t.shape)
        owners: dict[str, list[tuple[int, list[int]]]] = {}  # name -> [(owner variant, its members)]
        for name, by_variant in shapes.items():
            ranks = {len(s) for s in by_variant.values()}
            top = None
            if len(ranks) == 1:
                top = next(
                    (
                        v
                        for v, s in by_variant.items()
                        if all(all(a >= b for a, b in zip(s, o, strict=True)) for o in by_variant.values())
                    ),
                    None,
                )
            owners[name] = [(top, list(by_variant))] if top is not None else [(v, [v]) for v in by_variant]
        needed = sorted({v for groups in owners.values() for v, _ in groups})
        real = {v: _tensors(make_real(v)) for v in needed}
        #: variant -> [(name in its template, stored key, slices)]
        self.__dict__["maps"] = {v: [] for v in range(len(templates))}
        k = 0
        for name, groups in owners.items():
            for v, members in groups:
                tensor = real[v][name]
                key = f"w{k}"
                k += 1
                if isinstance(tensor, nn.Parameter):
                    self.register_parameter(key, tensor)
                else:
                    self.register_buffer(key, tensor)
                for m in members:
                    owner, leaf = owner_of(templates[m], name)
                    self.__dict__["maps"][m].append(
                        (name, key, slices(owner, leaf, shapes[name][m], tuple(tensor.shape)))
                    )
        sizes = [{n: s[v] for n, s in shapes.items() if v in s} for v in range(len(templates))]
        keys = [{name: key for name, key, _ in self.__dict__["maps"][v]} for v in range(len(templates))]
        found: list[tuple[int, tuple[int, ...]]] = []
        for leader, group in variant_groups(templates, sizes):
            if any(keys[m] != keys[leader] for m in group):  # a tensor stored apart: run each alone
                found.extend((m, (m,)) for m in group)
            else:
                found.append((leader, group))
        #: (leader, members) of each group of variants that share a forward (declared_variants)
        self.__dict__["groups"] = sorted(found)
        self.__dict__["masks"] = {}

    def _masks(
        self, leader: int, members: Sequence[int], like: torch.Tensor
    ) -> dict[tuple[int, str], torch.Tensor]:
        """Where each member's tensor sits in the leader's (ones there), as ``like``'s dtype and device."""
        cache: dict[Any, dict[tuple[int, str], torch.Tensor]] = self.__dict__["masks"]
        key = (leader, like.device, like.dtype)
        if key not in cache:
            template = self.__dict__["templates"][leader]
            shapes = {n: tuple(t.shape) for n, t in _tensors(template).items()}
            found: dict[tuple[int, str], torch.Tensor] = {}
            for m in members:
                for name, t in _tensors(self.__dict__["templates"][m]).items():
                    owner, leaf = owner_of(template, name)
                    mask = torch.zeros(shapes[name], dtype=like.dtype, device=like.device)
                    mask[slices(owner, leaf, tuple(t.shape), shapes[name])] = 1.0
                    found[(m, name)] = mask
            cache[key] = found
        return cache[key]

    def _mixed_call(
        self, leader: int, weights: dict[int, torch.Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the group's total weight, the leader run with weights mixed from the members')."""
        template: nn.Module = self.__dict__["templates"][leader]
        if template.training != self.training:
            template.train(self.training)
        total = sum(weights.values(), torch.zeros(()))
        first = next(iter(weights.values()))
        total = total.to(first.device, first.dtype) if total.device != first.device else total
        safe = total + (total == 0).to(total.dtype)  # all weights zero: no division by zero
        buffers = {n for n, _ in template.named_buffers()}
        tensors = self.tensors_of(leader)
        members = dict(self.__dict__["groups"])[leader]
        masks = self._masks(leader, members, next(iter(tensors.values())))
        for name in list(tensors):
            if name in buffers:
                continue  # running statistics are the leader's, updated in place
            mix = sum(weights[m] * masks[(m, name)] for m in weights)
            tensors[name] = tensors[name] * (mix / safe)
        out = _tensor_out(
            functional_call(template, tensors, args, kwargs), what=f"scope '{self.path or 'top level'}'"
        )
        return total, out

    def variant(self, tokens: Sequence[int]) -> int:
        return self.combos.index(tuple(tokens))

    def tensors_of(self, v: int, stored: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Variant ``v``'s tensors: slices of the stored ones (``stored``: those to use instead)."""
        if stored is None:
            stored = dict(
                itertools.chain(self.named_parameters(recurse=False), self.named_buffers(recurse=False))
            )
        return {name: stored[key][sl] for name, key, sl in self.__dict__["maps"][v]}

    def _call(self, v: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor:
        template: nn.Module = self.__dict__["templates"][v]
        if template.training != self.training:
            template.train(self.training)
        out = functional_call(template, self.tensors_of(v), args, kwargs)
        return _tensor_out(out, what=f"scope '{self.path or 'top level'}'")

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Shape:
        shapes = []
        for v, template in enumerate(self.__dict__["templates"]):
            out = probe_call(template, args, kwargs, self.tensors_of(v))
            out = _tensor_out(out, what=f"scope '{self.path or 'top level'}'")
            shapes.append(tuple(out.shape))
        return _largest(shapes, what=f"scope '{self.path or 'top level'}'")

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        if self.arch.probing:
            return self.zeros(args, kwargs)
        rows = [self.arch.row(label) for label in self.labels]
        target = self.target(args, kwargs)
        found = [self.arch.on.get(label) for label in self.labels]
        skip = all(f is not None for f in found)
        on = [f if f is not None else [True] * len(t) for f, t in zip(found, self.tokens, strict=True)]
        out: torch.Tensor | None = None
        for leader, members in self.__dict__["groups"]:
            active = [v for v in members if not skip or all(on[j][k] for j, k in enumerate(self.combos[v]))]
            weights = {v: self._weight(rows, v) for v in active}
            if len(active) == 1 or len(members) == 1:  # alone: exactly the variant's network
                terms = [w * pad_to(self._call(v, args, kwargs), target) for v, w in weights.items()]
            elif active:
                total, mixed = self._mixed_call(leader, weights, args, kwargs)
                terms = [total * pad_to(mixed, target)]
            else:
                terms = []
            for term in terms:
                out = term if out is None else out + term
        return self.zeros(args, kwargs) if out is None else out

    def _weight(self, rows: Sequence[torch.Tensor], v: int) -> torch.Tensor:
        """Variant ``v``'s weight: the product of its values' weights."""
        combo = self.combos[v]
        w = rows[0][combo[0]]
        for j in range(1, len(combo)):
            w = w * rows[j][combo[j]]
        return w


__all__ = [
    "ArchRows",
    "MixedDepth",
    "MixedInputs",
    "MixedLayer",
    "MixedScope",
    "SelectInputs",
    "probe_call",
    "owner_of",
    "pad_to",
    "reduce_inputs",
    "slices",
]
