"""The Ray executor gives the same search as in-process, and resumes the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nasforge import api
from nasforge.run.journal_file import JournalReader, journal_path


@pytest.fixture(scope="module")
def ray_session():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_matches_in_process(ray_session, tmp_path) -> None:
    common = dict(
        space="toy",
        strategy="rea",
        evaluator="toy",
        trials=20,
        seed=4,
        workers=2,
        strategy_options={"population_size": 5, "sample_size": 2},
    )
    on_ray = api.search(**common, executor="ray", run_dir=tmp_path / "ray")
    local = api.search(**common)
    assert [t.genotype for t in on_ray.history] == [t.genotype for t in local.history]
    assert [t.result for t in on_ray.history] == [t.result for t in local.history]
    assert JournalReader.of_run(tmp_path / "ray").header["spec"]["executor"] == "ray"


def test_ray_run_resumes(ray_session, tmp_path) -> None:
    common = dict(
        space="toy", strategy="random", evaluator="toy", trials=12, seed=1, workers=2, executor="ray"
    )
    full = api.search(**common, run_dir=tmp_path / "full")
    lines = journal_path(tmp_path / "full").read_text().splitlines(keepends=True)
    (tmp_path / "cut").mkdir()
    journal_path(tmp_path / "cut").write_text("".join(lines[:6]))  # header + 5 trials
    resumed = api.resume(tmp_path / "cut")
    assert [t.genotype for t in resumed.history] == [t.genotype for t in full.history]


def test_registered_without_importing_ray() -> None:
    from nasforge import get_registry

    assert get_registry().get("executor", "ray").name == "ray"


def test_trial_resources_are_refused_before_ray_starts() -> None:
    """A trial no task could run is refused in one line, before Ray is imported or started,
    through the executor options any caller passes (the CLI's flags end there too)."""
    from nasforge.kernel.errors import NasforgeError
    from nasforge.kernel.registry import get_registry
    from nasforge.run.executors import ExecutorOptions, build_executor
    from nasforge_ray.executor import RayExecutor

    for options, needle in (
        ({"trial_gpus": -1}, "trial GPUs must be >= 0"),
        ({"trial_cpus": 0}, "trial CPUs"),
    ):
        with pytest.raises(NasforgeError, match=needle):
            build_executor(RayExecutor, 1, ExecutorOptions(options=options), get_registry())
    with pytest.raises(NasforgeError, match="executor 'ray' has no option 'adress'"):
        build_executor(RayExecutor, 1, ExecutorOptions(options={"adress": "x"}), get_registry())


def test_gpus_this_machine_lacks_are_refused_before_a_local_instance_starts(
    monkeypatch: pytest.MonkeyPatch, cli: Any, tmp_path: Path
) -> None:
    """Was Ray's own log lines (a token warning, "Started a local Ray instance"), then the
    refusal: the GPUs are counted before Ray starts."""
    import ray
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    started: list[object] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: started.append(kw))
    argv = ("--space", "toy", "--strategy", "random", "--evaluator", "toy", "--budget-trials", "2")
    run = cli("search", *argv, "--executor", "ray", "--trial-gpus", "1", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("the Ray executor cannot place a trial: 1 GPU per trial, this machine has 0")
    assert not started and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--space", "nb201", "--evaluator", "nosuch"), "unknown evaluator 'nosuch'"),
        (("--space", "nb201", "--dataset", "nosuch"), "unknown nb201 dataset 'nosuch'"),
        (
            (
                "--space",
                "act-mlp",
            ),
            "evaluator 'nb201-table' works on space 'nb201', not 'act-mlp'",
        ),
    ],
)
def test_correlate_refuses_its_evaluator_before_ray_starts(
    monkeypatch: pytest.MonkeyPatch, cli: Any, argv: tuple[str, ...], needle: str
) -> None:
    """Was Ray's own log lines, then the refusal: the evaluator is built before the executor."""
    import ray

    started: list[object] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: started.append(kw))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cli("correlate", *argv, "--sample", "3", "--executor", "ray").assert_one_line_error(needle)
    assert not started
