"""Validate the metrics against the NAS-Bench-201 table: ``python -m nasforge_zerocost.validation``.

Scores a fixed random sample of NAS-Bench-201 cells (networks C=16, N=5 from the core's
default space and its tabular evaluator, ``nasforge.defaults``, found through the
registry: the plugin never imports or names another plugin), correlates each metric with
the table's test accuracy, and prints the figures next to the published ones. Scores are
cached, so an interrupted run resumes.

The registry is chosen once, at the entry point (:func:`main`), and passed down: every
name :func:`run` resolves (the space, the evaluator, the metrics, the data) is looked up in
the registry it is given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nasforge import defaults
from nasforge.api import load_space
from nasforge.atomic_files import atomic_write_text
from nasforge.registry import Registry, get_registry
from nasforge.scoring import CorrelationResult, correlate
from nasforge_zerocost.published import CAVEATS, PUBLISHED_SPEARMAN_C10

DATA_FREE = ("params", "flops", "synflow")
ALL = (
    "params",
    "flops",
    "synflow",
    "grad_norm",
    "snip",
    "grasp",
    "fisher",
    "jacob_cov",
    "naswot",
    "ntk_trace",
    "ntk_cond",
    "ntk_lambda_min",
    "knas",
    "ensemble",
)


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
    (``nasforge.api.load_space``, ``nasforge.scoring.correlate``) takes its default.
    """
    space = load_space(defaults.SPACE, registry=registry)
    start = time.perf_counter()

    def progress(i: int, n: int, _g: object) -> None:
        if verbose and (i % 50 == 0 or i == n):
            rate = (time.perf_counter() - start) / i
            print(f"  {i}/{n} scored, {rate:.2f} s/cell", file=sys.stderr, flush=True)

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


def markdown_table(result: CorrelationResult) -> str:
    """Measured Spearman/Kendall beside the published Spearman values."""
    lines = [
        "| metric | Spearman (measured) | Kendall (measured) | flagged | published Spearman (C10) |",
        "|---|---|---|---|---|",
    ]
    for c in result.per_metric:
        pub = PUBLISHED_SPEARMAN_C10.get(c.metric, {})
        pub_text = ", ".join(f"{v:.3f} ({k})" for k, v in pub.items()) or "—"
        if c.metric in CAVEATS:
            pub_text += f"; {CAVEATS[c.metric]}"
        lines.append(f"| {c.metric} | {c.spearman:.3f} | {c.kendall:.3f} | {c.n_flagged} | {pub_text} |")
    return "\n".join(lines)


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
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    metrics = ALL if args.metrics == "all" else tuple(m for m in args.metrics.split(",") if m)
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
    if args.json:
        atomic_write_text(args.json, json.dumps(result.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
