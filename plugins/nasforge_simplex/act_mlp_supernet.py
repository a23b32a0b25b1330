"""The ``act-mlp`` supernet: every layer mixes all candidate activations by edge weights.

Layer ``l`` computes ``sum_k w[l, k] * sigma_k(linear_l(h))``: one linear map shared by
every candidate (the paper's shared weights W), one row of edge weights per layer (the
paper's alpha, one per layer, shared by all its units). The mixture sits after the linear
map, so the network output is linear in the last layer's weights (the linear head is
affine, and affine maps preserve convex combinations): that is the setting in which the
paper's identity is exact for the last layer and only approximate for the others, which
the diagnostic measures as the linearity gap.

It implements the core's supernet contract and nothing more: ``topology``,
``arch_parameters`` / ``weight_parameters``, ``forward(x, weights, sparse=...)``, and the
genotype <-> kept-edges pair; ``derive`` and ``one_hot_weights`` come from
:class:`nasforge.SupernetMixin`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from torch import nn

from nasforge import CellTopology, Genotype, KeptEdge, SupernetMixin
from nasforge_simplex.act_mlp_network import ActMlpNetwork, Skeleton
from nasforge_simplex.act_mlp_topology import act_mlp_topology
from nasforge_simplex.activations import make_activation

if TYPE_CHECKING:
    from nasforge_simplex.act_mlp_space import ActMlpSpace

#: DARTS's 1e-3 * N(0, 1): near-uniform softmax, yet no ties for arg max before training.
ALPHA_INIT_SCALE = 1e-3


class MixedActivation(nn.Module):
    """The candidate activations of one layer; the output is their weighted sum."""

    def __init__(self, ops: Sequence[str], *, negative_slope: float) -> None:
        super().__init__()
        self.acts = nn.ModuleList(make_activation(op, negative_slope=negative_slope) for op in ops)

    def forward(self, z: torch.Tensor, weights: torch.Tensor, active: Sequence[int]) -> torch.Tensor:
        out: torch.Tensor | None = None
        for k in active:
            term = weights[k] * self.acts[k](z)
            out = term if out is None else out + term
        return torch.zeros_like(z) if out is None else out  # every op off: the node is zero


class ActMlpSupernet(SupernetMixin, Skeleton):
    """The weight-sharing MLP; ``alpha`` (layers x ops) is its architecture tensor."""

    def __init__(
        self,
        space: ActMlpSpace,
        *,
        width: int = 64,
        num_classes: int = 10,
        in_channels: int = 3,
        in_features: int | None = None,
        pool: int = 8,
    ) -> None:
        super().__init__(
            space.layers,
            width=width,
            num_classes=num_classes,
            in_channels=in_channels,
            in_features=in_features,
            pool=pool,
        )
        self.space = space
        self.sizes: dict[str, int | None] = {
            "width": width,
            "num_classes": num_classes,
            "in_channels": in_channels,
            "in_features": in_features,
            "pool": pool,
        }
        self.cell: CellTopology = act_mlp_topology(space.layers, space.ops)
        self.topology: tuple[CellTopology, ...] = (self.cell,)
        self.mixed = nn.ModuleList(
            MixedActivation(space.ops, negative_slope=space.negative_slope) for _ in range(space.layers)
        )
        self.alpha = nn.Parameter(ALPHA_INIT_SCALE * torch.randn(self.cell.shape))

    # --- parameters -------------------------------------------------------------------
    def arch_parameters(self) -> list[nn.Parameter]:
        return [self.alpha]

    def weight_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if name != "alpha"]

    # --- forward ------------------------------------------------------------------------
    def forward(
        self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None, *, sparse: bool = False
    ) -> torch.Tensor:
        """Logits under edge weights (one ``(layers, ops)`` tensor); None: softmax(alpha)."""
        if weights is None:
            w = torch.softmax(self.alpha, dim=-1)
        else:
            if len(weights) != 1:
                raise ValueError(f"edge weights must be one {self.cell.shape} tensor, got {len(weights)}")
            w = weights[0]
        if tuple(w.shape) != self.cell.shape:
            raise ValueError(f"edge weights must have shape {self.cell.shape}, got {tuple(w.shape)}")
        n_ops = self.cell.shape[1]
        if sparse or not w.requires_grad:  # zero-weight ops cannot matter: skip them
            active: list[Sequence[int]] = [
                [k for k, on in enumerate(row) if on] for row in w.detach().ne(0).cpu().tolist()
            ]
        else:  # a straight-through gradient must reach ops weighted zero
            active = [range(n_ops)] * self.cell.shape[0]
        h = self.adapter(x)
        for layer, (linear, mixed) in enumerate(zip(self.linears, self.mixed, strict=True)):
            h = mixed(linear(h), w[layer], active[layer])
        return self.head(h)

    # --- the contract's discrete views --------------------------------------------------
    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        self.space.validate(g)
        return (
            tuple(
                KeptEdge(str(op), src, dst) for op, (src, dst) in zip(g.choices, self.cell.edges, strict=True)
            ),
        )

    def genotype_of(self, kept: Sequence[Sequence[KeptEdge]]) -> Genotype:
        (cell,) = kept
        self.cell.check_kept(cell)
        ops = [""] * self.cell.shape[0]
        for e in cell:
            ops[self.cell.row(e.source, e.target)] = e.op
        return self.space.genotype(ops)

    # --- weight inheritance -------------------------------------------------------------
    def inherit(self, g: Genotype) -> ActMlpNetwork:
        """The stand-alone network of ``g`` carrying this supernet's shared weights.

        Its outputs equal ``self(x, self.one_hot_weights(g))``: the paper's "discrete
        architecture evaluated with the shared weights", as a module of its own.
        """
        self.space.validate(g)
        net = ActMlpNetwork(
            tuple(str(op) for op in g.choices),
            negative_slope=self.space.negative_slope,
            **self.sizes,  # type: ignore[arg-type]
        )
        state = {k: v for k, v in self.state_dict().items() if k != "alpha"}
        net.load_state_dict(state)
        return net.to(self.alpha.device, self.alpha.dtype)
