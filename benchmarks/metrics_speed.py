"""Seconds per NAS-Bench-201 architecture for each training-free metric, on one CPU thread.

Prints, for a fixed random sample of cells (C=16, N=5, 32x32 Gaussian batch):
  * each metric alone (its own copy of the network, its own passes: how the
    zero-cost-nas reference code works);
  * all metrics through the shared-pass scorer, and the speed-up over metric-by-metric;
  * the same for the heaviest cell (all nor_conv_3x3, 1.5 M parameters).

By default every registered metric that scores one network is timed (read from the
registry, so new metrics are never missing). Issue 3 targets, set for the 13 metrics of
then (``--metrics params,flops,grad_norm,snip,grasp,fisher,synflow,jacob_cov,naswot,
ntk_trace_per_sample,ntk_cond_per_sample,ntk_lambda_min,knas``): all of them for one
network at batch 16 under 3 s, the shared scorer at least 1.5x faster. TE-NAS's kernel
(``ntk_cond``, one backward per sample as TE-NAS computes it) alone takes about that
long. For scale: the six zero-cost-nas proxies at batch 64 against the reference's ~4.7 s
per cell. Timings on a shared machine are inflated by other load: the
load average is printed with the results.

    python benchmarks/metrics_speed.py                    # batch 16, all metrics
    python benchmarks/metrics_speed.py --batch 64 --metrics grad_norm,snip,grasp,fisher,jacob_cov,synflow
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import torch

from nasforge import MetricContext, get_registry
from nasforge.scoring import resolve_metrics, score_model
from nasforge.seeding import seeded_build

HEAVIEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"


def registered_metrics() -> str:
    """Every registered metric that scores one network (population metrics such as the rank
    ensembles only rank a sample): the default, so the list never goes stale."""
    registry = get_registry()
    names = [n for n in registry.names("metric") if not registry.get("metric", n).info.population]
    return ",".join(names)


def time_arch(model, batch, metrics, ctx) -> tuple[float, float, dict[str, float]]:
    """(shared seconds, separate seconds, per-metric separate seconds) for one network."""
    start = time.perf_counter()
    shared = score_model(model, batch, metrics, ctx=ctx, shared=True)
    t_shared = time.perf_counter() - start
    start = time.perf_counter()
    separate = score_model(model, batch, metrics, ctx=ctx, shared=False)
    t_separate = time.perf_counter() - start
    for label, s in shared.items():
        other = separate[label].value
        # float32 kernels computed jointly vs alone differ in rounding only
        same = s.value == other or abs(s.value - other) <= 1e-3 * max(abs(s.value), abs(other))
        if s.ok and not same:
            raise AssertionError(f"{label}: shared {s.value} != separate {other}")
    return t_shared, t_separate, {k: v.seconds for k, v in separate.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", type=int, default=10, help="random cells to time")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--metrics", default=None, help="comma-separated (default: every registered metric)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (same code path)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    space = get_registry().space("nb201")
    metrics = resolve_metrics((args.metrics or registered_metrics()).split(","))
    gen = torch.Generator().manual_seed(args.seed)
    batch = (
        torch.randn(args.batch, 3, 32, 32, generator=gen).to(args.device),
        torch.randint(0, 10, (args.batch,), generator=gen).to(args.device),
    )
    ctx = MetricContext(seed=args.seed, device=args.device)
    rng = random.Random(args.seed)
    cells = [space.sample(rng) for _ in range(args.archs)]

    def net(g):
        # Weights identical to torch.manual_seed(seed); build(), without touching the global generator.
        model = seeded_build(lambda: space.build(g, C=16, N=5, num_classes=10), args.seed)
        return model.to(args.device).train()

    # warm-up: torch.func traces and allocator pools are paid once per process
    score_model(net(cells[0]), batch, metrics, ctx=ctx, shared=True)

    rows = [time_arch(net(g), batch, metrics, ctx) for g in cells]
    heavy = time_arch(net(space.parse(HEAVIEST)), batch, metrics, ctx)

    print(
        f"torch {torch.__version__}, device {args.device}, {torch.get_num_threads()} thread(s), "
        f"load average {os.getloadavg()}"
    )
    print(f"{len(cells)} random NAS-Bench-201 cells (seed {args.seed}), C=16 N=5, batch {args.batch}, 32x32")
    print("\nmetric alone (own copy, own passes), seconds per architecture:")
    labels = list(rows[0][2])
    for label in labels:
        vals = [r[2][label] for r in rows]
        print(f"  {label:<22} {_stats(vals)}  heaviest {heavy[2][label]:6.3f}")
    shared = [r[0] for r in rows]
    separate = [r[1] for r in rows]
    print("\nall metrics together, seconds per architecture:")
    print(f"  metric-by-metric   {_stats(separate)}  heaviest {heavy[1]:6.3f}")
    print(f"  shared-pass scorer {_stats(shared)}  heaviest {heavy[0]:6.3f}")
    speedups = [b / a for a, b in zip(shared, separate, strict=True)]
    print(
        f"  speed-up (separate / shared): mean {statistics.mean(speedups):.2f}x, min {min(speedups):.2f}x, "
        f"total {sum(separate) / sum(shared):.2f}x, heaviest {heavy[1] / heavy[0]:.2f}x"
    )


def _stats(vals: list[float]) -> str:
    return f"mean {statistics.mean(vals):6.3f}  max {max(vals):6.3f}"


if __name__ == "__main__":
    main()
