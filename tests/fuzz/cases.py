"""Fuzzed inputs for the CLI and the library's parsers, one family per kind of input.

A :class:`Case` is everything needed to replay one input: the argv (or a library call),
the files to create first, and a description of how those files were made. Families are
functions ``(source, templates) -> Case``; :func:`make_case` picks one by weight from a
seed and an index, so input ``i`` of seed ``s`` is the same on every run and can be
replayed alone (``benchmarks/fuzz_cli.py --case i``).

Cost is part of the design: every family is built from commands that answer in tens of
milliseconds (``export --no-onnx``, ``inspect``, searches on the toy space or the
NAS-Bench-201 table, ``score -m params`` on a C=4 network); the slow paths (ONNX export,
a DARTS run, HNAS, correlate) are a few percent of the mix.
"""

from __future__ import annotations

import inspect
import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz.files import foreign_safetensors, mutate_journal, mutate_onnx, mutate_safetensors, read_safetensors
from fuzz.genotype_text import genotype_text
from fuzz.harness import (
    Outcome,
    Violation,
    cli_violations,
    expect_nasforge_error,
    python_violations,
    run_cli,
    run_python,
)
from fuzz.source import STRUCTURAL, SeededSource, Source
from fuzz.templates import HNAS_ARGS, JOURNAL_RUNS, Templates
from fuzz.values import HUGE_INTS, deep_json, option_value

Check = Callable[[Path, Outcome], list[Violation]]

#: Network options that keep a built network tiny (and a score or export fast).
TINY_BUILD = {
    "nb201": ["--build-option", "C=4", "--build-option", "N=1"],
    "darts": ["--build-option", "C=4", "--build-option", "layers=3"],
    "toy": [],
}
TINY_SHAPE = {"nb201": "1,3,8,8", "darts": "1,3,8,8", "toy": "1,8"}
ONE_SHOT_TINY = [
    "-o",
    'supernet={"C": 4, "N": 1}',
    "-o",
    "epochs=1",
    "-o",
    "max_batches=1",
    "-o",
    "batch_size=8",
]
NASI_TINY = [
    "-o",
    'supernet={"C": 4, "N": 1}',
    "-o",
    "steps=2",
    "-o",
    "calibration_samples=2",
    "-o",
    "batch_size=8",
]


@dataclass
class Case:
    """One fuzzed input: argv or a library call, the files it needs, and how they were made."""

    family: str
    argv: list[str] | None = None
    call: Callable[[], Any] | None = None
    call_text: str = ""
    files: dict[str, bytes | None] = field(default_factory=dict)  # None: a directory
    setup: str = ""
    check: Check | None = None

    def reproducer(self) -> str:
        what = f"nasforge {shlex.join(self.argv)}" if self.argv is not None else self.call_text
        return f"{what}    [files: {self.setup}]" if self.setup else what

    def materialise(self, cwd: Path) -> None:
        for rel, data in self.files.items():
            path = cwd / rel
            if data is None:
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)


def execute(case: Case, cwd: Path, *, timeout: float = 60.0) -> tuple[Outcome, list[Violation]]:
    """Create the case's files in ``cwd`` (empty), run it, and judge the outcome."""
    case.materialise(cwd)
    if case.argv is not None:
        run_dir = _run_dir(case.argv)
        existed = run_dir is not None and os.path.isdir(cwd / run_dir)  # False, not OSError, if too long
        outcome = run_cli(case.argv, cwd, timeout=timeout)
        if outcome.failed and run_dir is not None:
            _exempt_run_bookkeeping(cwd, run_dir, existed, outcome)
        found = cli_violations(case.argv, outcome, cwd)
    else:
        assert case.call is not None
        outcome = run_python(expect_nasforge_error(case.call), cwd, timeout=timeout)
        found = python_violations(outcome)
        if outcome.failed and outcome.new_files:
            found.append(Violation("files left", f"{case.family}: {', '.join(outcome.new_files)[:100]}"))
    if case.check is not None and not found:
        found.extend(case.check(cwd, outcome))
    return outcome, found


def _run_dir(argv: list[str]) -> str | None:
    if "--run-dir" in argv[:-1]:
        return argv[argv.index("--run-dir") + 1]
    if argv[:1] == ["resume"] and len(argv) > 1:
        return argv[1]
    return None


#: Files a run keeps in its directory by design: the journal, its lock (never deleted, see
#: nasforge.run.run_lock), torn fragments saved aside, a one-shot run's interrupted journals.
BOOKKEEPING = ("journal.jsonl", "run.lock", "journal.jsonl.torn-", "journal.interrupted-")


