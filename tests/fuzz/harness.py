"""Run one fuzzed input in-process and say what, if anything, went wrong.

The CLI is called as ``nasforge.tools.cli.main(argv)`` in this process (a subprocess per input
would spend seconds importing torch, so 10,000 inputs would take hours), with stdout and
stderr captured, the working directory set to the input's own directory, a time limit,
and the files under that directory listed before and after. Python warnings are shown
the way a fresh process would show them (each once), because a warning printed before
the error line breaks the "one line on stderr" promise just as much as a traceback does.

The properties checked (README, issue 8):

* the command exits 0, or exits 2 with exactly one non-empty line on stderr;
* never a traceback (an exception escaping ``main``), never a silent non-zero exit;
* a failed command leaves no new file behind;
* ``--json`` output that exits 0 is JSON; a search or resume that exits 0 leaves a
  readable journal with at least one successful trial.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LIBRARY_DIRS = (REPO / "sdk", REPO / "plugins")


class CaseTimeout(BaseException):
    """Raised by the alarm handler; a BaseException so that no ``except Exception`` eats it."""


@dataclass
class Outcome:
    """What one input did."""

    code: int | None  # exit status; None when an exception escaped
    out: str = ""
    err: str = ""
    exc_type: str | None = None
    exc_message: str = ""
    location: str = ""
    tb: str = ""
    timed_out: bool = False
    new_files: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.code != 0

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


@dataclass(frozen=True)
class Violation:
    """One broken property; ``key`` groups violations with the same cause."""

    kind: str
    key: str
    detail: str = ""


# --- running --------------------------------------------------------------------------


def _files(root: Path) -> set[str]:
    out = set()
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            out.add(os.path.relpath(os.path.join(dirpath, name), root))
    return out


def library_location(tb: Any) -> str:
    """The deepest frame inside nasforge's own code (``path:line in function``).

    Grouping failures by where the library let an exception through, rather than by
    where Python raised it (json/decoder.py, pathlib), puts each defect in one group.
    """
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if any(str(d) in f.filename for d in LIBRARY_DIRS)]
    frame = ours[-1] if ours else (frames[-1] if frames else None)
    if frame is None:
        return "?"
    try:
        name = str(Path(frame.filename).resolve().relative_to(REPO))
    except ValueError:
        name = Path(frame.filename).name
    return f"{name}:{frame.lineno} in {frame.name}"


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def _raise(_signum: int, _frame: Any) -> None:
        raise CaseTimeout(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _in_directory(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _call(fn: Callable[[], Any], cwd: Path, timeout: float) -> Outcome:
    """Run ``fn`` in ``cwd``; record exit status, output, any escaping exception, new files."""
    import torch

    before = _files(cwd)
    out, err = io.StringIO(), io.StringIO()
    outcome = Outcome(code=0)
    threads = torch.get_num_threads()
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        # what a fresh interpreter shows: everything once, except the categories that
        # Python hides by default outside __main__
        warnings.simplefilter("default")
        for hidden in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=hidden)
        try:
            with (
                _in_directory(cwd),
                contextlib.redirect_stdout(out),
                contextlib.redirect_stderr(err),
                _time_limit(timeout),
            ):
                fn()
        except SystemExit as exc:
            if isinstance(exc.code, str):  # sys.exit("message") prints it and exits 1
                err.write(exc.code + "\n")
                outcome.code = 1
            else:
                outcome.code = int(exc.code or 0)
        except CaseTimeout as exc:
            outcome.code, outcome.timed_out, outcome.exc_message = None, True, str(exc)
        except BaseException as exc:  # noqa: BLE001 - every escape is a finding
            outcome.code = None
            outcome.exc_type = type(exc).__name__
            outcome.exc_message = (str(exc).strip().splitlines() or [""])[0][:300]
            outcome.location = library_location(exc.__traceback__)
            outcome.tb = "".join(traceback.format_exception(exc))
    outcome.seconds = time.perf_counter() - t0
    if torch.get_num_threads() != threads:  # --threads must not leak into the next input
        torch.set_num_threads(threads)
    shown = {(str(w.message), w.category, w.filename, w.lineno) for w in caught}
    warned = "".join(warnings.formatwarning(m, c, f, n) for m, c, f, n in sorted(shown, key=str))
    outcome.out, outcome.err = out.getvalue(), warned + err.getvalue()
    outcome.new_files = sorted(_files(cwd) - before)
    return outcome


def run_cli(argv: list[str], cwd: Path, *, timeout: float = 60.0) -> Outcome:
    """``nasforge ARGV`` in-process, in ``cwd``."""
    from nasforge.tools.cli import main

    return _call(lambda: main(list(argv)), cwd, timeout)


def run_python(fn: Callable[[], Any], cwd: Path, *, timeout: float = 60.0) -> Outcome:
    """A library call in-process, in ``cwd``; exit status 0 when it returns."""
    return _call(fn, cwd, timeout)


# --- judging --------------------------------------------------------------------------


def _shape_of(path: str) -> str:
    """A file name with the run-specific parts masked, so that groups stay few."""
    import re

    return re.sub(r"\d+", "N", re.sub(r"\.[A-Za-z0-9_]{6,}\.part$", ".*.part", path))


def cli_violations(argv: list[str], outcome: Outcome, cwd: Path | None = None) -> list[Violation]:
    """The properties every CLI command must keep, checked on one outcome."""
    command = next((a for a in argv if not a.startswith("-")), "?")
    found: list[Violation] = []
    lines = outcome.err_lines
    if outcome.timed_out:
        found.append(Violation("timeout", f"{command}: {outcome.exc_message}"))
    elif outcome.exc_type is not None:
        found.append(
            Violation(
                "traceback",
                f"{outcome.exc_type} at {outcome.location}",
                f"{outcome.exc_type}: {outcome.exc_message}",
            )
        )
    elif any("Traceback (most recent call last)" in line for line in lines):
        found.append(Violation("traceback", "traceback text on stderr", lines[0][:200]))
    elif outcome.code != 0:
        if not lines:
            found.append(Violation("silent exit", f"{command}: exit {outcome.code} with empty stderr"))
        elif outcome.code != 2:
            found.append(Violation("exit status", f"{command}: exit {outcome.code}", lines[-1][:200]))
        if len(lines) > 1:
            key = (
                "Typer/click usage error (multi-line box)" if lines[0].startswith("Usage:") else lines[0][:70]
            )
            found.append(Violation("multi-line message", key, " / ".join(lines)[:300]))
    if outcome.failed and outcome.new_files:
        shapes = sorted({_shape_of(p) for p in outcome.new_files})
        found.append(
            Violation("files left", f"{command}: {', '.join(shapes)[:120]}", lines[0][:200] if lines else "")
        )
    if outcome.code == 0 and "--json" in argv:
        try:
            json.loads(outcome.out)
        except ValueError as exc:
            found.append(
                Violation("invalid JSON output", f"{command}: {exc.__class__.__name__}", outcome.out[:200])
            )
    if outcome.code == 0 and cwd is not None and command in ("search", "resume"):
        found.extend(_journal_after_success(argv, command, cwd))
    return found


def _journal_after_success(argv: list[str], command: str, cwd: Path) -> list[Violation]:
    """A run that exits 0 must leave a readable journal holding a successful trial."""
    from nasforge.kernel.errors import NasforgeError
    from nasforge.run.journal_file import JournalReader, journal_path

    if command == "resume":
        run_dir = next((a for a in argv[argv.index("resume") + 1 :] if not a.startswith("-")), None)
    else:
        run_dir = argv[argv.index("--run-dir") + 1] if "--run-dir" in argv else None
    if run_dir is None or not os.path.exists(journal_path(cwd / run_dir)):
        return []
    try:
        reader = JournalReader.of_run(cwd / run_dir)
    except (NasforgeError, OSError, ValueError) as exc:
        return [Violation("journal unreadable after success", f"{command}: {_mask(str(exc))}")]
    if (
        reader.header.get("mode") != "one-shot"
        and reader.trials
        and all(t.result.failed for t in reader.trials)
    ):
        return [Violation("success without a successful trial", f"{command}: every trial failed, exit 0")]
    return []


def _mask(message: str) -> str:
    import re

    return re.sub(r"\d+", "N", re.sub(r"/[^\s:]*journal\.jsonl", "journal.jsonl", message))[:120]


def python_violations(outcome: Outcome) -> list[Violation]:
    """A library parser either returns or raises a NasforgeError (the exit-2 path)."""
    if outcome.timed_out:
        return [Violation("timeout", outcome.exc_message)]
    if outcome.exc_type is not None:
        return [
            Violation(
                "traceback",
                f"{outcome.exc_type} at {outcome.location}",
                f"{outcome.exc_type}: {outcome.exc_message}",
            )
        ]
    return []


def expect_nasforge_error(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Wrap a library call so that a NasforgeError counts as a clean refusal (exit 2)."""
    from nasforge.kernel.errors import NasforgeError

    def call() -> Any:
        try:
            return fn()
        except NasforgeError as exc:
            raise SystemExit(2) from exc

    return call


def describe(violations: list[Violation]) -> str:
    return "\n".join(f"[{v.kind}] {v.key}: {v.detail}" for v in violations)
