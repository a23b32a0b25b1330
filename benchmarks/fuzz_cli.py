"""Fuzz the CLI and the library's parsers in-process, and list every failure by cause.

    python benchmarks/fuzz_cli.py                 # 10,000 inputs, seed 0
    python benchmarks/fuzz_cli.py --n 300         # a quick look
    python benchmarks/fuzz_cli.py --case 417      # replay one input, with its traceback
    python benchmarks/fuzz_cli.py --case 417 --dump /tmp/c417   # ... and keep its files

Each input is a command line (or a library call) plus the files it reads, generated from
``(seed, index)`` alone, run through ``nasforge.tools.cli.main(argv)`` in this process in its own
empty directory. The promise checked is the README's: exit 0, or exit 2 with one line on
stderr; never a traceback; a failed command leaves no new file. The generators, the
harness and the judging live in ``tests/fuzz/`` and are shared with the CI subset
(``tests/fuzz/test_fuzz_cli_subset.py``), so the two can never disagree about what a
failure is.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
# the toy space the generated searches use is a plugin module nothing registers by default
os.environ["NASFORGE_PLUGINS"] = ",".join(
    [*filter(None, os.environ.get("NASFORGE_PLUGINS", "").split(",")), "nasforge.kernel.testing.toy"]
)

from fuzz.cases import FAMILIES, Case, execute, make_case  # noqa: E402
from fuzz.harness import Outcome, Violation  # noqa: E402
from fuzz.templates import build_templates  # noqa: E402

HEADLINE = {"traceback": "tracebacks", "silent exit": "exits without a message", "files left": "files left"}


class Tally:
    """Violations grouped by (kind, key), with the shortest reproducer of each group."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], list[tuple[int, Case, Violation]]] = collections.defaultdict(list)
        self.inputs_with: collections.Counter[str] = collections.Counter()
        self.seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.counts: collections.Counter[str] = collections.Counter()
        self.exits: collections.Counter[str] = collections.Counter()
        self.generator_errors: list[str] = []

    def add(self, index: int, case: Case, outcome: Outcome, found: list[Violation]) -> None:
        self.counts[case.family] += 1
        self.seconds[case.family] += outcome.seconds
        self.exits["exception" if outcome.code is None else f"exit {outcome.code}"] += 1
        for kind in {v.kind for v in found}:
            self.inputs_with[kind] += 1
        for v in found:
            self.groups[(v.kind, v.key)].append((index, case, v))

    def headline(self, n: int) -> str:
        x = self.inputs_with["traceback"]
        y = self.inputs_with["silent exit"]
        z = self.inputs_with["files left"]
        return f"{n} inputs: {x} tracebacks, {y} exits without a message, {z} files left by a failed command"

    def report(self, show: int) -> str:
        lines = []
        others = {k: c for k, c in self.inputs_with.items() if k not in HEADLINE}
        if others:
            lines.append(
                "also: " + ", ".join(f"{c} {k}" for k, c in sorted(others.items(), key=lambda kv: -kv[1]))
            )
        lines.append("outcomes: " + ", ".join(f"{k}: {c}" for k, c in sorted(self.exits.items())))
        if self.generator_errors:  # the fuzzer's own bugs: reported, never counted as nasforge's
            lines.append(f"generator errors (inputs skipped): {len(self.generator_errors)}, first: ")
            lines.append("    " + self.generator_errors[0])
        if not self.groups:
            return "\n".join(lines)
        lines.append("")
        lines.append(f"failures by cause ({len(self.groups)} groups):")
        order = sorted(self.groups.items(), key=lambda kv: (kv[0][0] != "traceback", -len(kv[1]), kv[0]))
        for (kind, key), hits in order:
            families = collections.Counter(case.family for _, case, _ in hits)
            lines.append(f"\n[{kind}] {len(hits)}x  {key}")
            details = sorted({v.detail for _, _, v in hits if v.detail}, key=len)
            for detail in details[:2]:
                lines.append(f"    {detail[:220]}")
            lines.append("    families: " + ", ".join(f"{f} ({c})" for f, c in families.most_common()))
            for index, case, _ in sorted(hits, key=lambda h: len(h[1].reproducer()))[:show]:
                lines.append(f"    #{index}: {_clip(case.reproducer(), 400)}")
        return "\n".join(lines)

    def timing(self) -> str:
        rows = sorted(self.counts, key=lambda f: -self.seconds[f])
        return "time by family: " + ", ".join(
            f"{f} {self.counts[f]} inputs {self.seconds[f]:.0f} s" for f in rows if self.seconds[f] >= 1
        )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 40] + f"... ({len(text)} chars)"