def _exempt_run_bookkeeping(cwd: Path, run_dir: str, existed: bool, outcome: Outcome) -> None:
    """A failed command may leave a run directory's bookkeeping where a run exists.

    A run exists if the directory was there before the command, or if the command started
    the run (its journal holds a trial: that is what ``resume`` continues from). A failed
    command that created a run directory and recorded nothing still counts as leaving files.
    """
    if not existed:
        try:
            text = (cwd / run_dir / "journal.jsonl").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if '"type": "trial"' not in text:
            return
    prefix = run_dir.rstrip("/") + "/"
    outcome.new_files = [
        p
        for p in outcome.new_files
        if not (
            p.startswith(prefix) and "/" not in p[len(prefix) :] and p[len(prefix) :].startswith(BOOKKEEPING)
        )
    ]


# --- small generators -----------------------------------------------------------------


def option_names(kind: str, name: str) -> list[str]:
    """The options a registered class accepts (keyword-only parameters and config fields)."""
    import attrs

    from nasforge.kernel.registry import get_registry

    cls = get_registry().get(kind, name)
    params = inspect.signature(cls).parameters
    names = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    config = getattr(cls, "config_class", None)
    if config is not None and attrs.has(config):
        names += [f.name for f in attrs.fields(config)]
    return sorted(set(names))


def option_item(src: Source, keys: list[str]) -> str:
    """``key=value`` text for ``-o``/``--evaluator-option``/``--build-option``."""
    key = src.choice(
        [*keys, *keys, "", "x", "population-size", "POPULATION_SIZE", " C", "a.b", "seed", "space"]
    )
    value = option_value(src)
    form = src.integer(0, 9)
    if form == 0:
        return key
    if form == 1:
        return f"={value}"
    return f"{key}={value}"


def build_item(src: Source, space: str) -> str:
    """A network option; numbers are tiny or absurd, never large enough to be slow."""
    keys = {
        "nb201": ["C", "N", "num_classes", "in_channels"],
        "darts": ["C", "layers", "num_classes", "auxiliary"],
    }
    keys["toy"] = ["in_features", "width", "num_classes"]
    key = src.choice([*keys[space], "x", "c", "dataset", "drop_path"])
    kind = src.integer(0, 5)
    if kind <= 1:
        value = str(src.choice((-2, -1, 0, 1, 2, 3, 4)))
    elif kind == 2 and key not in ("N", "layers"):  # a loop of 10**9 cells would be slow, not wrong
        value = src.choice(HUGE_INTS)
    elif kind == 3:
        value = src.choice(("1.5", "4.0", "1e309", "NaN", "null", "true", '"4"', "[4]", '{"a": 1}', "x", ""))
    elif kind == 4:
        value = src.choice((deep_json(5000, "[", closed=True), "9" * 5000, "-0", "0x4"))
    else:
        value = option_value(src) if key not in ("N", "layers") else src.choice(("-1", "0", "x"))
    return f"{key}={value}"


def _positional(text: str) -> list[str]:
    """``--`` first, so that a fuzzed string starting with '-' stays an argument."""
    return ["--", text.replace("\x00", "")]


def _search_base(src: Source, t: Templates) -> list[str]:
    """A fast ask/tell search: toy space or the NAS-Bench-201 table, a few trials."""
    strategy = src.choice(("rea", "random", "local"))
    trials = str(src.integer(1, 12))
    if src.chance(0.5):
        argv = [
            "search",
            "--space",
            "toy",
            "--strategy",
            strategy,
            "--evaluator",
            "toy",
            "--budget-trials",
            trials,
        ]
    else:
        dataset = src.choice(("cifar10", "cifar100", "imagenet16-120"))
        argv = ["search", "--space", "nb201", "--strategy", strategy, "--evaluator", "nb201-table"]
        argv += ["--dataset", dataset, "--budget-trials", trials]
    return [*argv, "-q", "--run-dir", "run"] + (["--json"] if src.chance(0.3) else [])


# --- CLI families ---------------------------------------------------------------------


