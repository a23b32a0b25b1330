"""An architecture of any supernet-contract space as a tuple of categorical decisions.

NESBS needs one uniform encoding on which uniform sampling, the posterior's logits, MC
sampling, the Gaussian-mixture relaxation and its projection are all space-agnostic
(our encoding; eq. 5.7 covers ops only). It is read off each cell's rule, never off a space's name:

- one op per edge (NAS-Bench-201): one decision per edge over all the cell's ops;
- top-k inputs per node (DARTS): per computed node, one decision over the k-sets of its
  sources (multisets when the rule allows one source twice) and k decisions over the
  ops a kept edge may hold (all but the zero op, which the thesis never mentions).

Every assignment is then a valid architecture (no rejection), uniform assignments are
uniform architectures (the fairness of Prop. B.1), and a relaxed sample (rows that are
one-hot in the forward pass and soft in the backward pass) becomes the supernet's edge
weights by a differentiable map: ``w[(src, node), op] = sum_p s_pair[p] * s_op_j[op]``
over the pairs p whose j-th source is ``src``. Hard rows give exactly the architecture's
single path.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import attrs
import torch

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import Supernet
from nasforge.kernel.supernet_topology import CellTopology, KeptEdge, OneOpPerEdge

#: One architecture: the chosen index of every decision, in :attr:`ArchEncoding.decisions` order.
Assignment = tuple[int, ...]


@attrs.frozen
class Decision:
    """One categorical choice: its label (for logs), its choices' labels, and its cell."""

    name: str
    choices: tuple[str, ...]
    cell: int

    @property
    def size(self) -> int:
        return len(self.choices)


class _EdgeCell:
    """One decision per edge, over every op of the cell."""

    def __init__(self, index: int, cell: CellTopology) -> None:
        self.cell = cell
        self.decisions = tuple(
            Decision(f"{cell.name}:{s}->{t}", cell.ops.names, index) for s, t in cell.edges
        )

    def weights(self, rows: Sequence[torch.Tensor]) -> torch.Tensor:
        return torch.stack(list(rows))

    def kept(self, picks: Sequence[int]) -> tuple[KeptEdge, ...]:
        return tuple(
            KeptEdge(self.cell.ops.names[k], s, t) for k, (s, t) in zip(picks, self.cell.edges, strict=True)
        )


class _NodeCell:
    """Per computed node: one decision over its k-sets of sources, k decisions over the non-zero ops."""

    def __init__(self, index: int, cell: CellTopology) -> None:
        rule = cell.rule
        self.cell = cell
        self.k = rule.k  # type: ignore[union-attr]
        combine = itertools.combinations if rule.distinct_sources else itertools.combinations_with_replacement  # type: ignore[union-attr]
        self.ops = cell.ops.nonzero
        self.op_columns = torch.tensor(cell.ops.columns(self.ops))
        self.nodes = cell.computed
        self.pairs = tuple(tuple(combine(cell.sources_of(n), self.k)) for n in self.nodes)
        decisions: list[Decision] = []
        #: Per node and position j: the (edges x pairs) map from a pair sample to the edge it selects.
        self.maps: list[list[torch.Tensor]] = []
        for node, pairs in zip(self.nodes, self.pairs, strict=True):
            labels = tuple("+".join(str(s) for s in p) for p in pairs)
            decisions.append(Decision(f"{cell.name}:inputs->{node}", labels, index))
            decisions.extend(Decision(f"{cell.name}:op{j}->{node}", self.ops, index) for j in range(self.k))
            maps = []
            for j in range(self.k):
                m = torch.zeros(len(cell.edges), len(pairs))
                for p, pair in enumerate(pairs):
                    m[cell.row(pair[j], node), p] = 1.0
                maps.append(m)
            self.maps.append(maps)
        self.decisions = tuple(decisions)

    def weights(self, rows: Sequence[torch.Tensor]) -> torch.Tensor:
        like = rows[0]
        nz = like.new_zeros(len(self.cell.edges), len(self.ops))
        it = iter(rows)
        for maps in self.maps:
            pair = next(it)
            for j in range(self.k):
                op = next(it)
                nz = nz + (maps[j].to(like) @ pair)[:, None] * op[None, :]
        w = like.new_zeros(self.cell.shape)
        return w.index_copy(1, self.op_columns.to(like.device), nz)

    def kept(self, picks: Sequence[int]) -> tuple[KeptEdge, ...]:
        out: list[KeptEdge] = []
        it = iter(picks)
        for node, pairs in zip(self.nodes, self.pairs, strict=True):
            pair = pairs[next(it)]
            ops = [self.ops[next(it)] for _ in range(self.k)]
            out.extend(KeptEdge(op, src, node) for op, src in zip(ops, pair, strict=True))
        return tuple(out)


class ArchEncoding:
    """The categorical decisions of a supernet's cells, and the maps to weights and genotypes."""

    def __init__(self, supernet: Supernet) -> None:
        self.supernet = supernet
        self.cells = tuple(
            _EdgeCell(i, c) if isinstance(c.rule, OneOpPerEdge) else _NodeCell(i, c)
            for i, c in enumerate(supernet.topology)
        )
        self.decisions: tuple[Decision, ...] = tuple(d for c in self.cells for d in c.decisions)
        self.sizes: tuple[int, ...] = tuple(d.size for d in self.decisions)
        self.max_size = max(self.sizes)
        #: [D, Kmax] bool: which padded entries are real choices.
        self.mask = torch.tensor([[k < s for k in range(self.max_size)] for s in self.sizes])

    def __len__(self) -> int:
        return len(self.decisions)

    def _split(self, items: Sequence) -> list[Sequence]:
        out, start = [], 0
        for c in self.cells:
            out.append(items[start : start + len(c.decisions)])
            start += len(c.decisions)
        return out

    def edge_weights(self, rows: torch.Tensor) -> list[torch.Tensor]:
        """Supernet edge weights (one tensor per cell) from per-decision rows [D, Kmax]
        (one-hot, straight-through or soft; padding is ignored)."""
        per = [rows[d, :s] for d, s in enumerate(self.sizes)]
        return [c.weights(r) for c, r in zip(self.cells, self._split(per), strict=True)]

    def one_hot(self, a: Assignment, *, like: torch.Tensor | None = None) -> torch.Tensor:
        """[D, Kmax] rows selecting ``a`` (no gradient)."""
        rows = torch.zeros(len(self), self.max_size)
        rows[range(len(self)), list(a)] = 1.0
        return rows if like is None else rows.to(like)

    def weights_of(self, a: Assignment, *, like: torch.Tensor | None = None) -> list[torch.Tensor]:
        """Edge weights that run exactly ``a``'s single path."""
        return self.edge_weights(self.one_hot(a, like=like))

    def genotype(self, a: Assignment) -> Genotype:
        """The genotype ``a`` encodes (through the supernet's ``genotype_of``, which validates)."""
        self.check(a)
        kept = [c.kept(p) for c, p in zip(self.cells, self._split(list(a)), strict=True)]
        return self.supernet.genotype_of(kept)

    def check(self, a: Assignment) -> None:
        if len(a) != len(self) or any(not 0 <= k < s for k, s in zip(a, self.sizes, strict=False)):
            raise ValueError(f"assignment {a} does not fit decisions of sizes {self.sizes}")

    def uniform(self, generator: torch.Generator) -> Assignment:
        """Every decision uniformly at random (one draw per decision, from ``generator``)."""
        u = torch.rand(len(self), generator=generator, dtype=torch.float64)
        return tuple(min(int(x * s), s - 1) for x, s in zip(u.tolist(), self.sizes, strict=True))
