"""Training the chosen architecture from scratch (``nasforge train``, ``api.train``).

End to end from a small ``.npz`` (and from MNIST-1D where its extra is installed): search,
``nasforge train RUN_DIR --export out/``, then onnxruntime on the held-out split
reproduces the accuracy ``train`` reported. A training killed part-way continues from
its checkpoint to the weights an uninterrupted run ends with, also across processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from nasforge import api
from nasforge.kernel.registry import get_registry
from nasforge.run.training.checkpoint import CheckpointError
from nasforge.run.training.checkpointed import CHECKPOINT, train_checkpointed
from nasforge.run.training.recipe import TrainRecipe
from nasforge.tools.export.ensemble_export import run_onnx
from nasforge.tools.export.trained_export import load_trained

ort = pytest.importorskip("onnxruntime")

NB201_SMALL = ["--build-option", "C=4", "--build-option", "N=1"]


def image_npz(path: Path, *, n: int = 150, n_test: int = 60, classes: int = 3) -> Path:
    """Small 1x8x8 images whose class is where a bright blob sits, with a test split."""
    rng = np.random.default_rng(0)

    def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.arange(count) % classes
        x = rng.normal(0.0, 0.3, size=(count, 1, 8, 8)).astype(np.float32)
        for i, label in enumerate(y):
            x[i, 0, 2 * label : 2 * label + 3, 2:6] += 1.5
        return x, y

    x, y = draw(n)
    x_test, y_test = draw(n_test)
    np.savez(path, x=x, y=y, x_test=x_test, y_test=y_test)
    return path


def flat_npz(path: Path, *, n: int = 200, features: int = 8) -> Path:
    """Flat samples the toy space takes (3 classes, no test split)."""
    rng = np.random.default_rng(1)
    y = np.arange(n) % 3
    x = rng.normal(size=(n, features)).astype(np.float32) + y[:, None].astype(np.float32)
    np.savez(path, x=x, y=y)
    return path


def search(cli, run: Path, data: object, *extra: object, trials: int = 2) -> None:
    cli(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "short-train",
        "--train-data", data, "--budget-trials", trials, "--evaluator-option", "epochs=1",
        *NB201_SMALL, "--run-dir", run, "-q", *extra, ok=True,
    )  # fmt: skip


def onnx_accuracy(model: Path, x: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy (%) of the ONNX file under onnxruntime, computed here, not by nasforge."""
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    (logits,) = session.run(["logits"], {"input": x.numpy()})
    return 100.0 * float((logits.argmax(-1) == y.numpy()).mean())


# --- end to end -----------------------------------------------------------------------------
def test_search_train_export_and_onnxruntime_reproduces_the_reported_accuracy(cli, tmp_path) -> None:
    data = image_npz(tmp_path / "blobs.npz")
    search(cli, tmp_path / "run", data)
    run = cli(
        "train",
        tmp_path / "run",
        "--epochs",
        "5",
        "--batch-size",
        "16",
        "--export",
        tmp_path / "out",
        "-q",
        "--json",
        ok=True,
    )
    report = run.json()
    assert report["schema"] == "nasforge.train/1"
    held = report["heldout"]
    assert held["from"] == "the test split of blobs" and held["examples"] == 60 and not held["seen_by_search"]
    assert report["data"]["examples"] == 150, "trained on the whole training split"
    assert report["build_options"] == {"C": 4, "N": 1, "in_channels": 1, "num_classes": 3}
    saved = np.load(data)
    x_test, y_test = torch.from_numpy(saved["x_test"]), torch.from_numpy(saved["y_test"])
    assert onnx_accuracy(tmp_path / "out" / "model.onnx", x_test, y_test) == pytest.approx(held["accuracy"])
    assert report["export"]["onnx_heldout_accuracy"] == pytest.approx(held["accuracy"])
    assert held["accuracy"] > 100.0 / 3, "it learnt something on an easy task"
    # the files say what they are: trained, on what, to what accuracy
    info = cli("inspect", tmp_path / "out" / "model.onnx", "--json", ok=True).json()
    assert info["trained"] is True and info["trained_on"] == str(data.resolve())
    assert info["heldout_accuracy"] == pytest.approx(held["accuracy"], abs=1e-3)
    assert info["weights"].startswith("trained 5 epochs on")
    weights = cli("inspect", tmp_path / "out" / "weights.safetensors", "--json", ok=True).json()
    assert weights["kind"] == "weights" and weights["trained"] is True
    ran = cli("inspect", tmp_path / "run", "--json", ok=True).json()
    assert ran["trained"]["heldout_accuracy"] == pytest.approx(held["accuracy"])
    # the weights file rebuilds the trained network in PyTorch
    space = get_registry().space("nb201")
    g, options, state = load_trained(tmp_path / "out" / "weights.safetensors", space)
    net = space.build(g, **options)
    net.load_state_dict(state)
    net.eval()
    with torch.no_grad():
        torch_acc = 100.0 * float((net(x_test).argmax(-1) == y_test).double().mean())
    assert torch_acc == pytest.approx(held["accuracy"])


