"""The ONNX latency objective on a few NB201 cells: median and spread, and what the cache saves.

Each cell is exported as ``nasforge export`` writes it and timed with onnxruntime on this
machine (one thread, batch 1, warm-up, median of repeats: :mod:`nasforge.tools.export.latency`),
first into an empty cache (export + timing), then again from the cache. Prints, per cell,
the median and inter-quartile range in milliseconds and the seconds of the measured and
the cached call, then the cache's speed-up, and checks the order a user relies on: the
all-convolution cell is slower than the all-skip one.

    python benchmarks/onnx_latency.py                      # digits input (1x8x8), C=16, N=2
    python benchmarks/onnx_latency.py --shape 3,32,32 --C 16 --N 5 --repeats 100

Run on a quiet machine for figures to quote; exits 1 if the order is wrong.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import torch

from nasforge.api import load_space
from nasforge.tools.latency_objective import LatencySettings, OnnxLatency


def uniform_cell(op: str) -> str:
    """The NB201 cell with ``op`` on all six edges."""
    return f"|{op}~0|+|{op}~0|{op}~1|+|{op}~0|{op}~1|{op}~2|"


#: From the cheapest cell to the most expensive one.
CELLS = {
    "all none": uniform_cell("none"),
    "all skip": uniform_cell("skip_connect"),
    "all avg-pool": uniform_cell("avg_pool_3x3"),
    "all conv1x1": uniform_cell("nor_conv_1x1"),
    "all conv3x3": uniform_cell("nor_conv_3x3"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="1,8,8", help="one input, without the batch (default: digits)")
    parser.add_argument("--C", type=int, default=16)
    parser.add_argument("--N", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sample = tuple(int(d) for d in args.shape.replace("x", ",").split(","))
    space = load_space("nb201")
    build = {"C": args.C, "N": args.N, "num_classes": 10, "in_channels": sample[0]}
    settings = LatencySettings(warmup=args.warmup, repeats=args.repeats, threads=args.threads)
    print(
        f"NB201 C={args.C} N={args.N}, input (1, {', '.join(map(str, sample))}), {args.threads} thread(s), "
        f"{args.warmup} warm-up + {args.repeats} timed runs"
    )
    print(f"{'cell':<14}{'median ms':>11}{'IQR ms':>9}{'measured s':>12}{'cached s':>10}")
    medians: dict[str, float] = {}
    measured_total = cached_total = 0.0
    with tempfile.TemporaryDirectory() as cache:
        for label, text in CELLS.items():
            g = space.parse(text)
            t0 = time.perf_counter()
            first = OnnxLatency(
                space, sample_shape=sample, build_options=build, settings=settings, cache=cache
            )
            m = first.measure(g)
            t1 = time.perf_counter()
            # A fresh helper on the same directory: a new run reading the cache from disk.
            again = OnnxLatency(
                space, sample_shape=sample, build_options=build, settings=settings, cache=cache
            )
            hit = again.measure(g)
            t2 = time.perf_counter()
            assert hit.cached and hit == m
            measured_total += t1 - t0
            cached_total += t2 - t1
            medians[label] = m.median_ms
            print(f"{label:<14}{m.median_ms:>11.4f}{m.iqr_ms:>9.4f}{t1 - t0:>12.3f}{t2 - t1:>10.4f}")
    print(
        f"cache: {measured_total:.2f} s measuring {len(CELLS)} cells, {cached_total:.4f} s from the cache "
        f"({measured_total / max(cached_total, 1e-9):.0f}x faster)"
    )
    ratio = medians["all conv3x3"] / medians["all skip"]
    print(f"all conv3x3 / all skip: {ratio:.1f}x")
    return 0 if ratio > 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
