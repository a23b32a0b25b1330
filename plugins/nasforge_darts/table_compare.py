"""DARTS vs PR-DARTS on a supernet whose cells a tabular benchmark rates: skip share and accuracy.

Both strategies search the supernet on data available offline (digits by default); the
derived cells are then looked up in the benchmark's table, so their accuracies are the
benchmark's own (NAS-Bench-201: 200 epochs on CIFAR and ImageNet16-120), even though the
search itself only ever saw digits. That is a proxy task, and the report says so.

The space, the table evaluator and the training data are names, defaulting to the
core's defaults (the NAS-Bench-201 space and table): this plugin meets the benchmark
only through the registry and the supernet contract, never by importing it. The registry
is the caller's (``nasforge darts-compare`` passes the invocation's), and the strategies
are handed it as a run hands it to them (:func:`nasforge.run.construction.build_component`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs
import torch

from nasforge.kernel.datasets import load_dataset
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet
from nasforge.run import defaults
from nasforge.run.construction import build_component
from nasforge_darts.supernet_view import SupernetView

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
    #: The final architecture parameters, one nested list per cell type.
    arch_parameters: tuple[Any, ...] = attrs.field(default=(), converter=tuple)
    #: For a strategy that may derive the zero op (DARTS on NB201): the same search's
    #: cell derived again with ``none`` excluded, as PR-DARTS derives (no extra search):
    #: ``{"genotype", "skip_share", "accuracy"}``; None where the zero op is already excluded.
    without_zero: dict[str, Any] | None = None

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
            strat = build_component(
                "strategy",
                reg.get("strategy", name),
                RunContext(seed=seed, registry=reg, progress=progress),
                {**(common or {}), **options},
                plugin=reg.origin("strategy", name),
            )
            out = strat.fit(space_obj, data)
            metrics = out.best_result.metadata["metrics"] if out.best_result else {}
            trajectory = tuple(
                float(t.result.metadata["metrics"].get("cell_skip_share", float("nan")))
                for t in out.history
                if t.result is not None
            )
            label = name if "preset" not in options else f"{name}[{options['preset']}]"
            alphas = out.produced_by.get("arch_parameters", [])
            without_zero = None
            if not strat.view_options().get("exclude_zero", False):
                g, share = derive_without_zero(strat, space_obj, data, alphas)
                without_zero = {
                    "genotype": space_obj.format(g),
                    "skip_share": share,
                    "accuracy": table_accuracy(
                        space_obj, g, evaluator=evaluator, datasets=table_datasets, registry=reg
                    ),
                }
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
                    arch_parameters=alphas,
                    without_zero=without_zero,
                )
            )
    return rows


def derive_without_zero(
    strategy: Any, space: SearchSpace, data: Any, alphas: Sequence[Any]
) -> tuple[Any, float]:
    """``strategy``'s cell from the searched ``alphas`` with the zero op excluded, and its skip
    share (mean over cell types): a fresh supernet of the same shape takes the alphas, and
    the strategy's own scores (DARTS: the softmax) are derived under PR-DARTS's rule."""
    module = seeded_build(lambda: strategy._build_supernet(space, strategy.active_config, data), 0)
    view = SupernetView(
        as_supernet(module, by="derive_without_zero"), **{**strategy.view_options(), "exclude_zero": True}
    )
    with torch.no_grad():
        for p, a in zip(view.arch_parameters(), alphas, strict=True):
            p.copy_(torch.as_tensor(a, dtype=p.dtype))
    g = view.derive(strategy.derive_scores(view))
    shares = [s.skip_share for s in view.stats(g).values()]
    return g, statistics.fmean(shares)


def _given_or_default(registry: Registry | None) -> Registry:
    """``registry``, or for a Python caller that passes none (``benchmarks/darts_skip_nb201.py``)
    the process-wide one: the only place this module chooses it, so a registry given is
    always the one used."""
    return registry if registry is not None else get_registry()


def without_zero_rows(rows: Sequence[CompareRow]) -> list[CompareRow]:
    """The control rows "<strategy> without none": each search whose derivation kept the zero
    op, its cell derived again without it (PR-DARTS's rule), from the same alphas."""
    return [
        CompareRow(
            strategy=f"{r.strategy} without none",
            seed=r.seed,
            genotype=r.without_zero["genotype"],
            skip_share=r.without_zero["skip_share"],
            accuracy=r.without_zero["accuracy"],
            seconds=0.0,
        )
        for r in rows
        if r.without_zero is not None
    ]


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