def genotype_string_case(src: Source, t: Templates) -> Case:
    """A genotype string given to ``export`` or ``score`` (and so to ``space.parse``)."""
    space = src.choice(("nb201", "darts", "toy"))
    others = [v for k, v in t.genotype_texts.items() if k != space]
    text = genotype_text(src, t.spaces[space], others)
    files: dict[str, bytes | None] = {}
    if src.chance(0.1):  # a string that is also the name of an existing file
        files = {"g.safetensors": t.genotype_files[space]}
    mode = src.integer(0, 99)
    if mode < 68:
        argv = ["export", "--space", space, "--no-onnx", "--out", "o"] + (
            ["--json"] if src.chance(0.3) else []
        )
    elif mode < 97:
        argv = ["score", "--space", space, "-m", "params", "--no-cache", "-q", "--batch-size", "2"]
        argv += TINY_BUILD[space]
    else:
        argv = [
            "export",
            "--space",
            space,
            "--out",
            "o",
            "--input-shape",
            TINY_SHAPE[space],
            *TINY_BUILD[space],
        ]
    return Case(
        "genotype string", [*argv, *_positional(text)], files=files, setup="g.safetensors" if files else ""
    )


def option_case(src: Source, t: Templates) -> Case:
    """``-o``, ``--evaluator-option`` and ``--space-option`` values of an ask/tell search."""
    argv = _search_base(src, t)
    strategy, space = argv[argv.index("--strategy") + 1], argv[argv.index("--space") + 1]
    evaluator = argv[argv.index("--evaluator") + 1]
    for _ in range(src.integer(1, 2)):
        flag = src.choice(("-o", "-o", "-o", "--evaluator-option", "--space-option"))
        keys = {
            "-o": option_names("strategy", strategy),
            "--evaluator-option": option_names("evaluator", evaluator),
            "--space-option": option_names("space", space),
        }[flag]
        argv += [flag, option_item(src, keys)]
    return Case("strategy/evaluator option", argv)


def one_shot_option_case(src: Source, t: Templates) -> Case:
    """An option of a one-shot strategy (DARTS, PR-DARTS, NASI) on a tiny supernet."""
    strategy = src.choice(("darts", "darts", "prdarts", "nasi"))
    tiny = NASI_TINY if strategy == "nasi" else ONE_SHOT_TINY
    argv = ["search", "--space", "nb201", "--strategy", strategy, "--dataset", "digits", *tiny]
    keys = [k for k in option_names("strategy", strategy) if k not in ("progress",)]
    keys += ["order", "epochs", "train_portion", "supernet", "preset"]
    item = option_item(src, keys)
    if item.split("=", 1)[0] in ("epochs", "steps", "max_batches", "calibration_samples"):
        value = item.split("=", 1)[1] if "=" in item else ""
        if value.isdigit() and (
            len(value) > 1 or int(value) > 3
        ):  # a long valid run is not a finding, only slow
            item = item.split("=", 1)[0] + "=" + src.choice(("0", "-1", "x"))
    return Case("one-shot option", [*argv, "-o", item, "-q", "--run-dir", "run"])


def search_args_case(src: Source, t: Templates) -> Case:
    """Budgets, seed, workers, executor, dataset and names of an ask/tell search."""
    argv = _search_base(src, t)
    space = argv[argv.index("--space") + 1]
    kind = src.integer(0, 8)
    if kind == 0:
        i = argv.index("--budget-trials") + 1
        argv[i] = src.choice(("0", "-1", "1", "3", "100000") if space == "toy" else ("0", "-1", "1", "3"))
    elif kind == 1:
        argv += ["--budget-seconds", src.choice(("0", "-1", "nan", "inf", "1e-9", "0.001", "1e308", "-inf"))]
    elif kind == 2:
        argv += ["--budget-sim-seconds", src.choice(("0", "-1", "nan", "1", "1e5", "inf", "1e-300"))]
    elif kind == 3:
        argv += [
            "--seed",
            src.choice(("-1", "4294967296", "18446744073709551616", "1" + "0" * 30, "-" + "9" * 30)),
        ]
    elif kind == 4:
        argv += ["--workers", src.choice(("1", "2", "3", "100"))]
    elif kind == 5:
        argv += [
            "--executor",
            src.choice(("inprocess", "", "proces", "ray ", "Process", "inprocess2", "threads")),
        ]
    elif kind == 6:
        i = argv.index("--strategy") + 1
        argv[i] = src.choice(("rea", "reaa", "", "Random", "darts", "nasi", "prdarts", "local "))
    elif kind == 7:
        argv[argv.index("--evaluator") + 1] = src.choice(
            ("toy", "nb201-table", "nb201-tabel", "", "short-train")
        )
        if argv[argv.index("--evaluator") + 1] == "short-train":  # keep a training evaluator to 2 trials
            argv[argv.index("--budget-trials") + 1] = "2"
            argv += ["--evaluator-option", "epochs=1"]
    else:
        if "--dataset" in argv:
            argv[argv.index("--dataset") + 1] = src.choice(
                ("", "CIFAR10", "cifar", "digits", "imagenet16", "x")
            )
        else:
            argv += ["--dataset", src.choice(("", "cifar10", "digits", "x"))]
        if src.chance(0.3):
            argv[argv.index("--space") + 1] = src.choice(("darts", "nb2O1", "TOY", ""))
    return Case("search arguments", argv)


