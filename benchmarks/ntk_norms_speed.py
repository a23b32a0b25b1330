"""Seconds per NAS-Bench-201 cell of the trace-only NTK metrics: the materialised-Jacobian path
they took before against per-sample gradient norms, in the same run, on the same cells.

For each of ``--archs`` random cells (C=16, N=5, a 3x32x32 Gaussian batch of ``--batch``,
cells drawn as ``metrics_speed.py`` draws them), each metric is scored by its previous
definition (spelled out below with the backends' materialised kernels: ``jacobian`` in
chunks of 8 samples for the output NTK, the kernel formed then its trace or sum otherwise)
and by the registered metric as it scores now; the two sides alternate which goes first from
cell to cell, so a change of load hits both. Printed per metric: the median wall and CPU
seconds per cell (median of the cells), the speed-up, and the largest relative difference
of the scores. ``eigennas (3 metrics)`` is what the Eigen-NAS benchmark scores per cell
(``eigennas_trace``, ``eigennas_ntk_trace`` and ``knas`` together: before, the loss Gram
shared by the first and the last; now one forward for all three).

``nasi_proxy`` was one backward of the batch-mean loss already (the squared norm of the
summed gradient of the batch-statistics loss kernel, no Jacobian to avoid): its two columns
time the same code, a check of the noise.

    python benchmarks/ntk_norms_speed.py                    # 4 cells, batch 16, one thread
    python benchmarks/ntk_norms_speed.py --batch 50         # the Eigen-NAS benchmark's batch
    python benchmarks/ntk_norms_speed.py --device cuda      # the same code on a GPU
    python benchmarks/ntk_norms_speed.py --archs 1 --batch 4 --metrics eigennas_ntk_trace   # a quick look
    python benchmarks/ntk_norms_speed.py --batch 64 --metrics eigennas_ntk_trace --against previous

Timings on a shared machine are inflated by other load; the load average is printed, and
CPU seconds (one thread) are steadier than wall seconds there.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from collections.abc import Callable

import torch

from nasforge import MetricContext, get_registry
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.backends import (
    KernelSpec,
    empirical_ntk,
    jacobian,
    kernel_preset,
    layer_grads,
    sample_norms,
    spectrum,
)
from nasforge.tools.scoring import resolve_metrics, score_model

LOSS = KernelSpec(output="loss", bn="sample", params="all")
FULL = KernelSpec(output="full", bn="sample", params="all")
TRIO = "eigennas (3 metrics)"
DEFAULT = f"eigennas_ntk_trace,ntk_trace,nasi_proxy,eigennas_trace,ntk_trace_per_sample,knas,{TRIO}"

Batch = tuple[torch.Tensor, torch.Tensor]


def _output_trace(model: torch.nn.Module, x: torch.Tensor, device: str) -> float:
    """Before: Σ‖J‖² over chunks of 8 samples of the every-logit Jacobian, over N."""
    total = 0.0
    for a in range(0, x.shape[0], 8):
        total += float(
            jacobian(model, x[a : a + 8], spec=FULL, chunk_size=8, device=device).double().square().sum()
        )
    return total / x.shape[0]


def _kernel(model: torch.nn.Module, batch: Batch, spec: KernelSpec, device: str):  # noqa: ANN202 - a Spectrum
    x, y = batch
    return spectrum(empirical_ntk(model, x, y if spec.needs_labels else None, spec=spec, device=device))


def before(name: str, model: torch.nn.Module, batch: Batch, ctx: MetricContext) -> dict[str, float]:
    """The metric's previous definition (materialised kernels), by label."""
    dev = ctx.device
    if name == "eigennas_ntk_trace":
        return {name: _output_trace(model, batch[0], dev)}
    if name == "eigennas_trace":
        s = _kernel(model, batch, LOSS, dev)
        return {name: s.trace / s.size}
    if name in ("ntk_trace", "ntk_trace_per_sample"):
        s = _kernel(model, batch, kernel_preset("hnas-code" if name == "ntk_trace" else "per-sample"), dev)
        return {name: math.sqrt(s.trace / s.size)}
    if name == "knas":
        s = _kernel(model, batch, LOSS, dev)
        return {name: s.total_sum / s.size**2}
    if name == TRIO:
        s = _kernel(model, batch, LOSS, dev)  # one Gram for both loss-kernel scores
        return {
            "eigennas_trace": s.trace / s.size,
            "knas": s.total_sum / s.size**2,
            "eigennas_ntk_trace": _output_trace(model, batch[0], dev),
        }
    # unchanged metrics: the registered code is the previous code
    return {name: score_model(model, batch, resolve_metrics([name]), ctx=ctx)[name].value}


