"""Validate the metrics against the NAS-Bench-201 table: ``python -m nasforge_zerocost.validation``.

Scores a fixed random sample of NAS-Bench-201 cells (networks C=16, N=5 from the core's
default space and its tabular evaluator, ``nasforge.run.defaults``, found through the
registry: the plugin never imports or names another plugin), correlates each metric with
the table's test accuracy, and prints the figures, each with a 95% interval, next to the
published ones. The published ensemble figure (0.817) is a pairwise vote agreement, not a
Spearman, so the same statistic is printed for the vote members and for each ensemble
column scored. Scores are cached, so an interrupted run resumes.

The registry is chosen once, at the entry point (:func:`main`), and passed down: every
name :func:`run` resolves (the space, the evaluator, the metrics, the data) is looked up in
the registry it is given.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nasforge.api import load_space
from nasforge.kernel.files import atomic_write_text
from nasforge.kernel.progress_log import ProgressLog
from nasforge.kernel.registry import Registry, get_registry
from nasforge.run import defaults
from nasforge.tools.scoring import CorrelationResult, correlate, oriented, spearman
from nasforge_zerocost.confidence import bootstrap_interval, spearman_interval
from nasforge_zerocost.ensemble import DEFAULT_MEMBERS, vote_agreement
from nasforge_zerocost.published import CAVEATS, PUBLISHED_SPEARMAN_C10, PUBLISHED_VOTE_C10

logger = logging.getLogger("nasforge.zerocost")

DATA_FREE = ("params", "flops", "synflow")
ALL = (
    "params",
    "flops",
    "synflow",
    "grad_norm",
    "snip",
    "grasp",
    "fisher",
    "fisher_channel",
    "jacob_cov",
    "naswot",
    "ntk_trace",
    "ntk_trace_per_sample",
    "ntk_cond",
    "ntk_cond_per_sample",
    "ntk_lambda_min",
    "knas",
    "nasi_proxy",
    "ensemble",
    "ensemble_vote",
)
#: Columns whose pairwise agreement is printed beside the published vote.
ENSEMBLES = ("ensemble", "ensemble_vote")


def run(
    metrics: Sequence[str] = DATA_FREE,
    *,
    sample: int = 1000,
    seed: int = 0,
    dataset: str = defaults.TABLE_DATASET,
    data: str = "gaussian",
    batch_size: int = 64,
    cache: str | None = None,
    verbose: bool = True,
    registry: Registry | None = None,
) -> CorrelationResult:
    """Correlation of ``metrics`` with the NAS-Bench-201 ``dataset`` test accuracy.

    Names resolve through ``registry``; without one (a Python caller), the core's API
    (``nasforge.api.load_space``, ``nasforge.tools.scoring.correlate``) takes its default.
    """
    space = load_space(defaults.SPACE, registry=registry)
    start = time.perf_counter()
    log = ProgressLog(logger, f"{dataset} validation", sample, unit="cell", silent=not verbose)

    def progress(i: int, n: int, _g: object) -> None:
        detail = f"{(time.perf_counter() - start) / i:.2f} s/cell"
        log.total = n
        log.update(i, detail)
        if i == n:
            log.finish(i, detail)

    return correlate(
        space,
        list(metrics),
        defaults.TABLE_EVALUATOR,
        dataset=dataset,
        sample=sample,
        seed=seed,
        objective="test_accuracy",
        data=data,
        batch_size=batch_size,
        build={"C": 16, "N": 5, "num_classes": 10},
        cache=cache,
        progress=progress,
        registry=registry,
    )


def _fmt_interval(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def markdown_table(result: CorrelationResult) -> str:
    """Measured Spearman (with its 95% Fisher-z interval) and Kendall beside the
    published Spearman values."""
    lines = [
        "| metric | Spearman (measured) [95% CI] | Kendall (measured) | flagged | published Spearman (C10) |",
        "|---|---|---|---|---|",
    ]
    for c in result.per_metric:
        pub = PUBLISHED_SPEARMAN_C10.get(c.metric, {})
        pub_text = ", ".join(f"{v:.3f} ({k})" for k, v in pub.items()) or "—"
        if c.metric in CAVEATS:
            pub_text += f"; {CAVEATS[c.metric]}"
        ci = _fmt_interval(*spearman_interval(c.spearman, c.n))
        lines.append(f"| {c.metric} | {c.spearman:.3f} {ci} | {c.kendall:.3f} | {c.n_flagged} | {pub_text} |")
    return "\n".join(lines)


def _oriented(result: CorrelationResult, metric: str) -> np.ndarray:
    return oriented(result.table.values(metric), result.table.infos[metric].higher_is_better)


def vote_lines(result: CorrelationResult, *, draws: int = 1000, seed: int = 0) -> list[str]:
    """The pairwise vote agreement (the published ensemble statistic) of the vote members'
    majority and of each ensemble column scored, with percentile-bootstrap intervals."""
    targets = np.asarray(result.targets, dtype=np.float64)
    n = targets.size
    if n < 2:
        return []
    published = ", ".join(f"{v:.3f} ({k})" for k, v in PUBLISHED_VOTE_C10.items())
    rows: list[tuple[str, list[np.ndarray]]] = []
    if all(m in result.table.metrics for m in DEFAULT_MEMBERS):
        members = [_oriented(result, m) for m in DEFAULT_MEMBERS]
        rows.append((f"majority of {', '.join(DEFAULT_MEMBERS)}", members))
    rows += [(f"{m} column", [_oriented(result, m)]) for m in ENSEMBLES if m in result.table.metrics]
    lines = []
    for label, cols in rows:
        ups = [True] * len(cols)  # already oriented

        def stat(idx: np.ndarray, cols: list[np.ndarray] = cols, ups: list[bool] = ups) -> float:
            return vote_agreement([c[idx] for c in cols], ups, targets[idx])

        value = vote_agreement(cols, ups, targets)
        ci = _fmt_interval(*bootstrap_interval(stat, n, draws=draws, seed=seed))
        lines.append(f"pairwise vote agreement, {label}: {value:.3f} {ci} (published vote: {published})")
    return lines


def difference_line(result: CorrelationResult, a: str, b: str, *, draws: int = 1000, seed: int = 0) -> str:
    """ρ(a) − ρ(b) on the same cells, with a paired percentile-bootstrap interval."""
    targets = np.asarray(result.targets, dtype=np.float64)
    sa, sb = _oriented(result, a), _oriented(result, b)

    def stat(idx: np.ndarray) -> float:
        return spearman(sa[idx], targets[idx]) - spearman(sb[idx], targets[idx])

    value = spearman(sa, targets) - spearman(sb, targets)
    ci = _fmt_interval(*bootstrap_interval(stat, targets.size, draws=draws, seed=seed))
    return f"Spearman {a} - {b}: {value:+.3f} {ci} (paired bootstrap, {draws} draws)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", default=",".join(DATA_FREE), help="comma list, or 'all'")
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataset", default=defaults.TABLE_DATASET)
    parser.add_argument("--data", default="gaussian")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cache", default=str(Path.home() / ".nasforge" / "score-cache"))
    parser.add_argument("--json", help="also write the result summary here")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ci-draws", type=int, default=1000, help="bootstrap draws of the vote intervals")
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="A,B",
        help="also print rho(A) - rho(B) with a paired bootstrap interval (repeatable)",
    )
    args = parser.parse_args(argv)
    pairs = [tuple(p.split(",")) for p in args.compare]
    if any(len(p) != 2 or not all(p) for p in pairs):
        parser.error("--compare takes two metric names separated by a comma, e.g. fisher,fisher_channel")
    if args.ci_draws < 2:
        parser.error("--ci-draws must be at least 2")
    if (
        not logging.getLogger().handlers
    ):  # a script: show its progress records, unless a caller set up logging
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    import torch

    torch.set_num_threads(args.threads)
    metrics = ALL if args.metrics == "all" else tuple(m for m in args.metrics.split(",") if m)
    metrics = tuple(dict.fromkeys((*metrics, *(m for pair in pairs for m in pair))))  # compared ones too
    registry = get_registry()  # the entry point: the one place the process-wide registry is chosen
    result = run(
        metrics,
        sample=args.sample,
        seed=args.seed,
        dataset=args.dataset,
        data=args.data,
        batch_size=args.batch_size,
        cache=args.cache,
        registry=registry,
    )
    n = len(result.targets)
    print(f"NAS-Bench-201 {args.dataset}, {n} cells (seed {args.seed}), data {result.table.data}")
    print(markdown_table(result))
    extra = vote_lines(result, draws=args.ci_draws, seed=args.seed)
    extra += [difference_line(result, a, b, draws=args.ci_draws, seed=args.seed) for a, b in pairs]
    for line in extra:
        print(line)
    if args.json:
        summary = result.to_json()
        for entry in summary["metrics"]:
            entry["spearman_ci95"] = list(spearman_interval(entry["spearman"], entry["n"]))
        summary["notes"] = extra
        atomic_write_text(args.json, json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
