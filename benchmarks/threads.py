"""How many torch threads the documented commands should use: each timed at 1, 2 and the
default threads (no ``--threads``), on the machine as it is and beside busy processes.

Every command runs in a fresh process (start-up, data loading and the work all counted),
at small sizes of the commands the getting-started pages print: a short-train search, the
training of its best, a metric sweep and a one-shot search. A row is one command under one
condition; the last column is the default's time over the best of the row (the default is
meant to stay within 1.3x of it everywhere).

    python benchmarks/threads.py                       # idle, then beside 2 busy processes
    python benchmarks/threads.py --busy 0 --commands search,score
    python benchmarks/threads.py --repeats 3       # each setting 3 times, taking turns (medians)

"Busy" processes are single-threaded matrix multiplications, each a core's worth of work
(what a browser, an IDE or a second run costs a 2-core machine). Nothing here can make the
machine idle: the load average before and after each row is printed, so a row measured
beside other work says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The busy processes' work: single-threaded float32 matrix products, for ever.
BUSY = (
    "import torch\n"
    "torch.set_num_threads(1)\n"
    "a = torch.randn(384, 384)\n"
    "while True:\n"
    "    a = torch.tanh(a @ a)\n"
)

#: A short-train search as the first-search page prints it, at its small size (2 trials).
SEARCH = [
    "search", "--space", "nb201", "--strategy", "rea", "--evaluator", "short-train",
    "--train-data", "digits", "--budget-trials", "2", "--build-option", "C=8", "--build-option", "N=1",
    "--evaluator-option", "epochs=2", "-q",
]  # fmt: skip


def commands(work: Path) -> dict[str, list[str]]:
    """The commands by name; ``train`` trains the best of the ``search`` run in ``work``."""
    run = work / "run"
    return {
        "search": [*SEARCH, "--run-dir", str(run / "search")],
        "train": [
            "train", str(run / "for-train"), "--epochs", "3", "-q", "--checkpoint-dir", str(run / "ck"),
        ],
        "score": [
            "score", "--space", "nb201", "-m", "synflow", "-m", "snip", "--sample", "20", "--no-cache", "-q",
        ],
        "one-shot": [
            "search", "--space", "nb201", "--strategy", "darts", "--dataset", "digits", "-o", "epochs=2",
            "-o", 'supernet={"C": 4, "N": 1}', "--evaluator", "nb201-table", "-q",
            "--run-dir", str(run / "darts"),
        ],
    }  # fmt: skip


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(argv: list[str], threads: str, cwd: Path) -> float:
    """Wall seconds of ``nasforge [--threads N] ARGV`` in a fresh process (fails loudly)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NASFORGE_THREADS", "OMP_NUM_THREADS")}
    flag = [] if threads == "default" else ["--threads", threads]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nasforge", *flag, *argv], cwd=cwd, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"nasforge {' '.join(flag + argv)} failed:\n{done.stderr[-2000:]}")
    return seconds


def busy(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--busy", default="0,2", help="Busy processes beside, comma-separated (default 0,2).")
    parser.add_argument("--threads", default="1,2,default", help="Thread settings (default 1,2,default).")
    parser.add_argument("--commands", default="search,train,score,one-shot")
    parser.add_argument("--warm-up", type=float, default=5.0, help="Seconds the busy processes run first.")
    parser.add_argument(
        "--repeats", type=int, default=1, help="Runs of each setting, taking turns; the median is shown."
    )
    args = parser.parse_args()
    settings = args.threads.split(",")
    names = args.commands.split(",")
    print(f"{os.cpu_count()} CPUs; torch threads by default: {_default_threads()}; load average {load()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="nasforge-threads-") as tmp:
        work = Path(tmp)
        argvs = commands(work)
        if "train" in names:  # the run the training command trains (not timed)
            timed([*SEARCH, "--run-dir", str(work / "run" / "for-train")], "1", work)
        for n in (int(b) for b in args.busy.split(",")):
            procs = busy(n)
            try:
                time.sleep(args.warm_up if n else 0.0)
                for name in names:
                    before = load()
                    runs: dict[str, list[float]] = {s: [] for s in settings}
                    for _ in range(args.repeats):
                        for setting in settings:
                            _fresh(work)
                            runs[setting].append(timed(argvs[name], setting, work))
                    seconds = {s: statistics.median(v) for s, v in runs.items()}
                    rows.append((name, n, seconds, before, load()))
                    _print_row(rows[-1], settings)
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
    print()
    print(
        "| command | beside | "
        + " | ".join(f"{s} thread(s) s" for s in settings)
        + " | default / best | load avg |"
    )
    print("|---|---|" + "---|" * len(settings) + "---|---|")
    for name, n, seconds, before, after in rows:
        best = min(seconds.values())
        ratio = seconds.get("default", float("nan")) / best
        cells = " | ".join(f"{seconds[s]:.1f}" for s in settings)
        print(f"| {name} | {n} busy | {cells} | {ratio:.2f} | {before} -> {after} |")


def _fresh(work: Path) -> None:
    """Remove what a timed command left (its run directory, checkpoints), so each starts anew."""
    import shutil

    for sub in ("search", "darts", "ck"):
        shutil.rmtree(work / "run" / sub, ignore_errors=True)


def _default_threads() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "from nasforge.run.threads import default_threads; print(default_threads())"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "torch's own"


def _print_row(row: tuple, settings: list[str]) -> None:
    name, n, seconds, before, after = row
    shown = ", ".join(f"{s}: {seconds[s]:.1f} s" for s in settings)
    print(f"{name:9s} beside {n} busy: {shown} (load {before} -> {after})", flush=True)


if __name__ == "__main__":
    main()