def build_option_case(src: Source, t: Templates) -> Case:
    """``--build-option`` values reaching ``space.build`` through score and export."""
    space = src.choice(("nb201", "nb201", "toy", "darts"))
    items: list[str] = []
    for _ in range(src.integer(1, 2)):
        items += ["--build-option", build_item(src, space)]
    base = TINY_BUILD[space] if src.chance(0.7) else []
    text = t.genotype_texts[space]
    if src.chance(0.8):
        argv = [
            "score",
            "--space",
            space,
            "-m",
            "params",
            "--no-cache",
            "-q",
            "--batch-size",
            "2",
            *base,
            *items,
        ]
    else:
        argv = ["export", "--space", space, "--out", "o", "--input-shape", TINY_SHAPE[space], *base, *items]
    return Case("build option", [*argv, *_positional(text)])


def score_args_case(src: Source, t: Templates) -> Case:
    """Data, labels, device, batch size, seed, metric names and cache of ``score``."""
    argv = ["score", "--space", "nb201", "--no-cache", "-q", "--batch-size", "4", *TINY_BUILD["nb201"]]
    metrics = ("params", "flops", "synflow", "grad_norm", "snip", "naswot", "jacob_cov", "ntk_trace", "knas")
    argv += ["-m", src.choice(metrics)]
    kind = src.integer(0, 7)
    if kind == 0:
        argv += [
            "--data",
            src.choice(("gaussian", "digits", "digits-random-labels", "cifar10", "", "gauss", "x")),
        ]
    elif kind == 1:
        argv += ["--labels", src.choice(("true", "random", "", "false", "TRUE", "none"))]
    elif kind == 2:
        argv += [
            "--device",
            src.choice(("cpu", "cuda", "cuda:0", "meta", "mps", "", "cpu:1", "gpu", "xla", "cuda:-1")),
        ]
    elif kind == 3:
        argv[argv.index("--batch-size") + 1] = src.choice(("1", "2", "1000000000", "1000000000000", "9" * 20))
    elif kind == 4:
        argv += ["--seed", src.choice(("-1", "4294967296", "18446744073709551616", "1" + "0" * 30))]
    elif kind == 5:
        argv += ["-m", src.choice(("param", "", "PARAMS", "ensemble", "params,flops", "all", "synflow "))]
    elif kind == 6:
        argv.remove("--no-cache")
        argv += ["--cache", src.choice(("cache", "g.safetensors", "g.safetensors/sub", "c" * 300, "."))]
        return Case(
            "score arguments",
            [*argv, "--sample", "1"],
            files={"g.safetensors": t.genotype_files["nb201"]},
            setup="g.safetensors: a valid nb201 genotype file",
        )
    else:
        return Case("score arguments", [*argv, "--sample", src.choice(("0", "1", "2", "-1"))])
    return Case("score arguments", [*argv, *_positional(t.genotype_texts["nb201"])])


def export_args_case(src: Source, t: Templates) -> Case:
    """``--input-shape`` and ``--tolerance`` of export, and ``search --export``."""
    space = src.choice(("nb201", "toy"))
    kind = src.integer(0, 3)
    if kind <= 1:
        shape = src.choice(
            (
                TINY_SHAPE[space],
                "",
                "1",
                "0,3,8,8",
                "1x3x8x8",
                "-1,3,8,8",
                "1,3,8",
                "1,3,8,8,8",
                "a,b",
                "1,,3",
                "9" * 30 + ",3,8,8",
                "1,3,100000,100000",
                "1.5,3,8,8",
                " 1, 3, 8, 8 ",
                "1,4,8,8",
                "1,3,1,1",
                "1,9",
            )
        )
        argv = ["export", "--space", space, "--out", "o", "--input-shape", shape, *TINY_BUILD[space]]
        return Case("export arguments", [*argv, *_positional(t.genotype_texts[space])])
    if kind == 2:
        tolerance = src.choice(("1e-4", "0", "-1", "nan", "inf", "1e-30", "1e308"))
        argv = [
            "export",
            "--space",
            space,
            "--out",
            "o",
            "--input-shape",
            TINY_SHAPE[space],
            *TINY_BUILD[space],
        ]
        return Case(
            "export arguments", [*argv, "--tolerance", tolerance, *_positional(t.genotype_texts[space])]
        )
    argv = ["search", "--space", "nb201", "--strategy", "random", "--evaluator", "nb201-table"]
    argv += [
        "--budget-trials",
        "2",
        "-q",
        "--run-dir",
        "run",
        "--export",
        src.choice(("o", "g.safetensors", "o/x")),
    ]
    for _ in range(src.integer(0, 2)):
        argv += ["--build-option", build_item(src, "nb201")]
    files = {"g.safetensors": b"not a directory"} if "g.safetensors" in argv else {}
    return Case("export arguments", argv, files=files, setup="g.safetensors: a plain file" if files else "")


