"""Which ops run on each edge in a PR-DARTS step, and with what forward weight.

Three readings of PR-DARTS's text and its code, which disagree (the text's "randomly
select only two operations on each edge" against the code's top-2 by gate):

* ``all`` -- eq. 7 literally: every op weighted by its gate.
* ``uniform2`` -- the paper's text ("randomly select only two operations on each edge"):
  ``k`` non-zero ops drawn uniformly per edge, each weighted by its gate.
* ``topk_st`` -- the official code: drop each op with probability ``op_dropout``, break
  ties randomly, keep the ``k`` largest gates, forward weight exactly 1 with a
  straight-through gradient into the gate.

Ops whose forward weight is exactly zero are never computed by the supernets.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

MODES = ("all", "uniform2", "topk_st")


def select_edges(
    gates: torch.Tensor,
    *,
    mode: str,
    k: int = 2,
    op_dropout: float = 0.4,
    exclude: Sequence[int] = (),
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(forward weights, 0/1 selection mask), both shaped like ``gates`` (edges x ops).

    ``exclude`` lists op columns ``uniform2`` never draws (the zero op: drawing it would
    waste one of the two slots on an op that computes nothing).
    """
    if mode not in MODES:
        raise ValueError(f"edge selection mode must be one of {MODES}, got {mode!r}")
    n_edges, n_ops = gates.shape
    if mode == "all":
        return gates, torch.ones_like(gates)
    noise = torch.rand((n_edges, n_ops), generator=generator, dtype=gates.dtype).to(gates.device)
    if mode == "uniform2":
        if exclude:
            noise[:, list(exclude)] = -1.0
        top = noise.topk(min(k, n_ops - len(exclude)), dim=-1).indices
        mask = torch.zeros_like(gates).scatter_(1, top, 1.0)
        return gates * mask, mask
    dropped = torch.rand((n_edges, n_ops), generator=generator, dtype=gates.dtype) < op_dropout
    score = gates.detach() - dropped.to(gates.device, gates.dtype) + 1e-6 * noise  # ties: random
    top = score.topk(min(k, n_ops), dim=-1).indices
    mask = torch.zeros_like(gates).scatter_(1, top, 1.0)
    return mask - gates.detach() + gates, mask
