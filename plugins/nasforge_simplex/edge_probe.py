"""The diagnostic on a real supernet: force one mixed edge to each candidate, keep the rest.

The paper's ``g_i`` is "discrete architecture i evaluated with the shared weights"; in a
supernet with several mixed edges, that is the network with edge ``e`` forced to
candidate i and every other edge left at its searched weights (our heuristic: the paper
leaves DAG cells to future work). The probe computes those outputs through the supernet contract alone
(``forward(x, weights)``), so it runs on any space: the last activation layer of ``act-mlp`` (exactly
linear: the identity holds), its earlier layers and the cells of NAS-Bench-201 or DARTS
(not linear: the report says "heuristic" and measures how far from linear it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import torch

from nasforge.kernel.supernet import Supernet
from nasforge_simplex.consistency import ConsistencyReport, consistency_report

#: Samples per forward pass of the probe (bounds its memory on large supernets).
CHUNK = 256


@attrs.frozen
class EdgeConsistency:
    """The diagnostic of one mixed edge of a supernet."""

    cell: str
    row: int
    source: int
    target: int
    report: ConsistencyReport

    @property
    def label(self) -> str:
        return f"{self.cell} {self.source}->{self.target}"

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "row": self.row,
            "edge": [self.source, self.target],
            **self.report.to_json(),
        }


@torch.no_grad()
def _outputs(supernet: Supernet, x: torch.Tensor, weights: Sequence[torch.Tensor]) -> torch.Tensor:
    parts = []
    for i in range(0, x.shape[0], CHUNK):
        out = supernet(x[i : i + CHUNK], list(weights))  # type: ignore[operator]
        parts.append(out[0] if isinstance(out, tuple | list) else out)  # logits of (logits, aux)
    return torch.cat(parts)


def probe_edge(
    supernet: Supernet, alphas: Sequence[torch.Tensor], cell: int, row: int, x: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(g, f)``: ``g[:, i]`` the output with edge ``row`` of ``cell`` forced to op i,
    ``f`` the output under ``alphas``; the supernet is put in eval mode (and restored)."""
    module: Any = supernet
    was_training = module.training
    module.eval()
    try:
        base = [a.detach() for a in alphas]
        f = _outputs(supernet, x, base)
        columns = []
        for op in range(base[cell].shape[1]):
            forced = [a.clone() for a in base]
            forced[cell][row] = 0.0
            forced[cell][row, op] = 1.0
            columns.append(_outputs(supernet, x, forced))
        return torch.stack(columns, dim=1), f
    finally:
        module.train(was_training)


def supernet_consistency(
    supernet: Supernet,
    alphas: Sequence[torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor | None = None,
    *,
    loss: str = "cross_entropy",
    tie_tol: float = 1e-3,
    seed: int = 0,
) -> list[EdgeConsistency]:
    """The diagnostic of every mixed edge of every cell, in topology row order.

    ``alphas`` are the searched simplex points (one tensor per cell, rows on the simplex);
    ``x``/``y`` the split alpha was fitted on (our derivation, not the paper's: the
    identity is exact, under stationarity, on that split).
    """
    out = []
    for c, (topology, a) in enumerate(zip(supernet.topology, alphas, strict=True)):
        for row, (src, dst) in enumerate(topology.edges):
            g, f = probe_edge(supernet, alphas, c, row, x)
            report = consistency_report(
                g,
                a[row],
                topology.ops.names,
                targets=y,
                supernet_output=f,
                loss=loss,
                tie_tol=tie_tol,
                seed=seed,
            )
            out.append(EdgeConsistency(topology.name, row, src, dst, report))
    return out
