"""``nasforge train`` under faults: each is one line and exit status 2, nothing finished is
lost, and the rerun after the fault ends with the weights an uninterrupted training ends
with, bit for bit.

The faults: a full disk (a small tmpfs as root, else a file-size limit on a subprocess)
while a checkpoint is written and while the trained network is exported; a checkpoint
whose epoch counter was edited, one cut short, and one that is a pickle payload; data
that is a pickle payload; options no training survives (``--weight-decay 1e308``) or the
data does not fit (``--build-option num_classes=1`` on 4-class data); and the hidden
``.part`` files a killed export leaves, which the next export removes.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file

from nasforge.run.training.checkpointed import CHECKPOINT
from tests.cli_run import one_line, run_main
from tests.training.test_train_winner import NB201_SMALL, image_npz

EPOCHS = ("--epochs", "3")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A search on 4-class images, and its best trained uninterrupted (the reference)."""
    root = tmp_path_factory.mktemp("train-faults")
    data = image_npz(root / "blobs.npz", classes=4)
    run = root / "run"
    code, _, err = run_main(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "short-train",
        "--train-data", data, "--evaluator-option", "epochs=1", *NB201_SMALL, "--budget-trials", "2",
        "--run-dir", run, "-q",
    )  # fmt: skip
    assert code == 0, err
    code, _, err = run_main(
        "train", run, *EPOCHS, "--checkpoint-dir", root / "ref", "--export", root / "ref-x", "-q"
    )
    assert code == 0, err
    return {"data": data, "run": run, "ref": root / "ref", "ref_export": root / "ref-x"}


def _weights(checkpoint_dir: Path) -> dict[str, torch.Tensor]:
    state = torch.load(checkpoint_dir / CHECKPOINT, map_location="cpu", weights_only=True)
    assert int(state["epoch"]) == 3
    return dict(state["model"])


def _assert_same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def _failed_in_one_line(code: int, err: str, *needles: str) -> str:
    assert code == 2, err
    line = one_line(err)  # also: no warning or log line before it, no traceback
    for needle in needles:
        assert needle in line, line
    return line


# --- a full disk ------------------------------------------------------------------------------
def _can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and sys.platform.startswith("linux")


