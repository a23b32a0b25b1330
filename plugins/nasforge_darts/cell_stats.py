"""Structural statistics of a discrete cell: how many skips, how deep (Theorem 4 / Fig. 1).

PR-DARTS's claim is that DARTS drifts to skip-heavy, shallow cells and its regularisers
push back; these numbers make that visible for any derived genotype.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from nasforge.kernel.supernet_topology import OpSet


@attrs.frozen
class CellStats:
    """Counts and depths of one cell (``depth`` in edges, from an input node)."""

    skips: int
    parametric: int
    pools: int
    edges: int
    depth: int
    parametric_depth: int

    @property
    def skip_share(self) -> float:
        return self.skips / self.edges if self.edges else 0.0


def cell_stats(edges: Iterable[tuple[str, int, int]], *, inputs: Sequence[int], ops: OpSet) -> CellStats:
    """Stats of a cell given as ``(op, source, target)`` triples; zero-op edges are absent.

    The op roles (skip, parametric, pools, zero) come from the cell's topology.
    """
    present = [(op, s, t) for op, s, t in edges if op != ops.zero]
    depth: dict[int, int] = {i: 0 for i in inputs}
    pdepth: dict[int, int] = {i: 0 for i in inputs}
    for op, s, t in sorted(present, key=lambda e: (e[2], e[1])):
        if s not in depth:
            continue  # unreachable source
        is_param = int(op in ops.parametric)
        depth[t] = max(depth.get(t, 0), depth[s] + 1)
        pdepth[t] = max(pdepth.get(t, 0), pdepth[s] + is_param)
    return CellStats(
        skips=sum(ops.skip is not None and op == ops.skip for op, _, _ in present),
        parametric=sum(op in ops.parametric for op, _, _ in present),
        pools=sum(op in ops.pools for op, _, _ in present),
        edges=len(present),
        depth=max(depth.values()),
        parametric_depth=max(pdepth.values()),
    )
