"""The GPU script's every step, run on the CPU at a small size, so that the GPU machine is
never the first place it runs: each step finishes (none reports a failure), its figures
are recorded keyed by settings and code version, and bad input is one line and exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gpu_metrics  # noqa: E402


@pytest.mark.slow
def test_every_default_step_runs_small_on_the_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = gpu_metrics.main(["--device", "cpu", "--small", "--workers", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    records = [json.loads(line) for line in (tmp_path / "gpu_metrics.jsonl").read_text().splitlines()]
    assert [r["settings"]["step"] for r in records] == list(gpu_metrics.DEFAULT)
    assert all(r["status"] == "ok" and r["code"] and r["key"] for r in records)
    by_step = {r["settings"]["step"]: r for r in records}
    # the figures the GPU run reports are there (small and on the CPU: not the targets)
    assert by_step["cuda-synflow"]["agreement"]["n_bad"] == 0
    assert by_step["stages"]["stages"]["networks"] > 0 and by_step["stages"]["stages"]["build"] > 0
    assert by_step["real-oom"]["pass"]["retries"] and by_step["real-oom"]["stack"]["splits"]
    assert by_step["real-oom"]["pass"]["equal"] and by_step["real-oom"]["stack"]["equal"]
    assert set(gpu_metrics.NTK) <= set(by_step["ntk"])
    assert "summary:" in out


def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert gpu_metrics.main(["--steps", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1


def test_the_diagnostic_steps_run_small_on_the_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = ["six-each", "ntk-agree"]
    code = gpu_metrics.main(
        ["--device", "cpu", "--small", "--steps", ",".join(steps), "--out", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    records = {
        r["settings"]["step"]: r
        for r in map(json.loads, (tmp_path / "gpu_metrics.jsonl").read_text().splitlines())
    }
    assert list(records) == steps and all(r["status"] == "ok" for r in records.values())
    each = records["six-each"]
    for name in gpu_metrics.SIX:
        assert each[name]["alone"]["cells"] > 0 and each[name]["stacked"]["cells"] > 0
    assert each["grasp_profile"]["aten_calls"] > 0
    # the CPU against itself: the same scores
    assert records["ntk-agree"]["agreement"]["common"] == 2
    assert records["ntk-agree"]["agreement"]["n_bad"] == 0