@pytest.mark.slow
def test_mnist1d_search_train_export_reproduces_the_reported_accuracy(cli, tmp_path) -> None:
    pytest.importorskip("mnist1d")
    from nasforge.kernel.datasets import load_dataset

    search(cli, tmp_path / "run", "mnist1d", trials=1)
    report = cli(
        "train", tmp_path / "run", "--epochs", "1", "--export", tmp_path / "out", "-q", "--json", ok=True
    ).json()
    assert report["heldout"]["from"] == "the test split of mnist1d" and report["heldout"]["examples"] == 1000
    test = load_dataset("mnist1d", train=False)
    assert onnx_accuracy(tmp_path / "out" / "model.onnx", test.x, test.y) == pytest.approx(
        report["heldout"]["accuracy"]
    )


@pytest.mark.slow
def test_an_untrained_export_says_untrained(cli, tmp_path) -> None:
    search(cli, tmp_path / "run", image_npz(tmp_path / "blobs.npz"))
    cli("export", tmp_path / "run", "--out", tmp_path / "raw", ok=True)
    info = cli("inspect", tmp_path / "raw" / "model.onnx", "--json", ok=True).json()
    assert info["trained"] is False and info["weights"].startswith("untrained")
    assert "trained" not in cli("inspect", tmp_path / "run", "--json", ok=True).json()


def test_a_genotype_file_trains_on_given_data_with_a_held_out_share(cli, tmp_path) -> None:
    data = flat_npz(tmp_path / "flat.npz")
    genotype = tmp_path / "g.safetensors"
    cli(
        "export",
        "linear-relu_linear-skip-linear",
        "--space",
        "toy",
        "--no-onnx",
        "--out",
        tmp_path / "e",
        ok=True,
    )
    (tmp_path / "e" / "genotype.safetensors").rename(genotype)
    report = cli(
        "train", genotype, "--train-data", data, "--epochs", "2", "--checkpoint-dir", tmp_path / "ck",
        "-q", "--json", ok=True,
    ).json()  # fmt: skip
    assert report["heldout"]["examples"] == 40 and report["data"]["examples"] == 160
    assert report["heldout"]["seen_by_search"] is False  # no search chose on this data
    assert report["heldout"]["from"] == "20 % of flat, held out by seed 0"
    assert json.loads((tmp_path / "ck" / "result.json").read_text())["heldout"] == report["heldout"]


# --- same weights after a kill --------------------------------------------------------------
def _toy(tmp_path: Path):
    from nasforge.run.builtin_datasets import read_user_data

    space = get_registry().space("toy")
    data = read_user_data(str(flat_npz(tmp_path / "flat.npz", n=300))).train
    return space, space.parse("linear-relu_linear-skip-linear"), data


class _Interrupted(Exception):
    pass