def previous(name: str, model: torch.nn.Module, batch: Batch, ctx: MetricContext) -> dict[str, float]:
    """The per-sample-norm code before conv weights on small maps took the Gram form and 2-d
    patches came from torch's im2col (``--against previous``)."""
    sample_norms.GRAM_FORM = layer_grads.IM2COL = False
    try:
        return after(name, model, batch, ctx)
    finally:
        sample_norms.GRAM_FORM = layer_grads.IM2COL = True


def after(name: str, model: torch.nn.Module, batch: Batch, ctx: MetricContext) -> dict[str, float]:
    names = ["eigennas_trace", "eigennas_ntk_trace", "knas"] if name == TRIO else [name]
    return {k: v.value for k, v in score_model(model, batch, resolve_metrics(names), ctx=ctx).items()}


def _timed(fn: Callable[[], dict[str, float]], device: str) -> tuple[dict[str, float], float, float]:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", type=int, default=4, help="random cells (the median is over them)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--metrics", default=DEFAULT, help=f"comma-separated (default: {DEFAULT})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (same code path)")
    parser.add_argument(
        "--against",
        choices=("materialised", "previous"),
        default="materialised",
        help="the 'before' side: the materialised kernels (default), or the per-sample-norm "
        "code before the Gram form and im2col patches",
    )
    args = parser.parse_args()
    reference = before if args.against == "materialised" else previous
    torch.set_num_threads(args.threads)

    space = get_registry().space("nb201")
    gen = torch.Generator().manual_seed(args.seed)
    batch = (
        torch.randn(args.batch, 3, 32, 32, generator=gen).to(args.device),
        torch.randint(0, 10, (args.batch,), generator=gen).to(args.device),
    )
    ctx = MetricContext(seed=args.seed, device=args.device)
    rng = random.Random(args.seed)
    cells = [space.sample(rng) for _ in range(args.archs)]

    def net(g):  # noqa: ANN001, ANN202 - as metrics_speed.py builds them
        return (
            seeded_build(lambda: space.build(g, C=16, N=5, num_classes=10), args.seed).to(args.device).train()
        )

    names = args.metrics.split(",")
    # warm-up: allocator pools and torch.func traces are paid once per process
    for name in names:
        reference(name, net(cells[0]), (batch[0][:2], batch[1][:2]), ctx)
        after(name, net(cells[0]), (batch[0][:2], batch[1][:2]), ctx)

    print(
        f"torch {torch.__version__}, device {args.device}, {torch.get_num_threads()} thread(s), "
        f"load average {os.getloadavg()}"
    )
    print(f"{len(cells)} random NAS-Bench-201 cells (seed {args.seed}), C=16 N=5, batch {args.batch}, 32x32")
    print(f"before: {'the materialised kernels' if reference is before else 'the previous per-sample norms'}")
    print(
        f"\n{'metric':<24} {'before s/cell (cpu)':>20} {'now s/cell (cpu)':>18} {'speed-up':>9}"
        "  largest rel. diff"
    )
    for name in names:
        rows = []
        for i, g in enumerate(cells):
            sides = [("before", reference), ("after", after)]
            if i % 2:
                sides.reverse()
            got = {
                side: _timed(lambda f=f, g=g, m=name: f(m, net(g), batch, ctx), args.device)
                for side, f in sides
            }
            rows.append(got)
        old_wall = statistics.median(r["before"][1] for r in rows)
        new_wall = statistics.median(r["after"][1] for r in rows)
        old_cpu = statistics.median(r["before"][2] for r in rows)
        new_cpu = statistics.median(r["after"][2] for r in rows)
        diff = max(
            abs(r["after"][0][k] - v) / max(abs(v), 1e-300)
            for r in rows
            for k, v in r["before"][0].items()
            if math.isfinite(v)
        )
        print(
            f"{name:<24} {old_wall:8.2f} ({old_cpu:6.2f})    {new_wall:7.2f} ({new_cpu:6.2f})  "
            f"{old_wall / new_wall:7.2f}x  {diff:.1e}",
            flush=True,
        )
        if name in ("eigennas_ntk_trace", TRIO):
            per_cell = ", ".join(f"{r['after'][1]:.2f}" for r in rows)
            print(
                f"{'':<24} now, per cell: {per_cell} s; "
                f"whole space (15,625 cells) ~{15625 * new_wall / 3600:.1f} h"
            )
    print(f"\nload average {os.getloadavg()}")


if __name__ == "__main__":
    main()
