"""The one line the CLI prints for an error a user's input or environment caused.

The promise is one line on stderr and exit status 2, so everything that reaches the user
is flattened (a message may quote input holding newlines) and shortened (it may quote a
128 KiB argument). Filesystem errors carry no word for what was being done, only an
errno; the errno says enough to tell a user what to fix ("cannot use a file as a
directory: Not a directory: runs/x/journal.jsonl").
"""

from __future__ import annotations

import errno
import os

import typer

#: Longest line printed; longer messages (echoed input) are cut in the middle.
MAX_CHARS = 1000
#: Longest path shown in a filesystem error.
MAX_PATH_CHARS = 200

_WHAT: dict[int, str] = {
    errno.ENOSPC: "write",
    errno.EDQUOT: "write",
    errno.EROFS: "write",
    errno.EFBIG: "write",
    errno.EACCES: "access",
    errno.EPERM: "access",
    errno.EISDIR: "use a directory as a file",
    errno.ENOTDIR: "use a file as a directory",
    errno.EEXIST: "create",
    errno.ENOENT: "find",
    errno.ENAMETOOLONG: "use that name",
    errno.EMFILE: "open another file",
    errno.ENFILE: "open another file",
    errno.ELOOP: "follow the symbolic links",
    errno.ENOTEMPTY: "replace a non-empty directory",
}


def one_line(message: str, limit: int = MAX_CHARS) -> str:
    """``message`` with line breaks escaped and its middle cut if it is too long."""
    flat = message.strip().replace("\r", "\\r").replace("\n", "\\n")
    if len(flat) <= limit:
        return flat
    half = (limit - 5) // 2
    return f"{flat[:half]} ... {flat[-half:]}"


def os_error_line(exc: OSError) -> str:
    """``cannot <what>: <strerror>: <path>`` for any OSError (permission, ENOSPC, ...)."""
    what = _WHAT.get(exc.errno or -1, "access")
    reason = exc.strerror or str(exc) or type(exc).__name__
    paths = [_path(p) for p in (exc.filename, exc.filename2) if p is not None]
    return one_line(": ".join([f"cannot {what}", reason, *([" -> ".join(paths)] if paths else [])]))


def usage_error_line(exc: typer.TyperException) -> str:
    """Click's error and the command's usage on one line (Click would print a box of five)."""
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return exc.format_message()
    usage = ctx.get_usage().strip().removeprefix("Usage:").strip()
    return f"{exc.format_message().strip()} (usage: {usage}; see '{ctx.command_path} --help')"


def resource_error_line(exc: MemoryError | RecursionError) -> str:
    """An input so large or so deeply nested that Python ran out of memory or stack."""
    kind = "memory" if isinstance(exc, MemoryError) else "recursion depth"
    return f"input too large or too deeply nested: ran out of {kind}"


def _path(value: object) -> str:
    text = os.fsdecode(value) if isinstance(value, str | bytes | os.PathLike) else str(value)
    text = repr(text)[1:-1] if not text.isprintable() else text
    if len(text) <= MAX_PATH_CHARS:
        return text
    return f"{text[: MAX_PATH_CHARS // 2]}...{text[-MAX_PATH_CHARS // 2 :]}"
