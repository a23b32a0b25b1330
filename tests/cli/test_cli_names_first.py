"""A misspelt component name is the first and only thing a search says: nothing is announced,
read or trained before it (``--space nb210`` once chose short-train and loaded digits first)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--space", "nb210"), "unknown search space 'nb210'; did you mean 'nb201'?"),
        (("--space", "nb210", "--evaluator", "short-train"), "unknown search space 'nb210'"),
        (("--evaluator", "nb201-tabel"), "unknown evaluator 'nb201-tabel'; did you mean 'nb201-table'?"),
        (
            ("--strategy", "prerank", "-o", "metric=synflw"),
            "unknown metric 'synflw'; did you mean 'synflow'?",
        ),
    ],
)
def test_an_unknown_name_is_the_only_line(cli, tmp_path, args: tuple[str, ...], needle: str) -> None:
    result = cli("search", *args, "--budget-trials", "2", "--run-dir", tmp_path / "run")
    result.assert_one_line_error(needle)  # one line: no evaluator chosen, no data loaded before it
    assert not (tmp_path / "run").exists()
