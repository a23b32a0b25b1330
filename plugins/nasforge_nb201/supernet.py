"""The NAS-Bench-201 weight-sharing supernet with explicit architecture parameters.

Every edge of every cell holds all five ops (a DARTS mixed op); one ``alphas`` parameter of
shape (6, 5) is shared by all 3N cells, as in DARTS on NAS-Bench-201. The forward pass
takes the edge weights from the caller when given, because the one-shot methods differ
exactly there: DARTS uses ``softmax(alphas)`` (the default), NASI a straight-through
Gumbel sample, PR-DARTS binary gates, NESBS a single sampled path. Keeping the weighting
outside lets all of them share one network, one set of weights and one ``genotype()``.

Zero-weight ops are skipped when that cannot change a gradient (the weights do not
require grad, or the caller asks for ``sparse=True``), so a one-hot weight matrix runs
only its single path: the uniform single-path training of NESBS costs about what a
stand-alone network costs.

It follows the core's supernet contract (:mod:`nasforge.kernel.supernet`): its one cell is
:data:`TOPOLOGY`, six edges that each keep one op, so every one-shot method reads it
without knowing it is NAS-Bench-201.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import KeptCells, SupernetMixin
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge, OpSet
from nasforge_nb201.arch import (
    EDGES,
    NUM_EDGES,
    NUM_NODES,
    NUM_OPS,
    OP_NAMES,
    SPACE_NAME,
    SPACE_VERSION,
    check_ops,
    op_index,
)
from nasforge_nb201.macro import MacroConfig, MacroNetwork
from nasforge_nb201.network import NB201Network
from nasforge_nb201.ops import make_op

ALPHA_SHAPE = (NUM_EDGES, NUM_OPS)
#: Scale of the random initial alphas: DARTS's 1e-3 * N(0, 1), small enough to start
#: near-uniform and large enough that ``genotype()`` has no ties before training.
ALPHA_INIT_SCALE = 1e-3

Active = Sequence[Sequence[int]]

#: The cell as the supernet contract describes it: edges (source, target) in alpha row
#: order, the five ops with their roles, one input, node 3 the output, one op per edge.
TOPOLOGY = CellTopology(
    name="cell",
    ops=OpSet(
        OP_NAMES,
        zero="none",
        skip="skip_connect",
        parametric=("nor_conv_1x1", "nor_conv_3x3"),
        pools=("avg_pool_3x3",),
    ),
    edges=tuple((src, dst) for dst, src in EDGES),
    inputs=(0,),
    output=(NUM_NODES - 1,),
    rule=OneOpPerEdge(),
)


class MixedOp(nn.Module):
    """All five ops of one edge; the output is their weighted sum."""

    def __init__(self, channels: int, *, affine: bool, track_running_stats: bool) -> None:
        super().__init__()
        self.ops = nn.ModuleList(
            make_op(name, channels, affine=affine, track_running_stats=track_running_stats)
            for name in OP_NAMES
        )

    def forward(self, x: torch.Tensor, weights: torch.Tensor, active: Sequence[int]) -> torch.Tensor:
        out: torch.Tensor | None = None
        for k in active:
            term = weights[k] * self.ops[k](x)
            out = term if out is None else out + term
        return x.mul(0.0) if out is None else out


class MixedCell(nn.Module):
    """A NAS-Bench-201 cell with a mixed op on each of its six edges."""

    def __init__(self, channels: int, *, affine: bool, track_running_stats: bool) -> None:
        super().__init__()
        self.edges = nn.ModuleList(
            MixedOp(channels, affine=affine, track_running_stats=track_running_stats) for _ in EDGES
        )

    def forward(self, x: torch.Tensor, weights: torch.Tensor, active: Active) -> torch.Tensor:
        nodes = [x]
        for dst in range(1, NUM_NODES):
            total: torch.Tensor | None = None
            for e, (d, src) in enumerate(EDGES):
                if d == dst:
                    term = self.edges[e](nodes[src], weights[e], active[e])
                    total = term if total is None else total + term
            assert total is not None  # every node has at least one incoming edge
            nodes.append(total)
        return nodes[-1]


class NB201Supernet(SupernetMixin, MacroNetwork):
    """The one-shot network of the space; ``alphas`` are its architecture parameters."""

    topology: tuple[CellTopology, ...] = (TOPOLOGY,)

    def __init__(
        self,
        config: MacroConfig | None = None,
        *,
        affine: bool = False,
        track_running_stats: bool = True,
    ) -> None:
        super().__init__(
            config or MacroConfig(),
            lambda c: MixedCell(c, affine=affine, track_running_stats=track_running_stats),
        )
        self.affine = affine
        self.alphas = nn.Parameter(ALPHA_INIT_SCALE * torch.randn(ALPHA_SHAPE))

    # --- parameters -------------------------------------------------------------------
    def arch_parameters(self) -> list[nn.Parameter]:
        """The architecture parameters (what DARTS's outer optimiser updates)."""
        return [self.alphas]

    def weight_parameters(self) -> list[nn.Parameter]:
        """Every parameter except the architecture ones (the inner optimiser's share)."""
        return [p for name, p in self.named_parameters() if name != "alphas"]

    # --- forward ------------------------------------------------------------------------
    def forward(
        self,
        x: torch.Tensor,
        weights: Sequence[torch.Tensor] | torch.Tensor | Genotype | None = None,
        *,
        sparse: bool = False,
    ) -> torch.Tensor:
        """Logits of ``x`` under edge weights of shape (6, 5).

        ``weights`` is the contract's one-tensor sequence or the tensor itself;
        ``weights=None`` uses ``softmax(alphas)`` (DARTS); a Genotype runs its single
        path. ``sparse=True`` also skips zero-weight ops when the weights need gradients
        (GDAS-style: only the selected ops' weights then receive a gradient; a
        straight-through estimator that must reach every logit should leave it False).
        """
        if weights is None:
            weights = torch.softmax(self.alphas, dim=-1)
        elif isinstance(weights, Genotype):
            weights = self.one_hot(weights)
        elif isinstance(weights, list | tuple):
            if len(weights) != 1:
                raise ValueError(
                    f"edge weights must be one (6, 5) tensor (one cell type), got {len(weights)}"
                )
            weights = weights[0]
        w = _check_weights(weights)
        if sparse or not w.requires_grad:
            nonzero = w.detach().ne(0).cpu().tolist()  # one host sync per forward
            active: Active = [[k for k in range(NUM_OPS) if row[k]] for row in nonzero]
        else:
            active = [range(NUM_OPS)] * NUM_EDGES
        return self.run(x, lambda cell, h: cell(h, w, active))

    # --- the contract's discrete views --------------------------------------------------
    def kept_edges(self, g: Genotype) -> tuple[tuple[KeptEdge, ...], ...]:
        """The op each edge of ``g`` keeps, in alpha row order."""
        ops = _ops_of(g)
        return (tuple(KeptEdge(op, src, dst) for op, (src, dst) in zip(ops, TOPOLOGY.edges, strict=True)),)

    def genotype_of(self, kept: KeptCells) -> Genotype:
        """The cell keeping ``kept`` (one op per edge, in any order)."""
        (cell,) = kept
        TOPOLOGY.check_kept(cell)
        ops = [""] * NUM_EDGES
        for e in cell:
            ops[TOPOLOGY.row(e.source, e.target)] = e.op
        return Genotype(space=SPACE_NAME, version=SPACE_VERSION, choices=tuple(ops))

    # --- discrete views -----------------------------------------------------------------
    def genotype(self, weights: torch.Tensor | None = None) -> Genotype:
        """The argmax cell of ``weights`` (default: the alphas) as a nasforge Genotype."""
        w = _check_weights(self.alphas if weights is None else weights)
        return self.derive([w])  # the one-op-per-edge rule of TOPOLOGY

    def one_hot(self, g: Genotype | Sequence[str]) -> torch.Tensor:
        """(6, 5) one-hot weights selecting the ops of ``g`` (no gradient)."""
        ops = _ops_of(g)
        w = torch.zeros(ALPHA_SHAPE, dtype=self.alphas.dtype, device=self.alphas.device)
        w[range(NUM_EDGES), [op_index(op) for op in ops]] = 1.0
        return w

    def inherit(self, g: Genotype | Sequence[str]) -> NB201Network:
        """A stand-alone network of ``g`` carrying this supernet's weights for its ops.

        Its outputs equal ``self(x, g)`` in eval mode; BN affine parameters the supernet
        does not have (``affine=False``) stay at their identity values.
        """
        ops = _ops_of(g)
        net = NB201Network(ops, self.config).to(self.alphas.device, self.alphas.dtype)
        chosen = [op_index(op) for op in ops]
        state = {}
        for key, value in self.state_dict().items():
            if key == "alphas":
                continue
            m = _EDGE_KEY.fullmatch(key)
            if m is None:
                state[key] = value
            elif int(m["op"]) == chosen[int(m["edge"])]:
                state[f"{m['prefix']}edges.{m['edge']}.{m['rest']}"] = value
        missing, unexpected = net.load_state_dict(state, strict=False)
        allowed = not self.affine and all(k.endswith((".weight", ".bias")) for k in missing)
        if unexpected or (missing and not allowed):
            raise RuntimeError(f"supernet/network mismatch: missing {missing}, extra {unexpected}")
        return net


_EDGE_KEY = re.compile(r"(?P<prefix>layers\.\d+\.)edges\.(?P<edge>\d+)\.ops\.(?P<op>\d+)\.(?P<rest>.+)")


def _check_weights(weights: object) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != ALPHA_SHAPE:
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights)
        raise ValueError(f"edge weights must be a tensor of shape {ALPHA_SHAPE}, got {shape}")
    if not weights.is_floating_point():
        raise ValueError(f"edge weights must be floating point, got {weights.dtype}")
    return weights


def _ops_of(g: Genotype | Sequence[str]) -> tuple[str, ...]:
    ops = tuple(g.choices) if isinstance(g, Genotype) else tuple(g)
    check_ops(ops)
    return ops  # type: ignore[return-value]


def supernet(
    C: int = 16,
    N: int = 5,
    num_classes: int = 10,
    in_channels: int = 3,
    *,
    affine: bool = False,
    track_running_stats: bool = True,
) -> NB201Supernet:
    """The NAS-Bench-201 supernet; cell BN is non-affine by default, as in DARTS search."""
    config = MacroConfig(C=C, N=N, num_classes=num_classes, in_channels=in_channels)
    return NB201Supernet(config, affine=affine, track_running_stats=track_running_stats)
