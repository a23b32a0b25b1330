"""Paths to a user's data, followed without ever raising a traceback.

A path can be a symbolic link that leads back to itself (``ln -s data.npz data.npz``), or
two links that point at each other. ``os.stat`` then fails with ``ELOOP`` and
:meth:`pathlib.Path.resolve` raises a bare ``RuntimeError`` (Python 3.11), which came out
as a 60-line traceback; ``Path.exists`` says False, which read as "no such file". Every
place that reads a data path asks here first, so a loop is one line that says what it is.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from nasforge.run.builtin_datasets.user_arrays import DataError


def is_link_loop(path: str | os.PathLike[str]) -> bool:
    """Whether following ``path`` (or a link on the way to it) never ends."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:  # an embedded NUL: no path at all, so no loop
        return False
    return False


def loop_error(path: str | os.PathLike[str]) -> DataError:
    """The one line for a path whose symbolic links lead back to themselves."""
    return DataError(
        f"{os.fspath(path)}: a symbolic link loop (following its links leads back to where they "
        "started), not a file or folder; point it at your data"
    )


def refuse_link_loop(path: str | os.PathLike[str]) -> None:
    """Raise :func:`loop_error` when ``path`` is a symbolic link loop."""
    if is_link_loop(path):
        raise loop_error(path)


def absolute_data_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with ``~`` expanded, made absolute and its links followed; a loop is a
    :class:`DataError` in one line, not the ``RuntimeError`` of :meth:`Path.resolve`."""
    where = Path(path).expanduser()
    refuse_link_loop(where)
    try:
        return where.resolve()
    except RuntimeError as exc:  # Python < 3.13 reports a loop this way
        raise loop_error(where) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise loop_error(where) from exc
        raise