def safetensors_case(src: Source, t: Templates) -> Case:
    """A corrupt, foreign or subtly wrong genotype file given to inspect, export or score."""
    space = src.choice(("nb201", "darts", "toy"))
    data, what = mutate_safetensors(src, t.genotype_files[space], foreign_safetensors())
    name = src.choice(("g.safetensors", "g.safetensors", "g.safetensors", "g.bin", "g"))
    mode = src.integer(0, 9)
    if mode < 4:
        argv = ["inspect", name] + (["--json"] if src.chance(0.5) else [])
    elif mode < 7:
        argv = ["export", name, "--no-onnx", "--out", "o"]
    elif mode < 9:
        argv = ["score", name, "--space", space, "-m", "params", "--no-cache", "-q", "--batch-size", "2"]
        argv += TINY_BUILD[space]
    else:
        argv = ["export", name, "--out", "o", "--input-shape", TINY_SHAPE[space], *TINY_BUILD[space]]
    return Case(
        "safetensors file",
        argv,
        files={name: data},
        setup=f"{name}: {space} genotype file, {what}",
        check=_codes_check(name, data) if argv[0] in ("inspect", "export") else None,
    )


def _codes_check(name: str, data: bytes) -> Check:
    """A file with a name code outside its vocabulary must not load (issue 8, item 11)."""

    def check(_cwd: Path, outcome: Outcome) -> list[Violation]:
        if outcome.code == 0 and codes_out_of_range(data):
            return [Violation("wrong answer", "an out-of-range op code was decoded instead of refused")]
        return []

    return check


def codes_out_of_range(data: bytes) -> bool:
    """True when a well-formed genotype file holds a name code outside ``names``."""
    import struct

    try:
        header, buffer = read_safetensors(data)
        names = json.loads(header["__metadata__"]["names"])
        info, kinds_info = header["choices"], header["choice_is_name"]
        if info["dtype"] != "I64" or kinds_info["dtype"] != "U8":
            return False
        a, b = info["data_offsets"]
        codes = [struct.unpack("<q", buffer[i : i + 8])[0] for i in range(a, b, 8)]
        ka, kb = kinds_info["data_offsets"]
        kinds = list(buffer[ka:kb])
    except Exception:  # noqa: BLE001 - not well-formed: the library's own checks apply
        return False
    return len(codes) == len(kinds) and any(
        k == 1 and not 0 <= c < len(names) for c, k in zip(codes, kinds, strict=True)
    )


def journal_case(src: Source, t: Templates) -> Case:
    """A torn, reordered, foreign, tampered or empty journal given to resume and friends."""
    # a one-shot resume retrains its supernet (about half a second): one input in ten
    name = "nb201-darts" if src.chance(0.1) else src.choice(("toy-rea", "nb201-rea", "nb201-local"))
    base = t.unfinished(name) if src.chance(0.4) else t.journals[name]
    others = [v for k, v in t.journals.items() if k != name]
    data, what = mutate_journal(src, base, others)
    mode = src.integer(0, 19)
    check = None
    if mode < 11:
        argv = ["resume", "run", "-q"] + (["--json"] if src.chance(0.5) else [])
        check = _second_resume_check
    elif mode < 14:
        argv = ["inspect", "run"] + (["--json"] if src.chance(0.5) else [])
    elif mode < 17:
        argv = ["export", "run", "--no-onnx", "--out", "o"]
    else:
        argv = [*JOURNAL_RUNS[name], "-q", "--run-dir", "run"]
    state = "unfinished " if base is not t.journals[name] else ""
    setup = f"run/journal.jsonl: {state}{name}, {what}"
    return Case("journal", argv, files={"run/journal.jsonl": data}, setup=setup, check=check)


