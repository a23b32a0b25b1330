"""The ``--device cuda`` path, checked end to end whenever a GPU is lent (issue 15).

Not run on the CPU-only development machine: it refuses to start without CUDA. One short
script, sized for a few minutes of device time, each step guarded so one failure is
reported and the others still run:

1. every registered single-network metric on a few NAS-Bench-201 cells, on CUDA and on
   the CPU, through the shared-pass scorer: same scores (float32 kernels differ between
   the devices in rounding only; GraSP, a difference of large terms, gets a looser bound);
2. the shared main pass forced into chunks and through one simulated CUDA out-of-memory
   error: the retry halves the chunk, is recorded, and (eval-mode BN, samples
   independent) gives the unsplit scores;
3. a real out-of-memory split: a batch made large enough to exhaust the card's memory,
   scored anyway (skipped with ``--skip-real-oom``);
4. the six zero-cost proxies against the zero-cost-nas reference on CUDA (the CPU's
   ``metrics_speed.py --compare-reference``, same networks, same run);
5. each one-shot strategy for one short epoch with ``device="cuda"``.

    python benchmarks/gpu_metrics.py            # about 3-5 minutes on one H100
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import torch

from nasforge import MetricContext, get_registry
from nasforge.kernel.device import exact_float32
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.scoring import SharedPasses, SharedPassMetric, resolve_metrics, score_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
import metrics_speed  # noqa: E402 - the sibling benchmark, for its reference comparison

#: the one-shot strategies, each with options that keep it to about a minute
ONE_SHOT: dict[str, dict[str, int]] = {
    "darts": {"epochs": 1},
    "prdarts": {"epochs": 1},
    "simplex": {"epochs": 1},
    "nasi": {"steps": 10},
    "nesbs": {"supernet_epochs": 1, "posterior_epochs": 1},
}
RESULTS: list[tuple[str, str, float]] = []


def step(name: str, fn: Callable[[], str]) -> None:
    start = time.perf_counter()
    try:
        note = fn()
        status = f"ok   {note}"
    except Exception as exc:  # reported, never fatal: the other steps still run
        traceback.print_exc()
        status = f"FAIL {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    RESULTS.append((name, status, time.perf_counter() - start))
    print(f"[{time.perf_counter() - start:7.1f} s] {name}: {status}", flush=True)


def cells(n: int) -> list:
    space = get_registry().space("nb201")
    rng = random.Random(0)
    return [space.sample(rng) for _ in range(n)]


def net(g, device: str, *, train: bool = True) -> torch.nn.Module:
    space = get_registry().space("nb201")
    return seeded_build(lambda: space.build(g, C=16, N=5, num_classes=10), 0).to(device).train(train)


def batch(n: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, 3, 32, 32, generator=gen), torch.randint(0, 10, (n,), generator=gen)
    return x.to(device), y.to(device)


def every_metric(args: argparse.Namespace) -> str:
    registry = get_registry()
    names = [n for n in registry.names("metric") if not registry.get("metric", n).info.population]
    metrics = resolve_metrics(names)
    worst = 0.0
    slow: list[str] = []
    for g in cells(args.cells):
        got = {}
        for device in ("cuda", "cpu"):
            b = batch(args.batch, device)
            torch.cuda.synchronize()
            start = time.perf_counter()
            got[device] = score_model(net(g, device), b, metrics, ctx=MetricContext(device=device))
            torch.cuda.synchronize()
            print(f"    {device}: {time.perf_counter() - start:.2f} s for {len(metrics)} metrics", flush=True)
        for label, s in got["cuda"].items():
            c = got["cpu"][label]
            if not s.ok or not c.ok:
                if s.ok != c.ok:
                    raise AssertionError(f"{label}: cuda {s} vs cpu {c}")
                continue
            rel = abs(s.value - c.value) / max(abs(s.value), abs(c.value), 1e-30)
            worst = max(worst, rel if label != "grasp" else 0.0)
            if rel > (5e-2 if label == "grasp" else 5e-3):
                slow.append(f"{label} {s.value:.6g} vs {c.value:.6g}")
    if slow:
        raise AssertionError("cuda and cpu disagree: " + "; ".join(slow))
    return f"{len(metrics)} metrics x {args.cells} cells agree (largest relative difference {worst:.1e})"


def simulated_oom(args: argparse.Namespace) -> str:
    with exact_float32():  # as score_model: TF32 convolutions change with the chunk size
        return _simulated_oom(args)


def _simulated_oom(args: argparse.Namespace) -> str:
    metrics = [m for m in resolve_metrics(metrics_speed.REFERENCE_NAMES) if isinstance(m, SharedPassMetric)]
    needs = frozenset().union(*(m.requirements for m in metrics))
    g = cells(1)[0]
    b = batch(args.batch, "cuda")
    ctx = MetricContext(device="cuda")
    want = {
        m.name: m.score_shared(SharedPasses(net(g, "cuda", train=False), b, ctx, needs=needs))
        for m in metrics
    }
    original = SharedPasses._run_whole
    fired: list[int] = []

    def flaky(self: SharedPasses, *a: object) -> object:
        if not fired:
            fired.append(1)
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return original(self, *a)

    SharedPasses._run_whole = flaky  # type: ignore[method-assign]
    try:
        passes = SharedPasses(net(g, "cuda", train=False), b, ctx, needs=needs)
        got = {m.name: m.score_shared(passes) for m in metrics}
    finally:
        SharedPasses._run_whole = original  # type: ignore[method-assign]
    for k, v in want.items():
        tol = 1e-2 if k == "grasp" else 1e-4
        if not math.isclose(got[k], v, rel_tol=tol, abs_tol=1e-9):
            raise AssertionError(f"{k}: chunked {got[k]} vs whole {v}")
    return f"retries {passes.oom_retries}, chunk {passes.main_chunk}, scores equal"


def real_oom(args: argparse.Namespace) -> str:
    free, _ = torch.cuda.mem_get_info()
    # GraSP keeps about 12 activations' worth of the network per sample (forward, the
    # create_graph backward, the double backward): ~4 MB a sample at C=16 on 32x32
    n = int(min(4 * free / 4e6, 200_000))
    print(f"    {free / 2**30:.1f} GiB free: a batch of {n}", flush=True)
    # not jacob_cov: its score is an n x n correlation matrix (57 GB and an O(n^3) eigen-
    # decomposition at this n), a test of nothing the split does
    metrics = resolve_metrics(["grad_norm", "grasp"])
    needs = frozenset().union(*(m.requirements for m in metrics))
    g = cells(1)[0]
    passes = SharedPasses(net(g, "cuda"), batch(n, "cuda"), MetricContext(device="cuda"), needs=needs)
    values = []
    for m in metrics:
        start = time.perf_counter()
        values.append(m.score_shared(passes))
        print(f"    {m.name}: {time.perf_counter() - start:.1f} s, retries {passes.oom_retries}", flush=True)
    return f"batch {n}: retries {passes.oom_retries}, chunk {passes.main_chunk}, scores {values}"


def reference(args: argparse.Namespace) -> str:
    ns = argparse.Namespace(
        archs=args.cells,
        batch=64,
        metrics=None,
        seed=0,
        threads=torch.get_num_threads(),
        device="cuda",
        compare_reference=True,
        reference_path=args.reference_path,
    )
    metrics_speed.compare_reference(ns)
    return "printed above"


def one_shot(name: str, options: dict[str, int]) -> Callable[[], str]:
    def run() -> str:
        from nasforge import api  # noqa: PLC0415 - only when this step runs

        out = api.search(strategy=name, device="cuda", strategy_options=options)
        return f"best {out.best}"

    return run


STEPS = ("every", "simulated-oom", "real-oom", "reference", "one-shot")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help=f"comma-separated subset of {', '.join(STEPS)} (each in its own command keeps one "
        "slow step from eating a lease's minutes)",
    )
    parser.add_argument(
        "--reference-path",
        type=Path,
        default=metrics_speed.REFERENCE,
        help="the zero-cost-nas checkout (a device machine gets only the repo: copy it in)",
    )
    parser.add_argument("--skip-real-oom", action="store_true")
    parser.add_argument("--skip-one-shot", action="store_true")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    if steps - set(STEPS):
        raise SystemExit(f"--steps: unknown {sorted(steps - set(STEPS))}; known: {', '.join(STEPS)}")
    steps -= {"real-oom"} if args.skip_real_oom else set()
    steps -= {"one-shot"} if args.skip_one_shot else set()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device here: run this where a GPU is lent")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    if "every" in steps:
        step("every metric, cuda vs cpu", lambda: every_metric(args))
    if "simulated-oom" in steps:
        step("shared pass, simulated OOM", lambda: simulated_oom(args))
    if "real-oom" in steps:
        step("shared pass, real OOM split", lambda: real_oom(args))
    if "reference" in steps:
        step("six proxies vs zero-cost-nas on cuda", lambda: reference(args))
    if "one-shot" in steps:
        registry = get_registry()
        for name, options in ONE_SHOT.items():
            if name in registry.names("strategy"):
                step(f"one-shot {name} on cuda", one_shot(name, options))
    print("\nsummary:")
    for name, status, seconds in RESULTS:
        print(f"  {seconds:7.1f} s  {name}: {status}")
    if any(status.startswith("FAIL") for _, status, _ in RESULTS):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
