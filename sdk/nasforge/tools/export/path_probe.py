"""Is this command-line argument a path on disk, or text (a genotype string)?

``Path(text).is_dir()`` raises ``OSError: File name too long`` for any string over 255
bytes, which every DARTS genotype string is, and ``ValueError`` for an embedded NUL. A
string that cannot be stat'ed names nothing on disk, whatever the reason, so it is text.
"""

from __future__ import annotations

import os
import stat
from enum import Enum


class PathKind(Enum):
    MISSING = "missing"  # no such path, or a string no filesystem would accept as one
    DIRECTORY = "directory"
    FILE = "file"  # a regular file, or anything else that exists and is not a directory


def probe_path(source: str | os.PathLike[str]) -> PathKind:
    """What ``source`` names on disk; never raises."""
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return PathKind.MISSING
    return PathKind.DIRECTORY if stat.S_ISDIR(mode) else PathKind.FILE
