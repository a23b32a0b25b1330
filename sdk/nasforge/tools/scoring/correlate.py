"""How well does a training-free metric rank architectures? Spearman/Kendall vs an Evaluator.

Scores are direction-corrected before correlating (a lower-is-better metric is negated),
so a positive coefficient always means "the metric ranks architectures the way the
objective does" and metrics are comparable in one table. Flagged scores rank worst.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.registry import Registry, get_registry
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import ENUMERATE, SearchSpace
from nasforge.run.construction import build_component
from nasforge.tools.scoring.ranking import oriented
from nasforge.tools.scoring.stats import kendall, spearman
from nasforge.tools.scoring.sweep import MetricSpec, score_genotypes
from nasforge.tools.scoring.table import ScoreTable


@attrs.frozen
class MetricCorrelation:
    """One metric's rank agreement with the objective over the sample."""

    metric: str
    spearman: float
    kendall: float
    n: int
    n_flagged: int
    higher_is_better: bool
    log_scale: bool = False


@attrs.frozen
class CorrelationResult:
    """Per-metric coefficients plus the raw scores and targets they came from."""

    space: str
    objective: str
    seed: int
    per_metric: tuple[MetricCorrelation, ...] = attrs.field(converter=to_tuple)
    table: ScoreTable
    targets: tuple[float, ...] = attrs.field(converter=to_tuple)
    #: Genotypes dropped because the evaluator failed or gave a non-finite objective.
    dropped: int = 0
    #: The benchmark dataset the evaluator was asked for (None: its own default).
    dataset: str | None = None

    def get(self, metric: str) -> MetricCorrelation:
        for c in self.per_metric:
            if c.metric == metric:
                return c
        raise KeyError(metric)

    def to_json(self) -> dict[str, Any]:
        return {
            "space": self.space,
            "objective": self.objective,
            "seed": self.seed,
            "sample": len(self.targets),
            "dropped": self.dropped,
            "data": self.table.data,
            "metrics": [attrs.asdict(c) for c in self.per_metric],
        }


#: Largest space whose members a sample is drawn from by listing them all.
MAX_LISTED = 1_000_000


def sample_genotypes(space: SearchSpace, n: int, *, seed: int = 0) -> list[Genotype]:
    """``n`` distinct genotypes: a uniform sample of the enumeration where the space can
    list its members and is small enough to (reproducible whatever the sampler), else
    distinct draws of ``space.sample`` (the DARTS spaces: finite, ~1e18 and more, unlisted)."""
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    rng = random.Random(seed)
    if space.size is not None and ENUMERATE in space.capabilities and space.size <= MAX_LISTED:
        everything = list(space.enumerate())
        return rng.sample(everything, min(n, len(everything)))
    seen: dict[Genotype, None] = {}
    attempts = 0
    while len(seen) < n and attempts < 100 * n:
        seen.setdefault(space.sample(rng))
        attempts += 1
    return list(seen)


def judging_evaluator(
    space: SearchSpace, evaluator: Evaluator | str, dataset: str | None, registry: Registry | None
) -> Evaluator:
    """The evaluator a correlation judges ``space``'s genotypes by: ``evaluator`` itself, or
    the registered one of that name built for ``space`` on ``dataset`` (refused in one line
    when it cannot serve them)."""
    if isinstance(evaluator, Evaluator):
        return evaluator
    registry = registry if registry is not None else get_registry()
    cls = registry.get("evaluator", evaluator)
    context = RunContext(registry=registry)
    return build_component(
        "evaluator", cls, context, {}, space, dataset=dataset, plugin=registry.origin("evaluator", evaluator)
    )


def correlate_table(
    table: ScoreTable, targets: Sequence[float], *, objective_higher_is_better: bool = True
) -> list[MetricCorrelation]:
    """Coefficients for every metric of ``table`` against ``targets`` (row-aligned)."""
    t = np.asarray(targets, dtype=np.float64)
    if not objective_higher_is_better:
        t = -t
    out = []
    for metric in table.metrics:
        info = table.infos[metric]
        s = oriented(table.values(metric), info.higher_is_better)
        out.append(
            MetricCorrelation(
                metric=metric,
                spearman=spearman(s, t),
                kendall=kendall(s, t),
                n=len(t),
                n_flagged=len(table.flagged(metric)),
                higher_is_better=info.higher_is_better,
                log_scale=info.log_scale,
            )
        )
    return out


def correlate(
    space: SearchSpace,
    metrics: Sequence[MetricSpec],
    evaluator: Evaluator | str,
    *,
    sample: int = 1000,
    seed: int = 0,
    objective: str | None = None,
    dataset: str | None = None,
    genotypes: Sequence[Genotype] | None = None,
    registry: Registry | None = None,
    **score_options: Any,
) -> CorrelationResult:
    """Spearman and Kendall of each metric against ``evaluator``'s reported objective.

    By default the target is what the evaluator's protocol *reports* (on the NAS-Bench-201
    table the test accuracy, as the published proxy studies use): a correlation measures
    and selects nothing, so it is not bound to the observed validation number; ``objective``
    names another. Its direction comes from the evaluator's declared objectives.

    ``sample`` genotypes are drawn with ``seed`` (or ``genotypes`` given), scored by
    :func:`~nasforge.tools.scoring.sweep.score_genotypes` (``score_options`` go there: data,
    batch_size, device, build, cache, progress, ...) and evaluated. ``evaluator`` is an
    instance or a registered name constructed with ``dataset``; names (evaluator,
    metrics, data) resolve through ``registry``, the process-wide default if None.
    """
    ev = judging_evaluator(space, evaluator, dataset, registry)
    name = objective or ev.reported
    declared = ev.objectives.get(name)
    higher = declared.higher_is_better if declared is not None else True
    pool = list(genotypes) if genotypes is not None else sample_genotypes(space, sample, seed=seed)
    kept: list[Genotype] = []
    targets: list[float] = []
    for g in pool:
        result = ev.evaluate(g)
        value = result.objectives.get(name, math.nan)
        if result.failed or not math.isfinite(value):
            continue
        kept.append(g)
        targets.append(float(value))
    score_options.setdefault("seed", seed)
    table = score_genotypes(space, kept, metrics, registry=registry, **score_options)
    per_metric = correlate_table(table, targets, objective_higher_is_better=higher)
    return CorrelationResult(
        space.name, name, seed, per_metric, table, targets, len(pool) - len(kept), dataset=dataset
    )