@contextlib.contextmanager
def _small_disk(where: Path, size: int) -> Iterator[Path]:
    """A directory on a tmpfs of ``size`` bytes (as root), unmounted afterwards."""
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _train_process(*argv: object, file_size_limit: int) -> tuple[int, str, str]:
    """``nasforge train`` in a process that may write files of at most ``file_size_limit`` bytes."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # crossing it is a write error, not a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    proc = subprocess.run(
        [sys.executable, "-m", "nasforge", "train", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NASFORGE_THREADS": "1"},
        preexec_fn=limit,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _full_disk_run(tmp_path: Path, size: int, *argv: object, place: str) -> tuple[int, str, Path]:
    """``train ARGV`` with ``place`` (``checkpoint`` or ``export``) on a disk that fills up."""
    if _can_mount():
        with _small_disk(tmp_path / "small", size) as small:
            target = small / place
            code, _, err = run_main(
                "train", *argv, f"--{place}-dir" if place == "checkpoint" else "--export", target
            )
            kept = tmp_path / f"kept-{place}"
            if target.exists():
                shutil.copytree(target, kept)
            return code, err, kept
    target = tmp_path / place  # the same partial write, where no tmpfs can be mounted
    flag = "--checkpoint-dir" if place == "checkpoint" else "--export"
    code, _, err = _train_process(*argv, flag, target, file_size_limit=size)
    return code, err, target


def test_a_full_disk_at_a_checkpoint_keeps_the_last_and_the_rerun_is_identical(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    size = (trained["ref"] / CHECKPOINT).stat().st_size
    code, err, kept = _full_disk_run(
        tmp_path, size * 3 // 2, trained["run"], *EPOCHS, "-q", place="checkpoint"
    )
    _failed_in_one_line(code, err, "cannot write the checkpoint", "the last one written is kept")
    state = torch.load(kept / CHECKPOINT, map_location="cpu", weights_only=True)
    assert int(state["epoch"]) == 1, "the first epoch's checkpoint is whole and kept"
    assert not [p for p in kept.iterdir() if p.name.endswith(".part")]
    code, _, err = run_main("train", trained["run"], *EPOCHS, "--checkpoint-dir", kept, "-q")
    assert code == 0, err
    _assert_same_weights(_weights(kept), _weights(trained["ref"]))


def test_a_full_disk_at_export_loses_nothing_and_the_rerun_is_identical(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    checkpoints = tmp_path / "ck"
    shutil.copytree(trained["ref"], checkpoints)  # the training is done; only the export is left
    argv = (trained["run"], *EPOCHS, "--checkpoint-dir", checkpoints, "-q")
    code, err, _ = _full_disk_run(tmp_path, 64 * 1024, *argv, place="export")
    _failed_in_one_line(code, err, "cannot write")
    _assert_same_weights(_weights(checkpoints), _weights(trained["ref"]))
    code, _, err = run_main("train", *argv, "--export", tmp_path / "x")
    assert code == 0, err
    ours, theirs = (load_file(d / "weights.safetensors") for d in (tmp_path / "x", trained["ref_export"]))
    _assert_same_weights(ours, theirs)


# --- damaged checkpoints ----------------------------------------------------------------------
def _damaged(trained: dict[str, Path], tmp_path: Path, how: str) -> Path:
    where = tmp_path / "ck"
    shutil.copytree(trained["ref"], where)
    path = where / CHECKPOINT
    if how == "edited epoch":
        state = torch.load(path, map_location="cpu", weights_only=True)
        state["epoch"] = 99
        torch.save(state, path)
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:5000])
    else:  # a pickle payload: unpickling it would run a command

        class Payload:
            def __reduce__(self) -> tuple[Any, ...]:
                return (os.system, ("echo this must never run",))

        torch.save({"format": "nasforge.train-checkpoint/2", "epoch": Payload()}, path)
    return where


@pytest.mark.parametrize(
    ("how", "needle"),
    [
        ("edited epoch", "does not match its checksum"),
        ("truncated", "is not a readable training checkpoint"),
        ("pickle payload", "is not a readable training checkpoint"),
    ],
)
def test_a_damaged_checkpoint_is_refused_and_kept(
    trained: dict[str, Path], tmp_path: Path, how: str, needle: str
) -> None:
    where = _damaged(trained, tmp_path, how)
    before = (where / CHECKPOINT).read_bytes()
    code, out, err = run_main("train", trained["run"], *EPOCHS, "--checkpoint-dir", where, "-q")
    _failed_in_one_line(code, err, needle, "--restart")
    assert "must never run" not in out + err
    assert (where / CHECKPOINT).read_bytes() == before, "nothing is overwritten"
    code, _, err = run_main("train", trained["run"], *EPOCHS, "--checkpoint-dir", where, "--restart", "-q")
    assert code == 0, err
    _assert_same_weights(_weights(where), _weights(trained["ref"]))


def test_data_that_is_a_pickle_payload_is_one_line_without_warnings(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, ("echo this must never run",))

    evil = tmp_path / "evil.pt"
    torch.save({"x": torch.zeros(8, 1, 8, 8), "y": Payload()}, evil)
    code, out, err = run_main(
        "train", trained["run"], "--train-data", evil, "--checkpoint-dir", tmp_path / "ck"
    )
    _failed_in_one_line(code, err, "holds Python objects other than tensors (posix.system)", "save x and y")
    assert "must never run" not in out + err and not (tmp_path / "ck").exists()


# --- options no training survives -------------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "needle"),
    [
        (("--weight-decay", "1e308"), "option 'weight_decay' must be <= 1"),
        (("--build-option", "num_classes=1"), "gives 1 outputs an example, but blobs has 4 classes"),
    ],
)
def test_an_option_no_training_survives_is_one_line_before_the_first_epoch(
    trained: dict[str, Path], tmp_path: Path, option: tuple[str, str], needle: str
) -> None:
    code, _, err = run_main("train", trained["run"], *EPOCHS, *option, "--checkpoint-dir", tmp_path / "ck")
    _failed_in_one_line(code, err, needle)
    assert not (tmp_path / "ck").exists(), "no empty checkpoint directory"
    code, _, err = run_main("train", trained["run"], *EPOCHS, "--checkpoint-dir", tmp_path / "ck", "-q")
    assert code == 0, err
    _assert_same_weights(_weights(tmp_path / "ck"), _weights(trained["ref"]))


# --- what a killed export leaves ---------------------------------------------------------------
def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_exports_part_files_are_removed_by_the_next(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "x"
    out.mkdir()
    pid = _dead_pid()
    left = [
        out / f".model.onnx.{pid}-k1ll3d.part",
        out / f"..model.onnx.{pid}-k1ll3d.part.{pid}-pr0be.part",
        out / f".weights.safetensors.{pid}-k1ll3d.part",
    ]
    for path in left:
        path.write_bytes(b"half a file")
    live = out / f".model.onnx.{os.getpid()}-l1ve.part"  # a writer still running: kept
    live.write_bytes(b"being written")
    code, _, err = run_main(
        "train", trained["run"], *EPOCHS, "--checkpoint-dir", trained["ref"], "--export", out, "-q"
    )
    assert code == 0, err
    assert not [p for p in left if p.exists()] and live.exists()
    assert {"model.onnx", "weights.safetensors", "genotype.safetensors"} <= {p.name for p in out.iterdir()}
