"""Files that appear only when complete: write to a temporary sibling, fsync, rename.

A process killed, a full disk or a failed check in the middle of producing a file must
never leave something that looks finished. Every file nasforge produces (exports, plots,
caches, result tables) goes through here: the temporary name lives in the same directory
(so the rename is atomic on POSIX), and on any error it is removed and the target is left
as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Permissions of produced files: what ``open()`` would give under a usual umask, not the
#: 0600 that ``mkstemp`` uses (exports are meant to be shared).
FILE_MODE = 0o644


def _umasked(mode: int) -> int:
    current = os.umask(0)
    os.umask(current)
    return mode & ~current


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], *, mode: int = FILE_MODE) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    The caller writes the whole file to the yielded path (any writer that takes a path:
    safetensors, ``torch.onnx.export``, ``savefig``). If the body raises, the temporary
    file is deleted and ``target`` is untouched.
    """
    target = Path(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # the data must be on disk before the name is
            os.fsync(fh.fileno())
        os.chmod(tmp, _umasked(mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_directory(target.parent)


def atomic_write_bytes(target: str | os.PathLike[str], data: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``data`` to ``target`` so that readers see the old file or the whole new one."""
    with atomic_path(target, mode=mode) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(
    target: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", mode: int = FILE_MODE
) -> None:
    atomic_write_bytes(target, text.encode(encoding), mode=mode)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