def _second_resume_check(cwd: Path, outcome: Outcome) -> list[Violation]:
    """A resume that succeeded is repeatable, and the second one changes nothing.

    This is the shape of issue 8, item 1: a writer that appends after a torn line
    succeeds once and leaves a journal that the next resume cannot read.
    """
    if outcome.code != 0:
        return []
    before = (cwd / "run" / "journal.jsonl").read_bytes()
    again = run_cli(["resume", "run", "-q"], cwd)
    if again.code != 0:
        return [Violation("second resume fails", _first(again), "the first resume exited 0")]
    if (cwd / "run" / "journal.jsonl").read_bytes() != before and b'"mode": "one-shot"' not in before:
        return [Violation("second resume changes the journal", "resume of a finished run appended records")]
    return []


def _first(outcome: Outcome) -> str:
    import re

    if outcome.exc_type:
        return f"{outcome.exc_type} at {outcome.location}"
    line = outcome.err_lines[0] if outcome.err_lines else f"exit {outcome.code}"
    return re.sub(r"\d+", "N", line)[:100]


def onnx_case(src: Source, t: Templates) -> Case:
    """A damaged ONNX model given to ``inspect``."""
    data, what = mutate_onnx(src, t.onnx, t.genotype_files["toy"])
    name = src.choice(("model.onnx", "model.onnx", "model.onnx", "m.ONNX", "model"))
    argv = ["inspect", name] + (["--json"] if src.chance(0.5) else [])
    return Case("onnx file", argv, files={name: data}, setup=f"{name}: a toy-space ONNX model, {what}")


def filesystem_scenarios(t: Templates, inspect_target: str = "run") -> list[Case]:
    """Paths that are the wrong kind of thing: files for directories and the reverse."""
    toy = [
        "search",
        "--space",
        "toy",
        "--strategy",
        "rea",
        "--evaluator",
        "toy",
        "--budget-trials",
        "3",
        "-q",
    ]

    def export(out: str) -> list[str]:
        return ["export", "--space", "toy", "--no-onnx", "--out", out, *_positional(t.genotype_texts["toy"])]

    journal = t.journals["toy-rea"].encode()
    scenarios: list[tuple[list[str], dict[str, bytes | None], str]] = [
        ([*toy, "--run-dir", "run"], {"run": b"x"}, "run: a plain file"),
        ([*toy, "--run-dir", "run"], {"run/journal.jsonl": None}, "run/journal.jsonl: a directory"),
        (["resume", "run", "-q"], {"run/journal.jsonl": None}, "run/journal.jsonl: a directory"),
        (["resume", "run", "-q"], {"run": journal}, "run: a plain file holding a journal"),
        (["resume", "run", "-q"], {"run": None}, "run: an empty directory"),
        (
            [*toy, "--run-dir", "run"],
            {"run/journal.jsonl": b""},
            "run/journal.jsonl: empty (killed at creation)",
        ),
        (
            ["resume", "run", "-q"],
            {"run/journal.jsonl": b""},
            "run/journal.jsonl: empty (killed at creation)",
        ),
        ([*toy, "--run-dir", "r" * 300], {}, ""),
        (export("o"), {"o": b"x"}, "o: a plain file"),
        (export("f/sub"), {"f": b"x"}, "f: a plain file"),
        (export("o" * 300), {}, ""),
        (["inspect", inspect_target], {"run": None}, "run: an empty directory"),
    ]
    return [Case("filesystem", argv, files=files, setup=setup) for argv, files, setup in scenarios]


def filesystem_case(src: Source, t: Templates) -> Case:
    target = src.choice(("run", "missing", "run/journal.jsonl"))
    return src.choice(filesystem_scenarios(t, target))


