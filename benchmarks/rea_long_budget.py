"""REA on a budget as large as NAS-Bench-201 itself: does it keep finding new cells, and how
fast, from the first thousand trials to the last?

    python benchmarks/rea_long_budget.py                 # 15,625 trials, seed 0
    python benchmarks/rea_long_budget.py --trials 5000 --seed 3

Runs ``nasforge``'s regularized evolution on the bundled table (one thread, a temporary run
directory), stamps each trial as the run reports it, and prints the distinct cells seen and
the trials per second over stretches of the run. A population that only repeats itself shows
as a collapse of the late rates; a run that sees fewer distinct cells than its trials says
why it stopped on stderr.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from nasforge import api


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15625)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    stamps: list[float] = []
    with tempfile.TemporaryDirectory() as work:
        outcome = api.search(
            space="nb201", strategy="rea", evaluator="nb201-table", trials=args.trials, seed=args.seed,
            run_dir=f"{work}/run", on_trial=lambda trial: stamps.append(time.perf_counter()),
        )  # fmt: skip
    n = len(stamps)
    print(f"trials {n:,}, distinct cells {len({t.genotype for t in outcome.history}):,} of 15,625")
    for start in sorted({0, n // 3, 2 * n // 3, max(n - 1000, 0), max(n - 100, 0)}):
        end = min(start + 1000, n) - 1
        if end > start:
            rate = (end - start) / (stamps[end] - stamps[start])
            print(f"trials {start:,}-{end:,}: {rate:,.0f} trials/s")
    print(f"whole run: {n / (stamps[-1] - stamps[0]):,.0f} trials/s over {stamps[-1] - stamps[0]:.1f} s")


if __name__ == "__main__":
    main()
