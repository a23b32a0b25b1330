"""How soon the command line answers: ``nasforge --help``, ``nasforge search --help`` and a
usage error, against ``optuna --help`` measured in the same run (Optuna's CLI is a command
line of the same kind: Python, a plugin-free parser, no torch).

    python benchmarks/cli_startup.py            # 10 runs each, interleaved; medians
    python benchmarks/cli_startup.py --runs 20

Each command runs in a fresh process, the commands taking turns so that a change in the
machine's load falls on all of them alike; the load average is printed before and after.
The target: each nasforge command at most 1.5x Optuna's median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "nasforge --help": [sys.executable, "-m", "nasforge", "--help"],
    "nasforge search --help": [sys.executable, "-m", "nasforge", "search", "--help"],
    "nasforge search --budget-trials abc": [
        sys.executable,
        "-m",
        "nasforge",
        "search",
        "--budget-trials",
        "abc",
    ],
    "nasforge --version": [sys.executable, "-m", "nasforge", "--version"],
}
#: Exit status each is expected to end with (a usage error is 2).
STATUS = {"nasforge search --budget-trials abc": 2}
TARGET = 1.5


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def once(argv: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True)
    return time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    optuna = shutil.which("optuna")
    commands = dict(COMMANDS)
    if optuna is not None:
        commands = {"optuna --help": [optuna, "--help"], **commands}
    times: dict[str, list[float]] = {name: [] for name in commands}
    print(f"load average before: {load()}")
    for _ in range(args.runs):
        for name, argv in commands.items():
            seconds, status = once(argv)
            if status != STATUS.get(name, 0):
                raise SystemExit(f"{name} exited {status}")
            times[name].append(seconds)
    print(f"load average after: {load()}")
    base = statistics.median(times["optuna --help"]) if optuna is not None else None
    print(f"\n| command | median s ({args.runs} runs) | min s | x optuna --help |")
    print("|---|---|---|---|")
    for name, seen in times.items():
        median = statistics.median(seen)
        ratio = f"{median / base:.2f}" if base else "-"
        print(f"| `{name}` | {median:.3f} | {min(seen):.3f} | {ratio} |")
    if base is None:
        print("\noptuna is not installed (pip install optuna): no baseline to compare with")
        return
    worst = max(statistics.median(v) / base for k, v in times.items() if k.startswith("nasforge"))
    verdict = "PASS" if worst <= TARGET else "FAIL"
    print(f"\nslowest nasforge command: {worst:.2f}x optuna --help (target <= {TARGET}x): {verdict}")


if __name__ == "__main__":
    main()