def correlate_case(src: Source, t: Templates) -> Case:
    """``correlate`` on a handful of architectures, one argument fuzzed."""
    argv = ["correlate", "--space", "nb201", "-m", "params", "--sample", "3", "--no-cache", "-q"]
    argv += ["--batch-size", "2", *TINY_BUILD["nb201"]]
    kind = src.integer(0, 4)
    files: dict[str, bytes | None] = {}
    if kind == 0:
        argv[argv.index("--space") + 1] = src.choice(("toy", "darts", "nb", ""))
    elif kind == 1:
        argv += ["--evaluator", src.choice(("toy", "short-train", "x", ""))]
    elif kind == 2:
        argv += ["--dataset", src.choice(("cifar100", "imagenet16-120", "x", "", "digits"))]
    elif kind == 3:
        argv += ["--plot", src.choice(("p.png", "p.xyz", "o/p.png", "f/p.png", "pdir", "p" * 300 + ".png"))]
        files = {"f": b"x", "pdir": None}
    else:
        argv[argv.index("--sample") + 1] = src.choice(("2", "4"))
    return Case("correlate", argv, files=files, setup="f: a plain file; pdir: a directory" if files else "")


def hnas_cache_case(src: Source, t: Templates) -> Case:
    """A torn or corrupt HNAS pool cache (the same torn-line hazard as the journal)."""
    data, what = mutate_journal(src, t.pool_cache, [])
    argv = [*HNAS_ARGS, "--run-dir", "r", "-o", "cache=pool.jsonl"]
    setup = f"pool.jsonl: {what}"
    return Case("hnas pool cache", argv, files={"pool.jsonl": data}, setup=setup, check=_cache_check(data))


def _cache_check(before: bytes) -> Check:
    """Every line a successful run added to the cache is a whole record.

    Lines that were already there (the fuzzed garbage) are the input, not the finding; a
    record glued onto a torn last line shows up as a new line that does not parse.
    """
    old = set(before.decode("utf-8", errors="replace").split("\n"))

    def check(cwd: Path, outcome: Outcome) -> list[Violation]:
        if outcome.code != 0 or not (cwd / "pool.jsonl").exists():
            return []
        lines = (cwd / "pool.jsonl").read_text(encoding="utf-8", errors="replace").split("\n")
        for line in lines[:-1]:
            if not line.strip() or line in old:
                continue
            try:
                json.loads(line)
            except ValueError:
                return [Violation("cache corrupt after success", "hnas pool cache: a new line is not JSON")]
        return []

    return check


def usage_case(src: Source, t: Templates) -> Case:
    """Input that Typer/click itself rejects (wrong types, unknown options, missing arguments)."""
    argv = src.choice(
        (
            ["search", "--budget-trials", "abc"],
            ["search", "--workers", "0"],
            ["search", "--nope"],
            ["export"],
            ["inspect"],
            ["resume"],
            ["bogus"],
            ["score", "--batch-size", "0"],
            ["--threads", "0", "spaces"],
            ["--threads", "x", "spaces"],
            ["correlate", "--sample", "1"],
            ["search", "--seed", "1.5"],
            ["spaces", "extra"],
        )
    )
    return Case("usage", list(argv))


# --- library (Python) families --------------------------------------------------------


def py_parse_case(src: Source, t: Templates, name: str | None = None) -> Case:
    """``space.parse`` of a fuzzed string of a random space (or of ``name``)."""
    name = name or src.choice(("nb201", "darts", "toy"))
    text = genotype_text(src, t.spaces[name], [v for k, v in t.genotype_texts.items() if k != name])
    return parse_case(t, name, text)


def parse_case(t: Templates, name: str, text: str) -> Case:
    space = t.spaces[name]
    return Case(
        "py: space.parse",
        call=lambda: _round_trip(space, text),
        call_text=f"load_space({name!r}).parse({text!r})",
    )


def _round_trip(space: Any, text: str) -> None:
    """Parse; on success the canonical form must parse back to the same genotype."""
    g = space.parse(text)
    space.validate(g)
    again = space.parse(space.format(g))
    if again != g:
        raise AssertionError(f"format/parse round trip changed {g} into {again}")


def py_options_case(src: Source, t: Templates) -> Case:
    """parse_options, then the spec and the strategy built from the options."""
    from nasforge.api import build_spec
    from nasforge.kernel.registry import get_registry
    from nasforge.kernel.run_context import RunContext
    from nasforge.run.construction import build_component
    from nasforge.tools.cli.options import parse_options

    strategy = src.choice(("rea", "random", "local", "darts", "prdarts", "nasi"))
    keys = option_names("strategy", strategy)
    items = [option_item(src, keys) for _ in range(src.integer(1, 2))]

    def call() -> None:
        options = parse_options(items)
        if strategy in ("darts", "prdarts", "nasi"):
            build_component("strategy", get_registry().get("strategy", strategy), RunContext(), options)
        else:
            spec = build_spec("nb201", strategy, "nb201-table", trials=5, strategy_options=options)
            spec.build(get_registry())

    return Case("py: options", call=call, call_text=f"parse_options({items!r}) -> strategy {strategy!r}")


