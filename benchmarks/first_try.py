"""A new user's first search, timed as they would run it: MNIST-1D and a small ``.npz``.

Runs the documented first-try commands in a fresh process each (start-up, data loading
and the search all counted), with stderr not a terminal, and prints per command its wall
time, how soon the first progress line came, the longest silence between two stderr
lines, and the best architecture; then ``nasforge train RUN_DIR --export`` on the run.

    python benchmarks/first_try.py                 # both datasets, the documented commands
    python benchmarks/first_try.py --threads 1     # NASFORGE_THREADS=1 (a busy machine)

Figures depend on the machine and on what else runs on it: compare commands measured in
the same run, and say how busy the machine was (the load average is printed). With one
thread the CPU time is about the wall time the command takes on a machine of its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: The first-try search: a small NAS-Bench-201 network (C=8, N=1) trained 5 epochs per
#: trial by short-train, eight trials, the default strategy.
FIRST_TRY = [
    "--evaluator",
    "short-train",
    "--build-option",
    "C=8",
    "--build-option",
    "N=1",
    "--budget-trials",
    "8",
]


def small_npz(path: Path) -> Path:
    """2,000 + 500 test grayscale 16x16 images of 4 classes (a bar's place and direction,
    with noise): the size of a first dataset a user brings."""
    rng = np.random.default_rng(0)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 4, n)
        x = rng.normal(0.0, 0.4, (n, 1, 16, 16)).astype(np.float32)
        for i, label in enumerate(y):
            at = int(rng.integers(3, 13))
            if label % 2:
                x[i, 0, :, at] += 1.0 + label / 4
            else:
                x[i, 0, at, :] += 1.0 + label / 4
        return x, y

    x, y = draw(2000)
    x_test, y_test = draw(500)
    np.savez(path, x=x, y=y, x_test=x_test, y_test=y_test)
    return path


def timed(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    """Run ``argv``; its wall time and CPU time, first stderr line's time, longest gap
    between lines. On a shared machine the CPU time (user + system of the process) is the
    steadier figure: with one thread it is about the wall time the command takes alone."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stamps: list[float] = []
    lines: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        stamps.append(time.monotonic() - start)
        lines.append(line.rstrip())
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    wall = time.monotonic() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    gaps = [b - a for a, b in zip([0.0, *stamps], [*stamps, wall], strict=True)]
    return {
        "status": proc.returncode,
        "wall": wall,
        "cpu": cpu,
        "first_line": stamps[0] if stamps else None,
        "longest_silence": max(gaps),
        "progress_lines": sum("epoch" in line for line in lines),
        "stderr": lines,
        "stdout": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="NASFORGE_THREADS for the commands")
    parser.add_argument("--datasets", default="mnist1d,npz", help="comma-separated: mnist1d, npz")
    parser.add_argument("--train", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    env = {**os.environ}
    env.pop("NASFORGE_PROGRESS_SECONDS", None)  # the default, 10 s
    if args.threads is not None:
        env["NASFORGE_THREADS"] = str(args.threads)
    threads = args.threads or "default"
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; threads {threads}")
    with tempfile.TemporaryDirectory(prefix="first-try-") as tmp:
        for name in args.datasets.split(","):
            data = "mnist1d" if name == "mnist1d" else str(small_npz(Path(tmp) / "mine.npz"))
            run = Path(tmp) / f"run-{name}"
            search = [sys.executable, "-m", "nasforge", "search", "--train-data", data, *FIRST_TRY]
            result = timed([*search, "--run-dir", str(run)], env)
            shown = " ".join(
                [
                    "nasforge",
                    "search",
                    "--train-data",
                    "mnist1d" if name == "mnist1d" else "mine.npz",
                    *FIRST_TRY,
                ]
            )
            print(f"\n$ {shown}")
            _report(result)
            if args.train and result["status"] == 0:
                trained = timed(
                    [
                        sys.executable,
                        "-m",
                        "nasforge",
                        "train",
                        str(run),
                        "--export",
                        str(Path(tmp) / f"out-{name}"),
                    ],
                    env,
                )
                print("$ nasforge train RUN_DIR --export out/")
                _report(trained)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


def _report(result: dict[str, object]) -> None:
    first = result["first_line"]
    print(
        f"  status {result['status']}, wall {result['wall']:.1f} s, CPU {result['cpu']:.1f} s, "
        f"first line after "
        f"{first if first is None else f'{first:.1f} s'}, longest silence {result['longest_silence']:.1f} s, "
        f"{result['progress_lines']} progress lines naming an epoch"
    )
    for line in result["stderr"]:  # type: ignore[union-attr]
        if "trials," in line or "take about" in line or "held-out accuracy" in line or "error" in line:
            print(f"    {line}")
    for line in str(result["stdout"]).splitlines():
        if any(
            key in line for key in ("│ best ", "│ strategy", "│ value", "held-out accuracy", "onnxruntime")
        ):
            print(f"    {line.strip()}")


if __name__ == "__main__":
    main()
