"""One way to run the CLI in-process for every CLI test."""

from __future__ import annotations

import json
from collections.abc import Callable

import attrs
import pytest

from nasforge.cli import main


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
        assert "Traceback" not in self.err
        lines = [line for line in self.err.strip().splitlines() if line.strip()]
        assert len(lines) == 1, self.err
        for needle in needles:
            assert needle in lines[0], lines[0]


@pytest.fixture
def cli(capsys) -> Callable[..., CliRun]:
    def run(*argv: str, ok: bool = False) -> CliRun:
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

    return run