def py_shape_case(src: Source, t: Templates) -> Case:
    from nasforge.tools.cli.options import parse_shape

    text = src.choice(("1,3,8,8", "", "1x3", "-1", "a", "1,,2", "9" * 5000, "1e3,2", " 1 , 2 ", "0"))
    if src.chance(0.5):
        text = src.text(STRUCTURAL, 12)
    return Case("py: parse_shape", call=lambda: parse_shape(text), call_text=f"parse_shape({text!r})")


def py_genotype_file_case(src: Source, t: Templates) -> Case:
    from nasforge.tools.export import inspect_file, load_genotype

    space = src.choice(("nb201", "darts", "toy"))
    data, what = mutate_safetensors(src, t.genotype_files[space], foreign_safetensors())
    use_inspect = src.chance(0.4)

    def call() -> None:
        if use_inspect:
            inspect_file("g.safetensors")
            return
        load_genotype("g.safetensors")
        if codes_out_of_range(data):
            raise AssertionError("an out-of-range op code was decoded instead of refused")

    fn = "inspect_file" if use_inspect else "load_genotype"
    return Case(
        "py: genotype file",
        call=call,
        call_text=f"{fn}('g.safetensors')",
        files={"g.safetensors": data},
        setup=f"g.safetensors: {space} genotype file, {what}",
    )


def py_onnx_case(src: Source, t: Templates) -> Case:
    from nasforge.tools.export import inspect_file

    data, what = mutate_onnx(src, t.onnx, t.genotype_files["toy"])
    return Case(
        "py: onnx file",
        call=lambda: inspect_file("model.onnx"),
        call_text="inspect_file('model.onnx')",
        files={"model.onnx": data},
        setup=f"model.onnx: {what}",
    )


def py_journal_case(src: Source, t: Templates) -> Case:
    from nasforge import api
    from nasforge.run.journal_file import JournalReader
    from nasforge.tools.export import inspect_file

    name = src.choice(sorted(t.journals))
    base = t.unfinished(name) if src.chance(0.4) else t.journals[name]
    data, what = mutate_journal(src, base, [v for k, v in t.journals.items() if k != name])
    how = src.choice(("JournalReader.of_run", "inspect_file", "api.resume", "api.resume"))
    if name == "nb201-darts" and how == "api.resume":
        how = "JournalReader.of_run"  # a one-shot resume retrains: too slow for this family
    fn = {
        "JournalReader.of_run": JournalReader.of_run,
        "inspect_file": inspect_file,
        "api.resume": api.resume,
    }[how]
    return Case(
        "py: journal",
        call=lambda: fn("run"),
        call_text=f"{how}('run')",
        files={"run/journal.jsonl": data},
        setup=f"run/journal.jsonl: {name}, {what}",
    )


Family = Callable[[Source, Templates], Case]

#: Families and their weights in the mixed corpus (about a fifth are library calls).
FAMILIES: dict[str, tuple[Family, int]] = {
    "genotype string": (genotype_string_case, 14),
    "strategy/evaluator option": (option_case, 12),
    "one-shot option": (one_shot_option_case, 2),
    "search arguments": (search_args_case, 6),
    "build option": (build_option_case, 7),
    "score arguments": (score_args_case, 3),
    "export arguments": (export_args_case, 3),
    "safetensors file": (safetensors_case, 12),
    "journal": (journal_case, 14),
    "onnx file": (onnx_case, 6),
    "filesystem": (filesystem_case, 4),
    "correlate": (correlate_case, 1),
    "hnas pool cache": (hnas_cache_case, 1),
    "usage": (usage_case, 1),
    "py: space.parse": (py_parse_case, 8),
    "py: options": (py_options_case, 4),
    "py: parse_shape": (py_shape_case, 1),
    "py: genotype file": (py_genotype_file_case, 5),
    "py: onnx file": (py_onnx_case, 2),
    "py: journal": (py_journal_case, 5),
}


def make_case(seed: int, index: int, templates: Templates) -> Case:
    """Input ``index`` of the corpus of ``seed`` (independent of every other index)."""
    src = SeededSource(f"{seed}:{index}")
    total = sum(w for _, w in FAMILIES.values())
    pick = src.integer(0, total - 1)
    for family, weight in FAMILIES.values():
        if pick < weight:
            return family(src, templates)
        pick -= weight
    raise AssertionError("unreachable")
