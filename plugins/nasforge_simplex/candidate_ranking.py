"""Ranking architectures two ways: by alpha, and by their loss with the shared weights.

The paper's second use of its theorem is ranking: if alpha orders the candidates as the
shared weights do, a practitioner can drop those that break a constraint and take the
next by alpha, without evaluating each. With independent per-edge weights (a cell whose
rule keeps one op per edge) the natural score of an architecture is ``sum_e log
alpha_e[op_e]``, the log-probability of the product distribution, whose mode is the
per-edge arg max; this module takes the ``k`` best architectures by that score (exactly,
by a k-best merge over edges), evaluates each with the supernet's shared weights
(``one_hot_weights``) on the architecture split, and reports Kendall's tau between the two
orders. Cells with another rule (top-k inputs) have no such product form; there only the
derived architecture is scored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import torch

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.supernet import Supernet
from nasforge.kernel.supernet_topology import KeptEdge, OneOpPerEdge
from nasforge.tools.scoring import kendall
from nasforge_simplex.losses import LossFn, accuracy

#: Log of a zero weight (projection sets exact zeros): such architectures rank last.
LOG_ZERO = -1e30


@attrs.frozen
class RankedCandidate:
    """One architecture: its alpha score, and its loss and accuracy with the shared weights."""

    genotype: Genotype
    text: str
    log_alpha: float
    shared_loss: float
    shared_accuracy: float
    rank_by_alpha: int
    rank_by_shared: int = -1

    def to_json(self) -> dict[str, Any]:
        return {
            "genotype": self.text,
            "log_alpha": self.log_alpha,
            "shared_loss": self.shared_loss,
            "shared_accuracy": None if math.isnan(self.shared_accuracy) else self.shared_accuracy,
            "rank_by_alpha": self.rank_by_alpha,
            "rank_by_shared": self.rank_by_shared,
        }


@attrs.frozen
class Ranking:
    candidates: tuple[RankedCandidate, ...]
    kendall_tau: float
    #: Why fewer architectures than asked were ranked ("" when none).
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        tau = None if math.isnan(self.kendall_tau) else self.kendall_tau
        return {"candidates": [c.to_json() for c in self.candidates], "kendall_tau": tau, "note": self.note}


def k_best_rows(log_weights: Sequence[torch.Tensor], k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The ``k`` best choices of one column per row (score: the sum of the chosen entries),
    best first, ties to the lexicographically smaller choice. Exact: the k best of a sum
    over rows extend the k best of the earlier rows."""
    partial: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    for row in log_weights:
        values = row.tolist()
        merged = [(s + v, c + (j,)) for s, c in partial for j, v in enumerate(values)]
        merged.sort(key=lambda item: (-item[0], item[1]))
        partial = merged[:k]
    return partial


def rank_candidates(
    supernet: Supernet,
    alphas: Sequence[torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    k: int,
    loss_fn: LossFn,
    derived: Genotype,
    describe: Callable[[Genotype], str],
) -> Ranking:
    """The ``k`` best architectures by alpha, with their shared-weight loss on ``(x, y)``."""
    cells = supernet.topology
    note = ""
    if all(isinstance(c.rule, OneOpPerEdge) for c in cells):
        rows = [torch.log(a[r].double()).clamp_min(LOG_ZERO) for a in alphas for r in range(a.shape[0])]
        picks = k_best_rows(rows, k)
        genotypes = []
        for score, choice in picks:
            kept, start = [], 0
            for cell in cells:
                n_rows = cell.shape[0]
                kept.append(
                    tuple(
                        KeptEdge(cell.ops.names[choice[start + r]], src, dst)
                        for r, (src, dst) in enumerate(cell.edges)
                    )
                )
                start += n_rows
            genotypes.append((score, supernet.genotype_of(kept)))
    else:
        note = "cells keep top-k inputs: only the derived architecture is scored"
        genotypes = [(float("nan"), derived)]
    module: Any = supernet
    was_training = module.training
    module.eval()
    scored = []
    try:
        with torch.no_grad():
            for rank, (score, g) in enumerate(genotypes):
                weights = [w.detach() for w in supernet.one_hot_weights(g)]
                logits = torch.cat([supernet(x[i : i + 256], weights) for i in range(0, x.shape[0], 256)])  # type: ignore[operator]
                scored.append(
                    RankedCandidate(
                        g, describe(g), score, float(loss_fn(logits, y)), accuracy(logits, y), rank
                    )
                )
    finally:
        module.train(was_training)
    order = sorted(range(len(scored)), key=lambda i: (scored[i].shared_loss, i))
    ranked = list(scored)
    for position, i in enumerate(order):
        ranked[i] = attrs.evolve(scored[i], rank_by_shared=position)
    tau = (
        kendall([c.log_alpha for c in ranked], [-c.shared_loss for c in ranked])
        if len(ranked) > 1
        else float("nan")
    )
    return Ranking(tuple(ranked), tau, note)
