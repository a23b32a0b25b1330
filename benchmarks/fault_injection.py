"""Kill -9, torn journal lines and full disks, then resume: is the run the same as if
nothing had happened?

    python benchmarks/fault_injection.py              # 20 kills + 5 torn-line/ENOSPC cases, seed 0
    python benchmarks/fault_injection.py --kills 4 --torn 2   # a quick look

Every search and resume is a real CLI process (``python -m nasforge``, one torch thread),
killed with SIGKILL at a random moment after its journal has grown: half the kills hit
an ask/tell run (REA on the NAS-Bench-201 table, ``--budget-trials 400``), half a
one-shot run (DARTS on the NAS-Bench-201 supernet over sklearn digits, a C=4 N=1 supernet,
6 epochs); some kill the search, some then kill the resume as well. Five more cases tear
the journal's last line (what a kill mid-write or a full disk leaves) or fill the disk
(a tmpfs of a few pages when run as root, else a file-size limit, which makes the same
partial write), during a search or a resume. Each run is then resumed to the end and
compared with an uninterrupted run of the same command: same trials in the same order,
same results, same best, no trial lost or repeated, and every trial finished before the
fault still there, unchanged. Kill points are drawn from ``--seed``; where exactly a
kill lands still depends on timing, so the trial count at each kill is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ASK_TELL = ["search", "--space", "nb201", "--strategy", "rea", "--evaluator", "nb201-table"]
ASK_TELL += ["--dataset", "cifar10", "--budget-trials", "400", "--seed", "7", "-q"]
ONE_SHOT = ["search", "--space", "nb201", "--strategy", "darts", "--dataset", "digits", "--seed", "3"]
ONE_SHOT += [
    "-o",
    'supernet={"C": 4, "N": 1}',
    "-o",
    "epochs=6",
    "-o",
    "max_batches=2",
    "-o",
    "batch_size=16",
    "-q",
]
COMMANDS = {"ask/tell (rea)": ASK_TELL, "one-shot (darts)": ONE_SHOT}
#: Bytes the journal may reach before the disk is "full": a few dozen REA trials, a few DARTS epochs.
FULL_AT = {"ask/tell (rea)": 20_000, "one-shot (darts)": 6_000}


@dataclass
class Journal:
    """What a journal holds, reduced to what must survive a fault."""

    trials: list[tuple[int, Any, Any, bool]]  # (index, genotype, objectives, failed)
    best: Any
    ended: bool

    @classmethod
    def read(cls, run_dir: Path) -> Journal:
        from nasforge.run.journal_file import JournalReader

        reader = JournalReader.of_run(run_dir)
        trials = [
            (t.index, t.genotype.to_json(), t.result.objectives, t.result.failed) for t in reader.trials
        ]
        return cls(trials, reader.end.get("best") if reader.end else None, reader.end is not None)


@dataclass
class CaseResult:
    name: str
    strategy: str
    faults: list[str] = field(default_factory=list)  # e.g. "kill -9 in search at 113 trials"
    identical: bool = False
    lost: int = 0
    repeated: int = 0
    detail: str = ""
    failed_cleanly: list[bool] = field(default_factory=list)  # ENOSPC: exit 2 with one line?


# --- processes ------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "NASFORGE_THREADS": "1"}


def _start(argv: list[str], *, file_size_limit: int | None = None) -> subprocess.Popen[str]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # crossing the limit: EFBIG, not death
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.Popen(
        [sys.executable, "-m", "nasforge", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=limit if file_size_limit is not None else None,
    )


def _run(argv: list[str], *, file_size_limit: int | None = None) -> tuple[int, str, str]:
    proc = _start(argv, file_size_limit=file_size_limit)
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def _journal_size(path: Path, inode: int | None) -> int:
    """Size of the journal, or -1 while it is missing or still the file it replaces."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return -1
    return -1 if inode is not None and st.st_ino == inode else st.st_size


def kill_when_grown(
    argv: list[str], journal: Path, target: int, delay: float, *, replaced_inode: int | None = None
) -> bool:
    """Start ``argv``; SIGKILL it ``delay`` s after its journal reaches ``target`` bytes.

    Returns False if the process finished first (the kill point was missed).
    """
    proc = _start(argv)
    try:
        while proc.poll() is None and _journal_size(journal, replaced_inode) < target:
            time.sleep(0.001)
        if proc.poll() is not None:
            return False
        time.sleep(delay)
        if proc.poll() is not None:
            return False
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return True
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# --- filling a disk -------------------------------------------------------------------


