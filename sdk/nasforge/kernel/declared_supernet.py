"""The supernet of a declared space, derived from its declaration.

The declaration's code is read a third time with a :class:`Realizer`, which answers every
choice with a mixed operation (:mod:`nasforge.kernel.declared_mixing`): a layer choice is a
:class:`~nasforge.kernel.declared_mixing.MixedLayer` of all its candidates, a repeat a
:class:`~nasforge.kernel.declared_mixing.MixedDepth` of its deepest stack of blocks, an input
choice a :class:`~nasforge.kernel.declared_mixing.MixedInputs`, and the value choices of each
scope one :class:`~nasforge.kernel.declared_mixing.MixedScope` over the scope's variants. A
width or any integer a variant hands on (a repeat's carry) is handed on at its largest,
since narrower outputs are padded with zeros to the widest.

:class:`DeclaredSupernet` is the network under the core's supernet contract: one cell
(architecture tensor) per group of choices with the same cell name and candidates (by
default a choice's own label, so every block's ``kernel`` is a row of the cell
``kernel``), each row one choice, each column one candidate, tagged with the roles a layer
choice names (``zero``, ``skip``); every row keeps one op
(:class:`~nasforge.kernel.supernet_topology.OneOpPerEdge`). A row of a choice absent from a
genotype holds that choice's first candidate, as the genotype does, and computes nothing.
:meth:`DeclaredSupernet.inherit` gives ``build(g)`` carrying the supernet's weights, the
network the supernet computes under ``one_hot_weights(g)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import torch
from torch import nn

from nasforge.kernel.declaration import Declaration
from nasforge.kernel.declared_choices import (
    DEPTH,
    INPUTS,
    LAYER,
    VALUE,
    WIDTH,
    DeclarationError,
    DeclaredChoice,
    Token,
)
from nasforge.kernel.declared_chooser import Chooser
from nasforge.kernel.declared_mixing import (
    ArchRows,
    MixedDepth,
    MixedInputs,
    MixedLayer,
    MixedScope,
    SelectInputs,
    slices,
)
from nasforge.kernel.declared_reading import (
    call_block,
    guarded,
    module_result,
    not_recorded,
    repeat_result,
    scope_result,
    takes_chooser,
    weightless,
)
from nasforge.kernel.errors import show
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import KeptCells, SupernetMixin
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge, OpSet


class DeclaredSpace(Protocol):
    """What the supernet uses of its :class:`~nasforge.kernel.declared_space.DeclaredSpace`
    (a protocol, so that module need not be imported back)."""

    @property
    def name(self) -> str: ...
    @property
    def declaration(self) -> Declaration: ...
    def declare(self, c: Chooser, **options: Any) -> nn.Module: ...
    def genotype(self, choices: Sequence[Token]) -> Genotype: ...
    def validate(self, g: Genotype) -> None: ...
    def build(self, g: Genotype, *args: Any, **options: Any) -> nn.Module: ...


#: DARTS's 1e-3 * N(0, 1): a near-uniform softmax with no ties before training.
ALPHA_INIT_SCALE = 1e-3


class Realizer:
    """Answers each choice of the declaration with its mixed operation."""

    def __init__(self, declaration: Declaration, rows: ArchRows) -> None:
        self.declaration = declaration
        self.rows = rows
        self.own: dict[str, list[DeclaredChoice]] = {}
        for c in declaration.choices:
            if c.kind in (VALUE, WIDTH):
                self.own.setdefault(c.scope, []).append(c)

    def check(self, label: str, kind: str, tokens: tuple[Token, ...]) -> None:
        index = self.declaration.index.get(label)
        if index is None:
            raise not_recorded(label)
        recorded = self.declaration.choices[index]
        if recorded.kind != kind or recorded.tokens != tokens:
            raise DeclarationError(
                f"choice '{label}' changed between readings: its candidates must not depend on other "
                "choices or on network options"
            )

    # --- scopes -------------------------------------------------------------------------
    def realize(
        self, parent: Chooser, path: str, run: Callable[[Chooser], Any], *, block_index: int | None = None
    ) -> Any:
        """``run`` on the chooser of scope ``path``: once when the scope makes no value
        choice, else once per variant, as one MixedScope in place of the module it returns."""
        own = self.own.get(path, [])
        labels = [c.label for c in own]
        combos = list(itertools.product(*(range(len(c.tokens)) for c in own)))

        def chooser(combo: tuple[int, ...]) -> Chooser:
            return parent.inner(path, fixed=dict(zip(labels, combo, strict=True)), block_index=block_index)

        if len(combos) == 1:
            return run(chooser(combos[0]))
        with weightless():
            results = [run(chooser(combo)) for combo in combos]
        templates = [_module_of(r) for r in results]
        tokens = [c.tokens for c in own]
        mixed = MixedScope(
            path, labels, tokens, combos, templates, lambda v: _module_of(run(chooser(combos[v]))), self.rows
        )
        if not isinstance(results[0], tuple):
            return mixed
        extras = [
            merge([r[k] for r in results], what=f"scope '{path or 'top level'}'")
            for k in range(1, len(results[0]))
        ]
        return (mixed, *extras)

    # --- the requests -------------------------------------------------------------------
    def value(
        self, c: Chooser, label: str, kind: str, tokens: tuple[Token, ...], values: tuple[Any, ...], cell: str
    ) -> Any:
        self.check(label, kind, tokens)
        if label not in c.fixed:
            raise not_recorded(label)
        return values[c.fixed[label]]

    def layer(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        candidates: tuple[Any, ...],
        cell: str,
        *,
        zero: Token | None = None,
        skip: Token | None = None,
    ) -> nn.Module:
        self.check(label, LAYER, tokens)
        made = []
        for token, item in zip(tokens, candidates, strict=True):
            if isinstance(item, nn.Module):
                made.append(item)
                continue
            what = f"layer choice '{label}': candidate '{token}'"

            def run(ch: Chooser, item: Any = item, what: str = what) -> nn.Module:
                return module_result(item(ch) if takes_chooser(item) else item(), what=what)

            made.append(self.realize(c, f"{label}.{token}", run))
        return MixedLayer(label, tokens, made, self.rows, zero=zero)

    def repeat(
        self,
        c: Chooser,
        label: str,
        depths: tuple[int, ...],
        block: Callable[..., Any],
        carry: Any,
        cell: str,
    ) -> Any:
        depth_label = f"{label}.depth"
        self.check(depth_label, DEPTH, depths)
        blocks: list[nn.Module] = []
        carries: list[Any] = []
        current = carry
        for i in range(max(depths)):
            scope = f"{label}.block{i}"

            def run(ch: Chooser, current: Any = current) -> tuple[nn.Module, Any]:
                return call_block(ch, block, current, label)

            module, current = self.realize(c, scope, run, block_index=i)
            blocks.append(module)
            if i + 1 in depths:
                carries.append(current)
        mixed = MixedDepth(depth_label, depths, blocks, self.rows)
        return repeat_result(mixed, merge(carries, what=f"repeat '{label}'"), carry)

    def block(
        self, c: Chooser, label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        return self.realize(c, label, lambda ch: scope_result(fn(ch, *args, **kwargs), label=label))

    def inputs(
        self,
        c: Chooser,
        label: str,
        tokens: tuple[Token, ...],
        picks: tuple[tuple[int, ...], ...],
        reduce: str,
        cell: str,
    ) -> nn.Module:
        self.check(label, INPUTS, tokens)
        return MixedInputs(label, picks, reduce, self.rows)


def _module_of(result: Any) -> nn.Module:
    return result[0] if isinstance(result, tuple) else result


def merge(values: Sequence[Any], *, what: str) -> Any:
    """One value for what the alternatives hand on: theirs when they agree, the largest
    when they are integers (a width: narrower outputs are padded to it)."""
    first = values[0]
    if all(v is first or v == first for v in values):
        return first
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return max(values)
    other = next(v for v in values if not (v is first or v == first))
    raise DeclarationError(
        f"{what}: its alternatives hand on {show(first)} and {show(other)}; only integers (taken at their "
        "largest) may differ"
    )


# --- the topology -------------------------------------------------------------------------------
def cells_of(declaration: Declaration) -> tuple[tuple[CellTopology, tuple[str, ...]], ...]:
    """(cell, the labels of its rows) for each group of choices (see the module docstring)."""
    groups: dict[tuple[str, tuple[str, ...], str | None, str | None], list[str]] = {}
    for c in declaration.choices:
        key = (c.cell, tuple(str(t) for t in c.tokens), _text(c.zero), _text(c.skip))
        groups.setdefault(key, []).append(c.label)
    names: set[str] = set()
    out = []
    for (cell, ops, zero, skip), labels in groups.items():
        name = cell if cell not in names else f"{cell}[{','.join(ops)}]"
        names.add(name)
        topology = CellTopology(
            name=name,
            ops=OpSet(ops, zero=zero, skip=skip),
            edges=tuple((i, i + 1) for i in range(len(labels))),
            inputs=(0,),
            output=(len(labels),),
            rule=OneOpPerEdge(),
            dataflow=False,  # rows are choices of their own: a zero op cuts nothing off
        )
        out.append((topology, tuple(labels)))
    return tuple(out)


def _text(token: Token | None) -> str | None:
    return None if token is None else str(token)


class DeclaredSupernet(SupernetMixin, nn.Module):
    """The supernet of a declared space (see the module docstring); ``options`` are the
    declaration's network options (``num_classes``, ``in_channels``, ...)."""

    def __init__(self, space: DeclaredSpace, options: dict[str, Any]) -> None:
        super().__init__()
        self.__dict__["space"] = space
        self.options = dict(options)
        declaration = space.declaration
        self.__dict__["_arch"] = ArchRows()
        realizer = Realizer(declaration, self.__dict__["_arch"])
        root = Chooser(realizer)
        network = guarded(
            space.name, lambda: realizer.realize(root, "", lambda ch: space.declare(ch, **options))
        )
        self.network = module_result(network, what=f"space '{space.name}': its declaration")
        cells = cells_of(declaration)
        self.topology: tuple[CellTopology, ...] = tuple(cell for cell, _ in cells)
        self.row_labels: tuple[tuple[str, ...], ...] = tuple(labels for _, labels in cells)
        self.alphas = nn.ParameterList(
            nn.Parameter(ALPHA_INIT_SCALE * torch.randn(cell.shape)) for cell in self.topology
        )

    # --- parameters -------------------------------------------------------------------
    def arch_parameters(self) -> list[nn.Parameter]:
        return list(self.alphas)

    def weight_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("alphas.")]

    # --- forward ------------------------------------------------------------------------
    def forward(
        self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        """Logits under edge weights (one tensor per cell); None: the softmax of the alphas."""
        if weights is None:
            ws = [torch.softmax(a, dim=-1) for a in self.alphas]
        else:
            ws = list(weights)
            if len(ws) != len(self.topology):
                raise ValueError(
                    f"edge weights must be {len(self.topology)} tensors, one per cell, got {len(ws)}"
                )
            for w, cell in zip(ws, self.topology, strict=True):
                if tuple(w.shape) != cell.shape:
                    raise ValueError(
                        f"edge weights of cell '{cell.name}' must have shape {cell.shape}, "
                        f"got {tuple(w.shape)}"
                    )
        arch: ArchRows = self.__dict__["_arch"]
        arch.set(list(zip(ws, self.row_labels, strict=True)), sparse=sparse)
        return self.network(x)

    # --- the contract's discrete views --------------------------------------------------
    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        space: DeclaredSpace = self.__dict__["space"]
        space.validate(g)
        values = space.declaration.assignment(g.choices)
        return tuple(
            tuple(KeptEdge(str(values[label]), i, i + 1) for i, label in enumerate(labels))
            for labels in self.row_labels
        )

    def genotype_of(self, kept: KeptCells) -> Genotype:
        space: DeclaredSpace = self.__dict__["space"]
        declaration = space.declaration
        if len(kept) != len(self.topology):
            raise ValueError(f"expected {len(self.topology)} cells of kept edges, got {len(kept)}")
        values: dict[str, Token] = {}
        for cell, labels, edges in zip(self.topology, self.row_labels, kept, strict=True):
            cell.check_kept(edges)
            for e in edges:
                label = labels[cell.row(e.source, e.target)]
                values[label] = declaration.choices[declaration.index[label]].read_token(e.op)
        return space.genotype(declaration.values_of(values))

    # --- weight inheritance -------------------------------------------------------------
    def inherit(self, g: Genotype) -> nn.Module:
        """``build(g)`` (same options) carrying this supernet's weights: the network the
        supernet computes under ``one_hot_weights(g)``, as a module of its own."""
        space: DeclaredSpace = self.__dict__["space"]
        space.validate(g)
        with weightless():
            built = space.build(g, **self.options)
        like = self.alphas[0]
        built = built.to_empty(device=like.device)
        values = space.declaration.assignment(g.choices)
        with torch.no_grad():
            _copy(built, self.network, None, values, "")
        return built.train(self.training)


def _copy(
    built: nn.Module,
    net: nn.Module,
    source: dict[str, torch.Tensor] | None,
    values: dict[str, Token],
    where: str,
) -> None:
    """Fill ``built``'s tensors from ``net``'s (``source``: the tensors of ``net`` when it is
    a weightless template), walking both module trees side by side."""

    def sub(prefix: str) -> dict[str, torch.Tensor] | None:
        if source is None:
            return None
        return {k[len(prefix) :]: v for k, v in source.items() if k.startswith(prefix)}

    if isinstance(net, MixedLayer):
        k = net.tokens.index(values[net.label])
        return _copy(built, net.candidates[k], sub(f"candidates.{k}."), values, where)
    if isinstance(net, MixedDepth):
        depth = values[net.label]
        if not isinstance(built, nn.Sequential) or len(built) != depth:
            raise DeclarationError(f"supernet and built network differ at '{where}': expected {depth} blocks")
        for i in range(int(depth)):
            _copy(built[i], net.blocks[i], sub(f"blocks.{i}."), values, f"{where}.{i}")
        return None
    if isinstance(net, MixedScope):
        v = net.variant(
            [toks.index(values[label]) for label, toks in zip(net.labels, net.tokens, strict=True)]
        )
        stored = None if source is None else {k: t for k, t in source.items() if "." not in k}
        return _copy(built, net.__dict__["templates"][v], net.tensors_of(v, stored), values, where)
    if isinstance(net, MixedInputs):
        if not isinstance(built, SelectInputs):
            raise DeclarationError(
                f"supernet and built network differ at '{where}': expected an input choice"
            )
        return None
    if type(built) is not type(net):
        raise DeclarationError(
            f"supernet and built network differ at '{where or 'top level'}': {type(net).__name__} against "
            f"{type(built).__name__}"
        )
    own = dict(net.named_parameters(recurse=False)) | dict(net.named_buffers(recurse=False))
    for name, t in [*built.named_parameters(recurse=False), *built.named_buffers(recurse=False)]:
        if t is None:
            continue
        src = source.get(name) if source is not None else own.get(name)
        if src is None or src.dim() != t.dim() or any(a > b for a, b in zip(t.shape, src.shape, strict=True)):
            raise DeclarationError(
                f"supernet and built network differ at '{where}.{name}': {tuple(t.shape)} against "
                f"{None if src is None else tuple(src.shape)}"
            )
        t.copy_(src[slices(built, name, tuple(t.shape), tuple(src.shape))])
    children = dict(net.named_children())
    for name, child in built.named_children():
        if name not in children:
            raise DeclarationError(
                f"supernet and built network differ at '{where}.{name}': the supernet has no such module"
            )
        _copy(child, children[name], sub(f"{name}."), values, f"{where}.{name}" if where else name)
    return None


__all__ = ["ALPHA_INIT_SCALE", "DeclaredSupernet", "Realizer", "cells_of", "merge"]
