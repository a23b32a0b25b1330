"""Running the CLI in-process, and the one-line error a refusal must be, for every test.

The ``cli`` fixture (``tests/conftest.py``) wraps :func:`run_cli`; :func:`one_line` also
checks the stderr of a CLI run in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import json

import attrs
import pytest

from nasforge.tools.cli import main


def one_line(stderr: str) -> str:
    """The only non-blank line of ``stderr``; fails when there are more, or a traceback."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@attrs.frozen
class CliRun:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)

    def assert_one_line_error(self, *needles: str) -> None:
        """Bad input: exit status 2 and one line on stderr naming the cause, no traceback."""
        assert self.code == 2, (self.code, self.err)
        line = one_line(self.err)
        for needle in needles:
            assert needle in line, line


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object, ok: bool = False) -> CliRun:
    """``nasforge ARGV`` in this process: its exit status and what it printed.

    With ``ok``, fails unless the exit status is 0 (showing stderr).
    """
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    result = CliRun(code, out, err)
    if ok:
        assert code == 0, err
    return result


def run_main(*argv: object) -> tuple[int, str, str]:
    """``nasforge ARGV`` in this process without pytest's capture: (exit status, stdout, stderr).

    For module-scoped fixtures, which cannot use ``capsys``.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in argv])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()
