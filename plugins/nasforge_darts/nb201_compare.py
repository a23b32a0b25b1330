"""DARTS vs PR-DARTS on the NAS-Bench-201 supernet: skip share and table accuracy.

Both strategies search the NB201 supernet on data available offline (digits by default);
the derived cells are then looked up in the bundled benchmark table, so their CIFAR and
ImageNet16-120 accuracies are real (the benchmark's 200-epoch training), even though the
search itself only ever saw digits. That is a proxy task, and the report says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs

from nasforge.registry import get_registry

TABLE_DATASETS = ("cifar10", "cifar100", "imagenet16-120")


@attrs.frozen
class CompareRow:
    """One search: which strategy and seed, the derived cell and how it scores."""

    strategy: str
    seed: int
    genotype: str
    skip_share: float
    accuracy: dict[str, float]
    seconds: float
    #: Skip share of the cell derived at the end of every epoch (the skip trajectory).
    skip_share_by_epoch: tuple[float, ...] = attrs.field(default=(), converter=tuple)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def table_accuracy(space: Any, g: Any) -> dict[str, float]:
    """Benchmark test accuracies through the registered ``nb201-table`` evaluator."""
    evaluator_cls = get_registry().get("evaluator", "nb201-table")
    out = {}
    for d in TABLE_DATASETS:
        evaluator = evaluator_cls(space, dataset=d)
        out[d] = float(evaluator.evaluate(g).objectives[evaluator.objective.name])
    return out


def compare_on_nb201(
    *,
    seeds: Sequence[int] = (0, 1, 2),
    strategies: Sequence[tuple[str, dict[str, Any]]] = (
        ("darts", {}),
        ("prdarts", {"preset": "official-code"}),
    ),
    dataset: str = "digits",
    common: dict[str, Any] | None = None,
    progress: bool = False,
) -> list[CompareRow]:
    """Run every (strategy, seed) pair; ``common`` options apply to all of them."""
    reg = get_registry()
    space = reg.get("space", "nb201")()
    rows = []
    for name, options in strategies:
        for seed in seeds:
            data = reg.get("dataset", dataset).load(seed=seed)
            strat = reg.get("strategy", name)(seed=seed, progress=progress, **{**(common or {}), **options})
            out = strat.fit(space, data)
            metrics = out.best_result.metadata["metrics"] if out.best_result else {}
            trajectory = tuple(
                float(t.result.metadata["metrics"].get("cell_skip_share", float("nan")))
                for t in out.history
                if t.result is not None
            )
            label = name if "preset" not in options else f"{name}[{options['preset']}]"
            rows.append(
                CompareRow(
                    strategy=label,
                    seed=seed,
                    genotype=space.format(out.best),
                    skip_share=float(metrics.get("cell_skip_share", float("nan"))),
                    accuracy=table_accuracy(space, out.best),
                    seconds=sum(t.wall_seconds for t in out.history),
                    skip_share_by_epoch=trajectory,
                )
            )
    return rows


def summarise(rows: Sequence[CompareRow]) -> dict[str, dict[str, float]]:
    """Mean and standard deviation per strategy of the skip share and the accuracies."""
    out: dict[str, dict[str, float]] = {}
    for label in dict.fromkeys(r.strategy for r in rows):
        group = [r for r in rows if r.strategy == label]
        series = {"skip_share": [r.skip_share for r in group]}
        for d in TABLE_DATASETS:
            series[d] = [r.accuracy[d] for r in group]
        out[label] = {}
        for key, values in series.items():
            out[label][f"{key}_mean"] = statistics.fmean(values)
            out[label][f"{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return out
