"""Exports that appear whole or not at all: several files, and the directory they go in.

:func:`nasforge.kernel.files.atomic_path` makes one file appear only when complete. An
export bundle is two files (genotype and ONNX model) whose meaning is "these belong
together", so a refused parity check must leave neither, and a directory the export
created for them must not stay behind empty, looking like a run that wrote nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from nasforge.kernel.errors import ExportError
from nasforge.kernel.files import atomic_path, output_directory


@contextlib.contextmanager
def files_together(*targets: Path) -> Iterator[tuple[Path, ...]]:
    """Temporary siblings of ``targets``, renamed onto them only if the body succeeds.

    If the body raises, no target changes. The renames happen one after another, so if a
    later one fails (a disk error between two renames), the files already renamed are
    removed again: a failure leaves none of the new files.
    """
    staged: dict[Path, int] = {}
    body_done = False
    try:
        with contextlib.ExitStack() as stack:
            tmps = tuple(stack.enter_context(atomic_path(t)) for t in targets)
            yield tmps
            body_done = True
            staged = {t: os.stat(tmp).st_ino for t, tmp in zip(targets, tmps, strict=True)}
    except BaseException:
        if body_done:
            _remove_renamed(staged)
        raise


def _remove_renamed(staged: dict[Path, int]) -> None:
    """Remove the targets that are already our new files (same inode as the staged copy)."""
    for target, inode in staged.items():
        with contextlib.suppress(OSError):
            if os.stat(target).st_ino == inode:
                target.unlink()


def write_error(target: Path, exc: OSError) -> ExportError:
    """One line for a write the filesystem refused (full disk, read-only, not a folder).

    Names the file the error is about, if the error knows it, as the user would know it:
    a staged temporary (``.NAME.XXXX.part``, see :mod:`nasforge.kernel.files`) by ``NAME``,
    also a temporary of a temporary (the ONNX parity probe written beside a staged file).
    """
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = target
    if exc.filename:
        where = Path(os.fsdecode(exc.filename))
        while where.name.startswith(".") and where.name.endswith(".part") and where.name.count(".") >= 3:
            where = where.with_name(where.name[1:].rsplit(".", 2)[0])
    return ExportError(f"cannot write {where}: {reason}")


__all__ = ["files_together", "output_directory", "write_error"]
