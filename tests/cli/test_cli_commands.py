from __future__ import annotations

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("command", ["spaces", "strategies", "evaluators", "datasets", "metrics", "plugins"])
def test_listings_json(cli, command: str) -> None:
    document = cli(command, "--json", ok=True).json()
    assert document["schema"] == f"nasforge.{command}/1"
    assert isinstance(document["items"], list) and document["items"]


def test_spaces_lists_toy(cli) -> None:
    toy = next(r for r in cli("spaces", "--json", ok=True).json()["items"] if r["name"] == "toy")
    assert "enumerate" in toy["capabilities"]


@pytest.mark.slow
def test_search_json_then_export_and_inspect(cli, tmp_path) -> None:
    run = tmp_path / "run"
    result = cli(
        "search",
        "--space",
        "toy",
        "--evaluator",
        "toy",
        "--strategy",
        "random",
        "--budget-trials",
        "20",
        "-q",
        "--json",
        "--run-dir",
        run,
        ok=True,
    ).json()
    assert result["trials"] == 20
    exported = cli("export", run, "--out", tmp_path / "x", "--no-onnx", "--json", ok=True).json()
    assert exported["text"] == result["best"]
    info = cli("inspect", exported["genotype"], "--json", ok=True).json()
    assert info["text"] == result["best"] and info["space"] == "toy"
    info = cli("inspect", run, "--json", ok=True).json()
    assert info["finished"] and info["trials"] == 20


def test_help_teaches(cli) -> None:
    out = cli("search", "--help", ok=True).out
    assert "resume" in out and "--budget-trials" in out and "one-shot" in out.lower()


@pytest.mark.slow
def test_threads_option_sets_torch_threads(cli) -> None:
    import torch

    try:
        cli("--threads", "2", "spaces", "--json", ok=True)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
    assert cli("--threads", "0", "spaces").code == 2


@pytest.mark.slow
def test_ask_tell_search_with_real_short_training(cli, tmp_path) -> None:
    """The core's `short-train` evaluator trains each candidate on digits (no table needed)."""
    out = cli(
        "search",
        "--space",
        "nb201",
        "--strategy",
        "random",
        "--evaluator",
        "short-train",
        "--dataset",
        "digits",
        "--budget-trials",
        "2",
        "--evaluator-option",
        'build={"C": 4, "N": 1}',
        "--evaluator-option",
        "epochs=1",
        "-q",
        "--json",
        "--run-dir",
        tmp_path,
        ok=True,
    ).json()
    assert out["objective"] == "valid_accuracy" and out["trials"] == 2
    assert 10.0 < out["value"] <= 100.0  # better than chance after one epoch
