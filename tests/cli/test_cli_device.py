"""``--device`` reaches the one-shot strategies' training loops (issue 9).

Everywhere: cpu given explicitly is the default, to the bit, and asking for CUDA where
torch sees none (simulated by patching ``torch.cuda.is_available``) is one clear line.
On a GPU machine, ``pytest -m gpu`` also runs the tiny searches on CUDA.
"""

from __future__ import annotations

import pytest
import torch

from nasforge import NasforgeError, get_registry
from nasforge.run.builtin_datasets import load_digits
from nasforge.run.journal_file import JournalReader

ONE_SHOT = ("darts", "prdarts", "nasi")
TINY = {
    "darts": {"supernet": {"C": 4, "N": 1}, "epochs": 2, "max_batches": 2, "batch_size": 16},
    "prdarts": {"supernet": {"C": 4, "N": 1}, "epochs": 2, "max_batches": 2, "batch_size": 16},
    "nasi": {"supernet": {"C": 4, "N": 1}, "steps": 3, "calibration_samples": 2, "batch_size": 16},
}


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without CUDA, whatever this one has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def _fit(name: str, **options):
    registry = get_registry()
    strategy = registry.get("strategy", name)(seed=3, progress=False, **TINY[name], **options)
    return strategy.fit(registry.space("nb201"), load_digits())


def _numbers(outcome) -> list:
    return [(t.genotype, t.result.objectives) for t in outcome.history]


@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_SHOT)
def test_cpu_given_explicitly_is_the_default(name: str) -> None:
    default, cpu = _fit(name), _fit(name, device="cpu")
    assert cpu.best == default.best
    assert _numbers(cpu) == _numbers(default)


@pytest.mark.parametrize("name", ONE_SHOT)
def test_cuda_without_cuda_is_refused_when_the_strategy_is_made(name: str, no_cuda: None) -> None:
    with pytest.raises(NasforgeError, match="CUDA is not available"):
        get_registry().get("strategy", name)(seed=0, device="cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ONE_SHOT)
def test_the_searches_run_on_cuda(name: str) -> None:
    outcome = _fit(name, device="cuda")
    get_registry().space("nb201").validate(outcome.best)
    assert len(outcome.history) == (TINY[name].get("epochs") or TINY[name]["steps"])


@pytest.mark.slow
def test_search_device_reaches_the_one_shot_strategy_and_the_journal(cli, tmp_path) -> None:
    tiny = ["-o", 'supernet={"C": 4, "N": 1}', "-o", "epochs=2", "-o", "max_batches=2", "-o", "batch_size=16"]
    args = [
        "search",
        "--space",
        "nb201",
        "--strategy",
        "darts",
        "--train-data",
        "digits",
        *tiny,
        "-q",
        "--json",
    ]
    with_cpu = cli(*args, "--device", "cpu", "--run-dir", tmp_path / "cpu", ok=True).json()
    default = cli(*args, "--run-dir", tmp_path / "default", ok=True).json()
    assert with_cpu["best"] == default["best"]
    spec = JournalReader.of_run(tmp_path / "cpu").header["spec"]
    # a field of the spec, handed to the strategy through the run context, not an option
    assert spec["device"] == "cpu" and "device" not in spec["strategy_options"]
    assert spec["train_data"] == "digits"
    assert "device" not in JournalReader.of_run(tmp_path / "default").header["spec"]  # none named


def test_search_on_cuda_without_cuda_is_one_line(cli, tmp_path, no_cuda: None) -> None:
    cli(
        "search", "--space", "nb201", "--strategy", "nasi", "--device", "cuda", "--run-dir", tmp_path
    ).assert_one_line_error("--device cuda", "CUDA is not available")
    assert not (tmp_path / "journal.jsonl").exists()


def test_a_device_that_is_no_device_is_one_line(cli, tmp_path) -> None:
    cli("search", "--strategy", "darts", "--device", "gpu0", "--run-dir", tmp_path).assert_one_line_error(
        "--device gpu0"
    )


def test_device_for_an_evaluator_without_one_is_one_line(cli, tmp_path) -> None:
    cli("search", "--device", "cpu", "--run-dir", tmp_path).assert_one_line_error(
        "--device cpu: strategy '", "and evaluator 'nb201-table' take no device"
    )


@pytest.mark.slow
def test_device_reaches_an_ask_tell_evaluator_that_trains(cli, tmp_path) -> None:
    cli(
        "search",
        "--space",
        "nb201",
        "--strategy",
        "random",
        "--evaluator",
        "short-train",
        "--evaluator-option",
        "epochs=1",
        "--evaluator-option",
        'build={"C": 4, "N": 1}',
        "--budget-trials",
        "1",
        "--device",
        "cpu",
        "-q",
        "--run-dir",
        tmp_path,
        ok=True,
    )
    header = JournalReader.of_run(tmp_path).header
    assert header["spec"]["device"] == "cpu" and "device" not in header["spec"]["evaluator_options"]
    assert header["spec"]["train_data"] == "digits" and header["evaluator"]["dataset"] == "digits"


def test_search_help_explains_the_datasets_and_the_device(cli) -> None:
    text = " ".join(cli("search", "--help", ok=True).out.split())
    for flag in ("--train-data", "--benchmark-dataset", "--dataset", "--device"):
        assert flag in text
    assert "cuda:N" in text and "one-shot" in text
