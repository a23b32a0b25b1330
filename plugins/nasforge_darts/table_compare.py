"""DARTS vs PR-DARTS on a supernet whose cells a tabular benchmark rates: skip share and accuracy.

Both strategies search the supernet on data available offline (digits by default); the
derived cells are then looked up in the benchmark's table, so their accuracies are the
benchmark's own (NAS-Bench-201: 200 epochs on CIFAR and ImageNet16-120), even though the
search itself only ever saw digits. That is a proxy task, and the report says so.

The space, the table evaluator and the training data are names, defaulting to the
core's defaults (the NAS-Bench-201 space and table): this plugin meets the benchmark
only through the registry and the supernet contract, never by importing it. The registry
is the caller's (``nasforge darts-compare`` passes the invocation's), and the strategies
are handed it as a run hands it to them (:func:`nasforge.spec.construct`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs

from nasforge import defaults
from nasforge.datasets import load_dataset
from nasforge.registry import Registry, get_registry
from nasforge.search_space import SearchSpace
from nasforge.spec import construct

#: Datasets of the default table (NAS-Bench-201's three), each looked up per derived cell.
TABLE_DATASETS = ("cifar10", "cifar100", "imagenet16-120")
#: What a table reports for a chosen cell: its test accuracy (the benchmark protocol).
REPORTED = "test_accuracy"
#: DARTS (first order) and PR-DARTS with the preset whose regularisers act all run long.
STRATEGIES: tuple[tuple[str, dict[str, Any]], ...] = (("darts", {}), ("prdarts", {"preset": "official-code"}))


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


def table_accuracy(
    space: SearchSpace,
    g: Any,
    *,
    evaluator: str = defaults.TABLE_EVALUATOR,
    datasets: Sequence[str] = TABLE_DATASETS,
    registry: Registry | None = None,
) -> dict[str, float]:
    """The table's reported accuracy of ``g`` on each dataset, through the evaluator that
    ``registry`` (see :func:`_given_or_default`) registers as ``evaluator``."""
    evaluator_cls = _given_or_default(registry).get("evaluator", evaluator)
    return {d: float(evaluator_cls(space, dataset=d).evaluate(g).objectives[REPORTED]) for d in datasets}


def compare_on_table(
    *,
    seeds: Sequence[int] = (0, 1, 2),
    strategies: Sequence[tuple[str, dict[str, Any]]] = STRATEGIES,
    space: str = defaults.SPACE,
    evaluator: str = defaults.TABLE_EVALUATOR,
    table_datasets: Sequence[str] = TABLE_DATASETS,
    dataset: str = defaults.TRAINING_DATASET,
    common: dict[str, Any] | None = None,
    progress: bool = False,
    registry: Registry | None = None,
) -> list[CompareRow]:
    """Run every (strategy, seed) pair on ``space``'s supernet with ``dataset``'s data and rate
    each derived cell with ``evaluator`` on ``table_datasets``; ``common`` options apply to
    every strategy, a strategy's own options override them. Every name resolves through
    ``registry`` (see :func:`_given_or_default`), which a strategy that declares one is
    also given."""
    reg = _given_or_default(registry)
    space_obj = reg.get("space", space)()
    rows = []
    for name, options in strategies:
        for seed in seeds:
            data = load_dataset(dataset, registry=reg, seed=seed)
            strat = construct(
                "strategy",
                reg.get("strategy", name),
                {**(common or {}), **options},
                offered={"registry": reg},
                seed=seed,
                progress=progress,
            )
            out = strat.fit(space_obj, data)
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
                    genotype=space_obj.format(out.best),
                    skip_share=float(metrics.get("cell_skip_share", float("nan"))),
                    accuracy=table_accuracy(
                        space_obj, out.best, evaluator=evaluator, datasets=table_datasets, registry=reg
                    ),
                    seconds=sum(t.wall_seconds for t in out.history),
                    skip_share_by_epoch=trajectory,
                )
            )
    return rows


def _given_or_default(registry: Registry | None) -> Registry:
    """``registry``, or for a Python caller that passes none (``benchmarks/darts_skip_nb201.py``)
    the process-wide one: the only place this module chooses it, so a registry given is
    always the one used."""
    return registry if registry is not None else get_registry()


def summarise(rows: Sequence[CompareRow]) -> dict[str, dict[str, float]]:
    """Mean and standard deviation per strategy of the skip share and of each accuracy."""
    datasets = list(dict.fromkeys(d for r in rows for d in r.accuracy))
    out: dict[str, dict[str, float]] = {}
    for label in dict.fromkeys(r.strategy for r in rows):
        group = [r for r in rows if r.strategy == label]
        series = {"skip_share": [r.skip_share for r in group]}
        for d in datasets:
            series[d] = [r.accuracy[d] for r in group]
        out[label] = {}
        for key, values in series.items():
            out[label][f"{key}_mean"] = statistics.fmean(values)
            out[label][f"{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return out