def can_mount_tmpfs(scratch: Path) -> bool:
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and sys.platform.startswith("linux")):
        return False
    probe = scratch / "probe"
    probe.mkdir(exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(probe)], capture_output=True)
    if ok.returncode != 0:
        return False
    subprocess.run(["umount", str(probe)], capture_output=True)
    return True


@contextlib.contextmanager
def small_disk(mountpoint: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes (rounded to pages); grown by :func:`grow` to resume."""
    mountpoint.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)], check=True)
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


def grow(mountpoint: Path) -> None:
    subprocess.run(["mount", "-o", "remount,size=64m", str(mountpoint)], check=True)


def one_line_exit_2(code: int, err: str) -> bool:
    lines = [line for line in err.splitlines() if line.strip()]
    return code == 2 and len(lines) == 1 and "Traceback" not in err


# --- comparing ------------------------------------------------------------------------


def compare(result: CaseResult, run_dir: Path, reference: Journal, before: list[Journal]) -> None:
    """Fill in ``identical``, ``lost`` and ``repeated`` from the final journal.

    ``before`` are the journals as each fault left them: their trials must open the final
    journal unchanged (an ask/tell resume keeps them; a one-shot restart, seeded, must
    reproduce them).
    """
    try:
        final = Journal.read(run_dir)
    except Exception as exc:  # noqa: BLE001 - an unreadable journal is the finding
        result.detail = f"final journal unreadable: {type(exc).__name__}: {str(exc)[:200]}"
        result.lost = len(reference.trials)
        return
    keys = [(i, json.dumps(g, sort_keys=True)) for i, g, _, _ in final.trials]
    ref_keys = [(i, json.dumps(g, sort_keys=True)) for i, g, _, _ in reference.trials]
    result.repeated = (
        len(keys) - len(set(keys)) + sum(1 for k in range(1, len(keys)) if keys[k][0] <= keys[k - 1][0])
    )
    result.lost = len(set(ref_keys) - set(keys))
    problems = []
    if final.trials != reference.trials:
        first = next(
            (k for k, (a, b) in enumerate(zip(final.trials, reference.trials, strict=False)) if a != b), None
        )
        problems.append(
            f"trials differ ({len(final.trials)} vs {len(reference.trials)}"
            + (f", first at {first})" if first is not None else ")")
        )
    if final.best != reference.best or not final.ended:
        problems.append("best or end record differs")
    for journal in before:  # what was finished before a fault is still there, unchanged
        if final.trials[: len(journal.trials)] != journal.trials:
            problems.append(f"a trial finished before the fault changed (of {len(journal.trials)})")
    result.identical = not problems
    result.detail = "; ".join(problems)


# --- the cases ------------------------------------------------------------------------


class Bench:
    def __init__(self, root: Path, rng: random.Random, tmpfs: bool) -> None:
        self.root, self.rng, self.tmpfs = root, rng, tmpfs
        self.references: dict[str, Journal] = {}
        self.reference_sizes: dict[str, int] = {}
        self.header_sizes: dict[str, int] = {}
        self.counter = 0

    def new_dir(self, name: str) -> Path:
        self.counter += 1
        return self.root / f"{self.counter:02d}-{name}"

    def reference(self, strategy: str) -> None:
        run_dir = self.root / f"reference-{strategy.split()[0]}"
        code, _, err = _run([*COMMANDS[strategy], "--run-dir", str(run_dir)])
        if code != 0:
            raise SystemExit(f"the uninterrupted {strategy} run failed: {err}")
        self.references[strategy] = Journal.read(run_dir)
        text = (run_dir / "journal.jsonl").read_bytes()
        self.reference_sizes[strategy] = len(text)
        self.header_sizes[strategy] = text.index(b"\n") + 1

    def _kill_point(self, strategy: str, low: int) -> tuple[int, float]:
        top = int(0.9 * self.reference_sizes[strategy])
        target = self.rng.randint(min(low, top), top)
        epoch_scale = 0.3 if strategy.startswith("one-shot") else 0.004
        return target, self.rng.uniform(0, epoch_scale)

    def kill_case(self, strategy: str, kill_resume: bool) -> CaseResult:
        """Kill the search at a random point (and the first resume too), then resume to the end."""
        result = CaseResult("kill -9" + (" (search, then resume)" if kill_resume else " (search)"), strategy)
        run_dir = self.new_dir("kill")
        journal = run_dir / "journal.jsonl"
        before: list[Journal] = []
        for attempt in range(5):
            target, delay = self._kill_point(strategy, self.header_sizes[strategy] + 1)
            shutil.rmtree(run_dir, ignore_errors=True)
            if kill_when_grown([*COMMANDS[strategy], "--run-dir", str(run_dir)], journal, target, delay):
                break
            result.faults.append(f"(kill point {attempt + 1} missed: the run finished first)")
        else:
            result.detail = "every kill point was missed"
            return result
        before.append(Journal.read(run_dir))
        result.faults.append(f"kill -9 in search at {len(before[-1].trials)} trials")
        if kill_resume:
            size = journal.stat().st_size
            inode = (
                journal.stat().st_ino if strategy.startswith("one-shot") else None
            )  # a restart replaces it
            low = size + 1 if inode is None else self.header_sizes[strategy] + 1
            target, delay = self._kill_point(strategy, low)
            if kill_when_grown(["resume", str(run_dir), "-q"], journal, target, delay, replaced_inode=inode):
                try:
                    before.append(Journal.read(run_dir))
                    result.faults.append(f"kill -9 in resume at {len(before[-1].trials)} trials")
                except Exception as exc:  # noqa: BLE001 - the final resume decides whether it matters
                    result.faults.append(f"kill -9 in resume; journal then unreadable: {str(exc)[:120]}")
            else:
                result.faults.append("(resume kill point missed: the resume finished first)")
        code, _, err = _run(["resume", str(run_dir), "-q"])
        if code != 0:
            result.detail = f"final resume exited {code}: {err.strip()[:300]}"
            return result
        compare(result, run_dir, self.references[strategy], before)
        return result

    def torn_case(self, strategy: str) -> CaseResult:
        """The journal as a kill mid-write leaves it: whole lines, then part of the next one."""
        reference_dir = self.root / f"reference-{strategy.split()[0]}"
        lines = (reference_dir / "journal.jsonl").read_bytes().split(b"\n")
        keep = self.rng.randint(2, len(lines) - 3)
        cut = self.rng.randint(1, len(lines[keep]) - 1)
        run_dir = self.new_dir("torn")
        run_dir.mkdir()
        (run_dir / "journal.jsonl").write_bytes(b"\n".join(lines[:keep]) + b"\n" + lines[keep][:cut])
        result = CaseResult("torn last line", strategy, [f"journal cut to {keep} lines + {cut} bytes"])
        before = [Journal.read(run_dir)]
        # twice: appending after a torn line once passed the first resume and broke the second
        for attempt in (1, 2):
            code, _, err = _run(["resume", str(run_dir), "-q"])
            if code != 0:
                result.detail = f"resume {attempt} exited {code}: {err.strip()[:300]}"
                return result
        compare(result, run_dir, self.references[strategy], before)
        return result

    def disk_full_case(self, strategy: str, during: str) -> CaseResult:
        """The disk fills during the search (or during a resume); resume once there is room."""
        result = CaseResult(f"disk full during {during}", strategy)
        base = self.new_dir("enospc")
        run_dir = base / "disk" / "run"
        journal = run_dir / "journal.jsonl"
        limit = FULL_AT[strategy]
        with contextlib.ExitStack() as stack:
            if self.tmpfs:
                disk = stack.enter_context(small_disk(base / "disk", limit))
                result.faults.append(f"tmpfs of {limit // 1000} kB")
            else:
                (base / "disk").mkdir(parents=True)
                result.faults.append(f"file size limit {limit} bytes")
            before: list[Journal] = []
            if during == "resume":  # an interrupted run (cut at a line) that the resume must extend
                lines = (
                    (self.root / f"reference-{strategy.split()[0]}" / "journal.jsonl")
                    .read_bytes()
                    .split(b"\n")
                )
                run_dir.mkdir(parents=True)
                journal.write_bytes(b"\n".join(lines[:3]) + b"\n")
                before.append(Journal.read(run_dir))
                argv = ["resume", str(run_dir), "-q"]
            else:
                argv = [*COMMANDS[strategy], "--run-dir", str(run_dir)]
            code, _, err = _run(argv, file_size_limit=None if self.tmpfs else limit)
            result.failed_cleanly.append(one_line_exit_2(code, err))
            if code == 0:  # too small a disk for the run: a success here hides a lost write
                result.faults.append(f"{during} exited 0 on a disk too small for it")
            try:
                before.append(Journal.read(run_dir))
                result.faults.append(
                    f"{during} failed at {len(before[-1].trials)} trials: {_first_line(err)}"
                )
            except Exception as exc:  # noqa: BLE001 - the finding is that it is unreadable
                result.faults.append(f"{during} failed; journal unreadable: {exc}")
            if self.tmpfs:
                grow(disk)
            code, _, err = _run(["resume", str(run_dir), "-q"])
            if code != 0:
                result.detail = f"resume with room exited {code}: {err.strip()[:300]}"
                return result
            compare(result, run_dir, self.references[strategy], before)
        return result


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines and "Traceback" in text else (lines[0] if lines else "(no message)"))[:160]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs in all (default 20)")
    parser.add_argument("--torn", type=int, default=5, help="torn-line and disk-full cases (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, help="keep the runs here (default: a temporary directory)")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    root = args.workdir or Path(tempfile.mkdtemp(prefix="nasforge-faults-"))
    root.mkdir(parents=True, exist_ok=True)
    bench = Bench(root, random.Random(args.seed), can_mount_tmpfs(root))
    results: list[CaseResult] = []
    try:
        for strategy in COMMANDS:
            bench.reference(strategy)
        # per strategy: kills/2 kills, as search-only cases plus a few search-then-resume cases (2 kills each)
        for strategy in COMMANDS:
            budget = args.kills // 2 + (args.kills % 2 if strategy.startswith("ask") else 0)
            doubles = budget // 3
            for _ in range(budget - 2 * doubles):
                results.append(bench.kill_case(strategy, kill_resume=False))
                _progress(results[-1], t0)
            for _ in range(doubles):
                results.append(bench.kill_case(strategy, kill_resume=True))
                _progress(results[-1], t0)
        torn_plan = [
            ("torn", "ask/tell (rea)", ""),
            ("torn", "one-shot (darts)", ""),
            ("full", "ask/tell (rea)", "search"),
            ("full", "ask/tell (rea)", "resume"),
            ("full", "one-shot (darts)", "search"),
        ]
        for k in range(args.torn):
            kind, strategy, during = torn_plan[k % len(torn_plan)]
            results.append(
                bench.torn_case(strategy) if kind == "torn" else bench.disk_full_case(strategy, during)
            )
            _progress(results[-1], t0)
    finally:
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)

    kills = sum(1 for r in results for f in r.faults if f.startswith("kill -9"))
    identical = sum(r.identical for r in results)
    lost_or_repeated = sum(r.lost + r.repeated for r in results)
    print()
    for r in results:
        verdict = "identical" if r.identical else f"DIFFERENT: {r.detail}"
        print(f"  {r.strategy:17s} {r.name:32s} {'; '.join(r.faults)} -> {verdict}")
    clean = [ok for r in results for ok in r.failed_cleanly]
    if clean:
        print(f"\nfull disk: {sum(clean)}/{len(clean)} failed commands exited 2 with one line on stderr")
    print(f"{kills} kill -9 points, {args.torn} torn-line/disk-full cases, {time.perf_counter() - t0:.0f} s")
    print(
        f"{identical}/{len(results)} resumed runs identical to the uninterrupted run, "
        f"{lost_or_repeated} trials lost or repeated"
    )
    return 0 if identical == len(results) and lost_or_repeated == 0 and all(clean) else 1


def _progress(result: CaseResult, t0: float) -> None:
    state = "identical" if result.identical else "DIFFERENT"
    print(f"  [{time.perf_counter() - t0:5.0f} s] {result.strategy}, {result.name}: {state}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