@pytest.mark.slow
def test_an_interrupted_training_continues_to_the_same_weights(tmp_path) -> None:
    space, g, data = _toy(tmp_path)
    recipe = TrainRecipe(epochs=5, batch_size=16)
    whole = train_checkpointed(space, g, data, recipe, seed=3, checkpoint_dir=tmp_path / "a")

    def stop_after_two(record: dict[str, float]) -> None:
        if record["epoch"] == 2:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        train_checkpointed(
            space, g, data, recipe, seed=3, checkpoint_dir=tmp_path / "b", on_epoch=stop_after_two
        )
    assert torch.load(tmp_path / "b" / CHECKPOINT, weights_only=True)["epoch"] == 2
    resumed = train_checkpointed(space, g, data, recipe, seed=3, checkpoint_dir=tmp_path / "b")
    assert resumed.resumed_from == 2 and len(resumed.history) == 5
    for (name, a), (_, b) in zip(
        whole.model.state_dict().items(), resumed.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert [r["loss"] for r in whole.history] == [r["loss"] for r in resumed.history]


def test_images_are_augmented_the_same_way_after_a_resume(tmp_path) -> None:
    from nasforge.run.builtin_datasets import read_user_data

    space = get_registry().space("nb201")
    data = read_user_data(str(image_npz(tmp_path / "b.npz"))).train
    g = space.parse("|nor_conv_3x3~0|+|skip_connect~0|avg_pool_3x3~1|+|none~0|nor_conv_1x1~1|skip_connect~2|")
    options = {"C": 4, "N": 1, "in_channels": 1, "num_classes": 3}
    recipe = TrainRecipe(epochs=3, batch_size=32, augment="shift-flip")
    whole = train_checkpointed(space, g, data, recipe, build_options=options, checkpoint_dir=tmp_path / "a")

    def stop(record: dict[str, float]) -> None:
        if record["epoch"] == 1:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        train_checkpointed(
            space, g, data, recipe, build_options=options, checkpoint_dir=tmp_path / "b", on_epoch=stop
        )
    resumed = train_checkpointed(space, g, data, recipe, build_options=options, checkpoint_dir=tmp_path / "b")
    for a, b in zip(whole.model.state_dict().values(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.slow
def test_a_killed_cli_training_continues_to_the_same_weights(cli, tmp_path) -> None:
    """kill -9 of ``nasforge train`` in another process, then the same command again (here,
    in-process: a process start costs seconds), against an uninterrupted run."""
    data = flat_npz(tmp_path / "flat.npz", n=600)
    args = ["linear-relu_linear-skip-linear", "--space", "toy", "--train-data", str(data), "--epochs", "25"]
    args += ["--batch-size", "8", "-q"]
    env = {**os.environ, "NASFORGE_THREADS": "1"}
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nasforge", "train", *args, "--checkpoint-dir", str(killed), "--export",
         str(tmp_path / "out-killed")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (killed / CHECKPOINT).exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    epoch = torch.load(killed / CHECKPOINT, weights_only=True)["epoch"]
    assert 1 <= epoch < 25, "killed part-way"
    assert not (tmp_path / "out-killed").exists()
    cli(
        "train", *args, "--checkpoint-dir", killed, "--export", tmp_path / "out-killed", ok=True
    )  # the same command
    result = json.loads((killed / "result.json").read_text())
    assert result["resumed_from"] == epoch
    cli("train", *args, "--checkpoint-dir", tmp_path / "whole", "--export", tmp_path / "out-whole", ok=True)
    space = get_registry().space("toy")
    _, _, killed_state = load_trained(tmp_path / "out-killed" / "weights.safetensors", space)
    _, _, whole_state = load_trained(tmp_path / "out-whole" / "weights.safetensors", space)
    assert killed_state.keys() == whole_state.keys()
    for name, tensor in whole_state.items():
        assert torch.equal(killed_state[name], tensor), f"{name}: the same trained weights, bit for bit"


# --- checkpoints and refusals ---------------------------------------------------------------
def test_a_checkpoint_of_another_training_is_refused_and_restart_starts_over(cli, tmp_path) -> None:
    data = flat_npz(tmp_path / "flat.npz")
    base = ["train", "linear-skip-skip-linear", "--space", "toy", "--train-data", data, "-q"]
    base += ["--checkpoint-dir", tmp_path / "ck"]
    cli(*base, "--epochs", "2", ok=True)
    cli(*base, "--epochs", "3").assert_one_line_error("checkpoint of another training", "recipe", "--restart")
    again = cli(*base, "--epochs", "3", "--restart", "--json", ok=True).json()
    assert again["resumed_from"] == 0 and again["epochs"] == 3
    (tmp_path / "ck" / CHECKPOINT).write_bytes(b"not a checkpoint")
    cli(*base, "--epochs", "3").assert_one_line_error("not a readable training checkpoint")


def test_the_api_raises_the_checkpoint_error(tmp_path) -> None:
    data = str(flat_npz(tmp_path / "flat.npz"))
    api.train("skip-skip-skip-linear", space="toy", train_data=data, epochs=1, checkpoint_dir=tmp_path / "c")
    with pytest.raises(CheckpointError, match="lr"):
        api.train(
            "skip-skip-skip-linear",
            space="toy",
            train_data=data,
            epochs=1,
            lr=0.1,
            checkpoint_dir=tmp_path / "c",
        )


BAD = {
    "a genotype string without data": (
        ["linear-skip-skip-linear", "--space", "toy"],
        "give the data to train on",
    ),
    "a genotype string without a space": (["linear-skip-skip-linear"], "needs --space"),
    "no such run or file": (["no/such/run"], ""),
    "zero epochs": (["linear-skip-skip-linear", "--space", "toy", "--epochs", "0"], "epochs"),
    "an unknown augmentation": (
        ["linear-skip-skip-linear", "--space", "toy", "--augment", "rotate"],
        "option 'augment' must be one of",
    ),
    "a hold-out share of 1": (
        ["linear-skip-skip-linear", "--space", "toy", "--holdout-fraction", "1"],
        "holdout_fraction",
    ),
    "cuda without one": (["linear-skip-skip-linear", "--space", "toy", "--device", "cuda:7"], "cuda"),
    "a run directory that does not exist": (
        ["runs/does-not-exist"],
        "no such run directory or genotype file",
    ),
    "an unknown network option": (
        ["linear-skip-skip-linear", "--space", "toy", "--build-option", "depth=3"],
        "cannot build the toy network",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_writes_nothing(cli, tmp_path, monkeypatch, case: str) -> None:
    argv, needle = BAD[case]
    data = flat_npz(tmp_path / "flat.npz")
    monkeypatch.chdir(tmp_path)
    with_data = [] if case == "a genotype string without data" else ["--train-data", data]
    if case == "cuda without one" and torch.cuda.is_available():
        pytest.skip("a CUDA device is here")
    run = cli("train", *argv, *with_data, "--export", tmp_path / "out", "-q")
    run.assert_one_line_error(needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flat.npz"], "no checkpoint, no export"


def test_the_optimism_caveat_only_where_the_search_saw_the_data(cli, tmp_path) -> None:
    """A share held out of the data a search chose on may flatter the choice; the same share
    of data no search saw (a search that trained nothing) may not."""
    data = flat_npz(tmp_path / "flat.npz")
    toy = ("search", "--space", "toy", "--strategy", "random", "--budget-trials", "2", "-q")
    cli(*toy, "--evaluator", "short-train", "--train-data", data, "--run-dir", tmp_path / "saw", ok=True)
    cli(*toy, "--evaluator", "toy", "--run-dir", tmp_path / "blind", ok=True)
    train = ("--train-data", data, "--epochs", "1", "-q", "--json")
    saw = cli("train", tmp_path / "saw", *train, "--checkpoint-dir", tmp_path / "c1", ok=True).json()
    blind = cli("train", tmp_path / "blind", *train, "--checkpoint-dir", tmp_path / "c2", ok=True).json()
    assert saw["heldout"]["seen_by_search"] is True  # the table says "may be optimistic"
    assert blind["heldout"]["seen_by_search"] is False
    assert saw["heldout"]["from"] == blind["heldout"]["from"] == "20 % of flat, held out by seed 0"


def test_a_run_on_a_benchmark_table_needs_train_data(cli, tmp_path) -> None:
    cli(
        "search", "--strategy", "random", "--budget-trials", "3", "--run-dir", tmp_path / "run", "-q", ok=True
    )
    cli("train", tmp_path / "run", "-q").assert_one_line_error(
        "searched without training data", "--train-data"
    )
    assert not (tmp_path / "run" / "trained").exists()


def test_a_run_whose_data_changed_is_refused(cli, tmp_path) -> None:
    data = image_npz(tmp_path / "blobs.npz")
    search(cli, tmp_path / "run", data)
    image_npz(data, n=153)  # edited since the search
    cli("train", tmp_path / "run", "-q").assert_one_line_error("now loads other data", "--train-data")
    # the advice followed with the very path the run names: the user's choice, trained
    again = cli("train", tmp_path / "run", "--train-data", data.resolve(), "--epochs", "1", "-q")
    assert again.code == 0, again.err


def test_progress_lines_name_the_epoch_when_stderr_is_no_terminal(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NASFORGE_PROGRESS_SECONDS", "0")
    data = flat_npz(tmp_path / "flat.npz")
    run = cli("train", "linear-skip-skip-linear", "--space", "toy", "--train-data", data, "--epochs", "2",
              "--checkpoint-dir", tmp_path / "ck", ok=True)  # fmt: skip
    lines = [line for line in run.err.splitlines() if "training on flat: epoch" in line]
    assert any("epoch 1/2, batch 1/" in line for line in lines), run.err
    assert any("epoch 2/2" in line and "train accuracy" in line for line in lines), run.err
    assert "held-out accuracy" in run.err


@pytest.mark.gpu
def test_training_on_cuda_reports_and_exports(tmp_path) -> None:
    data = str(image_npz(tmp_path / "blobs.npz"))
    out = api.train(
        "|nor_conv_3x3~0|+|skip_connect~0|avg_pool_3x3~1|+|none~0|nor_conv_1x1~1|skip_connect~2|",
        space="nb201", train_data=data, epochs=2, device="cuda", build_options={"C": 4, "N": 1},
        checkpoint_dir=tmp_path / "ck", export=tmp_path / "out",
    )  # fmt: skip
    assert out.record["device"].startswith("cuda")
    assert out.record["export"]["onnx_heldout_accuracy"] == pytest.approx(out.heldout_accuracy)
    resumed = api.train(
        "|nor_conv_3x3~0|+|skip_connect~0|avg_pool_3x3~1|+|none~0|nor_conv_1x1~1|skip_connect~2|",
        space="nb201", train_data=data, epochs=2, device="cuda", build_options={"C": 4, "N": 1},
        checkpoint_dir=tmp_path / "ck",
    )  # fmt: skip
    assert resumed.heldout_accuracy == pytest.approx(out.heldout_accuracy)
    assert run_onnx(tmp_path / "out" / "model.onnx", torch.zeros(2, 1, 8, 8)).shape == (2, 3)
