"""The weight-sharing MLP under the core's supernet contract: two cells, searched independently.

Eigen-NAS searches activations and skips "independently" (§5.1): a softmax over the five
activations per hidden layer and a relaxed skip weight per skipped layer. That is two
architecture tensors, one :class:`~nasforge.CellTopology` each, both chains of
``OneOpPerEdge`` rows:

- ``activation``: rows 1..L-1 (edge l-1 -> l is hidden layer l), columns the activations;
  the layer's linear map is shared by its five candidates (one matmul per layer), so no
  candidate is "parametric" (none adds weights or depth of its own);
- ``skip``: rows 1..L-2 (edge k -> k+1 is the skip around hidden layer k+2), columns
  ``none`` (the zero op: no skip) and ``skip`` (the identity).

A node is Σ_k w[l, k]·σ_k(c_l W_l f_{l-1}) + w_skip[l, skip]·f_{l-1}. DARTS, PR-DARTS and
NASI reach the space through these members alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from nasforge import CellTopology, Genotype, KeptEdge, OneOpPerEdge, OpSet, SupernetMixin
from nasforge_eigennas.activations import ACTIVATIONS, DEFAULT_ACTIVATIONS, ActivationSet
from nasforge_eigennas.network import MLPTrunk

NO_SKIP = "none"
SKIP = "skip"
SKIP_OPS: tuple[str, str] = (NO_SKIP, SKIP)


def topology(depth: int) -> tuple[CellTopology, CellTopology]:
    """The (activation, skip) cells of a depth-``depth`` network."""
    hidden = depth - 1
    act = CellTopology(
        name="activation",
        ops=OpSet(ACTIVATIONS),
        edges=tuple((k, k + 1) for k in range(hidden)),
        inputs=(0,),
        output=(hidden,),
        rule=OneOpPerEdge(),
    )
    skip = CellTopology(
        name="skip",
        ops=OpSet(SKIP_OPS, zero=NO_SKIP, skip=SKIP),
        edges=tuple((k, k + 1) for k in range(hidden - 1)),
        inputs=(0,),
        output=(hidden - 1,),
        rule=OneOpPerEdge(),
        dataflow=False,  # a skip adds to a layer the activation cell computes: "none" cuts nothing
    )
    return act, skip


def kept_edges_of(activations: Sequence[str], skips: Sequence[int]) -> tuple[tuple[KeptEdge, ...], ...]:
    acts = tuple(KeptEdge(a, k, k + 1) for k, a in enumerate(activations))
    bits = tuple(KeptEdge(SKIP_OPS[int(b)], k, k + 1) for k, b in enumerate(skips))
    return acts, bits


def _active(w: torch.Tensor, sparse: bool) -> list[list[int]]:
    if sparse or not w.requires_grad:  # zero-weight ops cannot matter: skip them
        return [[k for k, on in enumerate(row) if on] for row in w.detach().ne(0).tolist()]
    return [list(range(w.shape[1]))] * w.shape[0]  # a straight-through gradient reaches every op


class MLPSupernet(SupernetMixin, nn.Module):
    """Every activation on every layer and every skip, mixed by edge weights given from outside."""

    def __init__(
        self,
        space: object,
        depth: int,
        *,
        width: int,
        num_classes: int,
        in_channels: int,
        input_size: int,
        in_features: int | None,
        parameterisation: str,
        normalize_input: bool,
        acts: ActivationSet = DEFAULT_ACTIVATIONS,
    ) -> None:
        super().__init__()
        self._space = space  # the owning space: genotype_of validates through it
        self.trunk = MLPTrunk(
            depth,
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            input_size=input_size,
            in_features=in_features,
            parameterisation=parameterisation,
            normalize_input=normalize_input,
        )
        self._topology = topology(depth)
        self._fns = [acts.torch_fn(a) for a in ACTIVATIONS]
        self.alpha_activation = nn.Parameter(1e-3 * torch.randn(self._topology[0].shape))
        self.alpha_skip = nn.Parameter(1e-3 * torch.randn(self._topology[1].shape))

    @property
    def topology(self) -> tuple[CellTopology, ...]:  # type: ignore[override]  # read-only: the mixin only reads it
        return self._topology

    def arch_parameters(self) -> list[nn.Parameter]:
        return [self.alpha_activation, self.alpha_skip]

    def weight_parameters(self) -> list[nn.Parameter]:
        return list(self.trunk.parameters())

    def forward(
        self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        if weights is None:
            weights = [torch.softmax(a, dim=-1) for a in self.arch_parameters()]
        w_act, w_skip = weights
        for w, cell in zip(weights, self._topology, strict=True):
            if tuple(w.shape) != cell.shape:
                raise ValueError(f"{cell.name} weights must have shape {cell.shape}, got {tuple(w.shape)}")
        on_act, on_skip = _active(w_act, sparse), _active(w_skip, sparse)
        skip_col = SKIP_OPS.index(SKIP)
        f = self.trunk.adapter(x)
        for layer in range(1, self.trunk.depth):
            h = self.trunk.linear(layer, f)
            node = None
            for k in on_act[layer - 1]:
                term = w_act[layer - 1, k] * self._fns[k](h)
                node = term if node is None else node + term
            if layer >= 2 and skip_col in on_skip[layer - 2]:
                term = w_skip[layer - 2, skip_col] * f
                node = term if node is None else node + term
            f = torch.zeros_like(h) if node is None else node  # every op off: the node is zero
        return self.trunk.output(f)

    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        activations, skips = self._space.split(g)  # type: ignore[attr-defined]
        return kept_edges_of(activations, skips)

    def genotype_of(self, kept: Sequence[Sequence[KeptEdge]]) -> Genotype:
        if len(kept) != 2:
            raise ValueError(f"an MLP genotype is two cells (activation, skip), got {len(kept)}")
        for cell, edges in zip(self._topology, kept, strict=True):
            cell.check_kept(edges)
        acts = [e.op for e in sorted(kept[0], key=lambda e: e.source)]
        bits = [SKIP_OPS.index(e.op) for e in sorted(kept[1], key=lambda e: e.source)]
        return self._space.from_parts(acts, bits)  # type: ignore[attr-defined]
