"""Rich tables of the diagnostic and the ranking: every candidate of every edge, scored.

One row per (edge, candidate): its weight alpha, its shared-weight loss, Lemma 5's D, its
rank both ways and what marks it (arg max, shared best, near-duplicate); then one line per
edge with its verdict, regime and reason, and the near-duplicate warnings. People read
these after a search; programs read the same numbers from ``outcome.produced_by``
(``diagnostic``, ``ranking``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from nasforge_simplex.candidate_ranking import Ranking
from nasforge_simplex.consistency import CONSISTENT, INCONSISTENT, ConsistencyReport
from nasforge_simplex.edge_probe import EdgeConsistency

_STYLE = {CONSISTENT: "green", INCONSISTENT: "bold red"}


def _number(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.4g}"


def _marks(report: ConsistencyReport, i: int) -> str:
    marks = []
    if i == report.argmax:
        marks.append("arg max")
    if i == report.shared_best:
        marks.append("shared best")
    near = [d.second if d.first == report.ops[i] else d.first for d in report.near_duplicates]
    near = [
        other
        for other, d in zip(near, report.near_duplicates, strict=True)
        if report.ops[i] in (d.first, d.second)
    ]
    if near:
        marks.append("~ " + ", ".join(near))
    return ", ".join(marks)


def consistency_table(
    edges: Sequence[EdgeConsistency], *, title: str = "arg max vs shared-weight best"
) -> Table:
    """Every candidate of every edge with its alpha, shared loss, D and ranks."""
    table = Table(title=title)
    for name in ("edge", "op", "alpha", "shared loss", "D_i", "rank alpha", "rank loss", "marks"):
        table.add_column(name, justify="left" if name in ("edge", "op", "marks") else "right")
    for edge in edges:
        r = edge.report
        by_alpha = {i: k for k, i in enumerate(r.rank_by_alpha)}
        by_loss = {i: k for k, i in enumerate(r.rank_by_shared)}
        for i, op in enumerate(r.ops):
            table.add_row(
                edge.label if i == 0 else "",
                op,
                f"{r.alpha[i]:.3f}",
                _number(r.losses[i]),
                _number(r.D[i]),
                str(by_alpha[i] + 1),
                str(by_loss[i] + 1),
                _marks(r, i),
                end_section=i == len(r.ops) - 1,
            )
    return table


def verdict_lines(edges: Sequence[EdgeConsistency]) -> list[str]:
    """One line per edge: verdict, regime, reason (rich markup)."""
    out = []
    for edge in edges:
        r = edge.report
        style = _STYLE.get(r.verdict, "yellow")
        out.append(f"{edge.label}: [{style}]{r.verdict}[/] ({r.regime}): {r.reason}")
    return out


def ranking_table(ranking: Ranking, *, title: str = "architectures by alpha, with shared weights") -> Table:
    table = Table(title=f"{title} (Kendall tau {_number(ranking.kendall_tau)})")
    for name in ("rank alpha", "architecture", "log alpha", "shared loss", "shared acc", "rank loss"):
        if name == "architecture":
            table.add_column(name, overflow="fold")
        else:
            table.add_column(name, justify="right")
    for c in ranking.candidates:
        table.add_row(
            str(c.rank_by_alpha + 1),
            c.text,
            _number(c.log_alpha),
            _number(c.shared_loss),
            _number(c.shared_accuracy),
            str(c.rank_by_shared + 1),
        )
    return table


def print_report(console: Console, edges: Sequence[EdgeConsistency], ranking: Ranking | None) -> None:
    """Both tables, the verdicts and the near-duplicate warnings, to ``console``."""
    if edges:
        console.print(consistency_table(edges))
        for line in verdict_lines(edges):
            console.print(line, highlight=False)
        for edge in edges:
            for d in edge.report.near_duplicates:
                console.print(
                    f"[yellow]warning:[/] {edge.label}: near-duplicates {d.first} ~ {d.second} "
                    f"(distance {d.ratio:.2g} of the typical pair) split their weight: arg max is unreliable",
                    highlight=False,
                )
    if ranking is not None and ranking.candidates:
        console.print(ranking_table(ranking))
        if ranking.note:
            console.print(f"[dim]{ranking.note}[/]", highlight=False)