def replay(index: int, seed: int, root: Path, dump: Path | None, timeout: float) -> int:
    """Run one input and print everything about it."""
    templates = build_templates(root / "templates")
    case = make_case(seed, index, templates)
    cwd = dump or (root / "case")
    if cwd.exists():
        shutil.rmtree(cwd)
    cwd.mkdir(parents=True)
    outcome, found = execute(case, cwd, timeout=timeout)
    print(f"input #{index} (seed {seed}), family {case.family}")
    print(f"reproducer: {case.reproducer()}")
    print(f"exit: {outcome.code}  ({outcome.seconds:.2f} s)")
    print(f"--- stdout ---\n{outcome.out}--- stderr ---\n{outcome.err}--- end ---")
    if outcome.tb:
        print(outcome.tb)
    if outcome.new_files:
        print("new files:", outcome.new_files)
    for v in found:
        print(f"VIOLATION [{v.kind}] {v.key}: {v.detail}")
    if dump:
        print(f"files kept in {cwd}")
    return 1 if found else 0


def run(n: int, seed: int, root: Path, timeout: float, show: int, only: set[str] | None) -> int:
    t0 = time.perf_counter()
    templates = build_templates(root / "templates")
    setup = time.perf_counter() - t0
    tally = Tally()
    done = 0
    for index in range(n):
        try:
            case = make_case(seed, index, templates)
        except Exception as exc:  # noqa: BLE001 - a bug in the generator, not in nasforge
            tally.generator_errors.append(f"#{index}: {type(exc).__name__}: {exc}"[:200])
            continue
        if only and case.family not in only:
            continue
        cwd = root / "cases" / str(index)
        cwd.mkdir(parents=True)
        outcome, found = execute(case, cwd, timeout=timeout)
        tally.add(index, case, outcome, found)
        shutil.rmtree(cwd, ignore_errors=True)
        done += 1
        if done % 500 == 0:
            elapsed = time.perf_counter() - t0
            print(
                f"  {done}/{n} inputs, {elapsed:.0f} s, {len(tally.groups)} failure groups", file=sys.stderr
            )
    wall = time.perf_counter() - t0
    print(tally.headline(done))
    print(tally.report(show))
    print()
    print(tally.timing())
    per_input = 1000 * (wall - setup) / max(done, 1)
    print(f"wall time {wall:.0f} s (templates {setup:.0f} s), {per_input:.0f} ms per input")
    return 1 if tally.groups else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="number of inputs (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one input may take")
    parser.add_argument("--show", type=int, default=1, help="reproducers shown per failure group")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES), help="only these families")
    parser.add_argument("--case", type=int, help="replay this one input verbosely")
    parser.add_argument("--dump", type=Path, help="with --case: keep the input's files here")
    parser.add_argument("--workdir", type=Path, help="scratch directory (default: a new temporary one)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    root = args.workdir or Path(tempfile.mkdtemp(prefix="nasforge-fuzz-"))
    root.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(root / "xdg-cache")  # the default score cache stays in here
    try:
        if args.case is not None:
            return replay(args.case, args.seed, root, args.dump, args.timeout)
        return run(
            args.n, args.seed, root, args.timeout, args.show, set(args.family) if args.family else None
        )
    finally:
        if args.workdir is None and args.dump is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
