"""Seconds per NAS-Bench-201 architecture for each training-free metric, on one CPU thread.

Prints, for a fixed random sample of cells (C=16, N=5, 32x32 Gaussian batch):
  * each metric alone (its own copy of the network, its own passes: how the
    zero-cost-nas reference code works);
  * all metrics through the shared-pass scorer, and the speed-up over metric-by-metric;
  * the same for the heaviest cell (all nor_conv_3x3, 1.5 M parameters).

By default every registered metric that scores one network is timed (read from the
registry, so new metrics are never missing). The targets, set for the 13 metrics there
were then (``--metrics params,flops,grad_norm,snip,grasp,fisher,synflow,jacob_cov,naswot,
ntk_trace_per_sample,ntk_cond_per_sample,ntk_lambda_min,knas``): all of them for one
network at batch 16 under 3 s, the shared scorer at least 1.5x faster. TE-NAS's kernel
(``ntk_cond``, one backward per sample as TE-NAS computes it) alone takes about that
long. For scale: the six zero-cost-nas proxies at batch 64 against the reference's ~4.7 s
per cell. Timings on a shared machine are inflated by other load: the
load average is printed with the results.

    python benchmarks/metrics_speed.py                    # batch 16, all metrics
    python benchmarks/metrics_speed.py --batch 64 --metrics grad_norm,snip,grasp,fisher,jacob_cov,synflow

With ``--compare-reference`` the same cells are also scored by the zero-cost-nas
reference code itself (Abdelfattah et al., ICLR 2021; a local checkout given by
``--reference-path``, imported here only, never by the package), metric by metric as its
``find_measures`` does (a copy of the network per metric, its own passes), in the same
process, alternating which side goes first. It prints the reference's seconds per metric,
our shared pass's seconds per phase (where the time goes), the ratio in wall and in CPU
seconds (CPU seconds are steadier on a busy machine), and how closely the scores agree
(Spearman over the cells, largest relative difference):

    python benchmarks/metrics_speed.py --batch 64 --archs 20 \\
        --metrics grad_norm,snip,grasp,fisher,jacob_cov,synflow --compare-reference

The target is 4x. Measured (20 cells, batch 64, one thread, a 2-core machine at load
4-5): 3.05x in wall seconds, 2.75x in CPU seconds, scores equal to the reference's
(Spearman 1.0000 each, largest relative difference 2.4e-7); on an idle machine (load 1.0)
2.70x in both (reference 6.90 s a cell, ours 2.56 s). GraSP's double backward,
the same Hessian-vector product the reference computes, is 58% of our time; with every
other phase free the ratio could not pass ~5.3x, so 4x on a CPU needs the forward, input
gradient and first backward (together 40% of ours) about twice as fast, or a cheaper
Hessian-vector product than autograd's double backward (BatchNorm's is the costliest node).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
import types
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from nasforge import MetricContext, get_registry
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.scoring import (
    SharedPasses,
    SharedPassMetric,
    metric_label,
    resolve_metrics,
    score_model,
    spearman,
)

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "peers" / "zero-cost-nas"
#: the zero-cost-nas names of our metrics (the six proxies of its table)
REFERENCE_NAMES = ("grad_norm", "snip", "grasp", "fisher", "jacob_cov", "synflow")

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


def setting(args: argparse.Namespace) -> tuple[tuple[torch.Tensor, torch.Tensor], MetricContext, list, Any]:
    """What every measurement shares: the batch (Gaussian images, random labels), the
    metric context, the cells (by ``args.seed``) and how to build one (C=16, N=5, weights
    identical to ``torch.manual_seed(seed); build()`` without touching the global generator)."""
    space = get_registry().space("nb201")
    gen = torch.Generator().manual_seed(args.seed)
    batch = (
        torch.randn(args.batch, 3, 32, 32, generator=gen).to(args.device),
        torch.randint(0, 10, (args.batch,), generator=gen).to(args.device),
    )
    ctx = MetricContext(seed=args.seed, device=args.device)
    rng = random.Random(args.seed)
    cells = [space.sample(rng) for _ in range(args.archs)]

    def net(g):
        model = seeded_build(lambda: space.build(g, C=16, N=5, num_classes=10), args.seed)
        return model.to(args.device).train()

    return batch, ctx, cells, net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", type=int, default=10, help="random cells to time")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--metrics", default=None, help="comma-separated (default: every registered metric)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (same code path)")
    parser.add_argument(
        "--compare-reference",
        action="store_true",
        help="also time the zero-cost-nas reference code on the same networks",
    )
    parser.add_argument("--reference-path", type=Path, default=REFERENCE)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.compare_reference:
        compare_reference(args)
        return

    metrics = resolve_metrics((args.metrics or registered_metrics()).split(","))
    batch, ctx, cells, net = setting(args)

    # warm-up: torch.func traces and allocator pools are paid once per process
    score_model(net(cells[0]), batch, metrics, ctx=ctx, shared=True)

    rows = [time_arch(net(g), batch, metrics, ctx) for g in cells]
    heavy = time_arch(net(get_registry().space("nb201").parse(HEAVIEST)), batch, metrics, ctx)

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


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def ours(model, batch, metrics, ctx) -> tuple[dict[str, float], float, float, dict[str, float]]:
    """score_model's shared mode, spelled out so the pass's phase timings can be read:
    (scores, wall seconds, CPU seconds, seconds per phase)."""
    _sync(ctx.device)
    wall, cpu = time.perf_counter(), time.process_time()
    needs = frozenset().union(*(m.requirements for m in metrics if isinstance(m, SharedPassMetric)))
    passes = SharedPasses(model, batch, ctx, needs=needs)
    values, per_metric = {}, {}
    for m in metrics:
        start = time.perf_counter()
        values[metric_label(m)] = m.score_shared(passes)
        per_metric[metric_label(m)] = time.perf_counter() - start
    _sync(ctx.device)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    phases = {k: v for k, v in passes.phase_seconds.items() if k != "main"}
    # what is not the main pass: synflow's own pass and the metrics' reductions
    phases["other metrics (synflow pass, reductions)"] = wall - passes.phase_seconds.get("main", 0.0)
    return values, wall, cpu, phases


def reference(measures, copynet, model, batch, names, device) -> tuple[dict[str, float], float, float, dict]:
    """The zero-cost-nas code as ``find_measures`` runs it: per metric, a copy of the
    network and its own passes, then the per-layer arrays summed. The input is cloned per
    network: its jacob_cov accumulates into ``inputs.grad``, harmless only because
    ``find_measures`` draws a fresh batch per call."""
    model.get_prunable_copy = types.MethodType(copynet, model)
    x, y = batch[0].clone(), batch[1]
    values, per_metric = {}, {}
    _sync(device)
    wall, cpu = time.perf_counter(), time.process_time()
    for name in names:
        start = time.perf_counter()
        arr = measures.calc_measure(name, model, device, x, y, loss_fn=F.cross_entropy, split_data=1)
        values[name] = float(arr) if name == "jacob_cov" else float(sum(a.detach().sum() for a in arr))
        _sync(device)
        per_metric[name] = time.perf_counter() - start
    return values, time.perf_counter() - wall, time.process_time() - cpu, per_metric


def compare_reference(args: argparse.Namespace) -> None:
    """Our shared pass against the reference's per-metric cost, same run, same nets."""
    names = (args.metrics or ",".join(REFERENCE_NAMES)).split(",")
    unknown = set(names) - set(REFERENCE_NAMES)
    if unknown:
        raise SystemExit(f"--compare-reference knows {','.join(REFERENCE_NAMES)}; not {sorted(unknown)}")
    sys.path.insert(0, str(args.reference_path.resolve()))
    from foresight.pruners import measures  # noqa: PLC0415 - the peer code, benchmark only
    from foresight.pruners.predictive import copynet  # noqa: PLC0415

    warnings.filterwarnings("ignore", module="torch")  # the reference's deprecated backward hooks
    warnings.filterwarnings("ignore", message=".*non-full backward hook.*")

    metrics = resolve_metrics(names)
    batch, ctx, cells, net = setting(args)

    ours(net(cells[0]), batch, metrics, ctx)  # warm-up, both sides
    reference(measures, copynet, net(cells[0]), batch, names, args.device)
    rows = []
    for i, g in enumerate(cells):
        run_ours = lambda g=g: ours(net(g), batch, metrics, ctx)  # noqa: E731
        run_ref = lambda g=g: reference(measures, copynet, net(g), batch, names, args.device)  # noqa: E731
        if i % 2:  # alternate the order, so a load change hits both sides alike
            r, o = run_ref(), run_ours()
        else:
            o, r = run_ours(), run_ref()
        rows.append((o, r))
        print(
            f"  cell {i + 1:>2}/{len(cells)}: ours {o[1]:6.2f} s, "
            f"reference {r[1]:6.2f} s, {r[1] / o[1]:4.2f}x",
            flush=True,
        )

    print(
        f"\ntorch {torch.__version__}, device {args.device}, {torch.get_num_threads()} thread(s), "
        f"load average {os.getloadavg()}"
    )
    print(
        f"{len(cells)} random NAS-Bench-201 cells (seed {args.seed}), C=16 N=5, "
        f"batch {args.batch} Gaussian 32x32"
    )
    print("\nreference (zero-cost-nas find_measures, metric by metric), seconds per cell:")
    for name in names:
        print(f"  {name:<12} {_stats([r[3][name] for _, r in rows])}")
    ref_wall = [r[1] for _, r in rows]
    our_wall = [o[1] for o, _ in rows]
    print(f"  {'all':<12} {_stats(ref_wall)}")
    print("\nours (one shared pass), seconds per cell, by phase:")
    phases = list(rows[0][0][3])
    for ph in phases:
        vals = [o[3].get(ph, 0.0) for o, _ in rows]
        share = 100 * sum(vals) / sum(our_wall)
        print(f"  {ph:<44} {_stats(vals)}  {share:4.1f}%")
    print(f"  {'all':<44} {_stats(our_wall)}")
    ratios = [r / o for o, r in zip(our_wall, ref_wall, strict=True)]
    cpu = sum(r[2] for _, r in rows) / sum(o[2] for o, _ in rows)
    print(
        f"\nratio reference / ours: total wall {sum(ref_wall) / sum(our_wall):.2f}x "
        f"(per cell median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x), total CPU {cpu:.2f}x"
    )
    hessian = sum(o[3].get("hessian", 0.0) for o, _ in rows)
    if hessian:
        print(
            f"GraSP's double backward (the same Hessian-vector product in both codes) alone is "
            f"{100 * hessian / sum(our_wall):.0f}% of ours: with everything else free the ratio "
            f"could not pass {sum(ref_wall) / hessian:.2f}x"
        )
    print("\nagreement with the reference over the cells (same networks, same batch):")
    for name in names:
        a = [o[0][name] for o, _ in rows]
        b = [r[0][name] for _, r in rows]
        ok = [(u, v) for u, v in zip(a, b, strict=True) if math.isfinite(u) and math.isfinite(v)]
        rel = max((abs(u - v) / max(abs(u), abs(v), 1e-300) for u, v in ok), default=math.nan)
        rho = spearman([u for u, _ in ok], [v for _, v in ok]) if len(ok) > 2 else math.nan
        print(
            f"  {name:<12} Spearman {rho:.4f}  largest relative difference {rel:.2e} ({len(ok)} finite pairs)"
        )


def _stats(vals: list[float]) -> str:
    return f"mean {statistics.mean(vals):6.3f}  max {max(vals):6.3f}"


if __name__ == "__main__":
    main()
