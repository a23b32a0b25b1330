"""MNIST-1D as a built-in dataset: generated offline, deterministic, usable by every space."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from nasforge import NasforgeError, get_registry
from nasforge.kernel.datasets import load_dataset, network_options
from nasforge.kernel.seeding import seeded_build
from nasforge.run.builtin_datasets import load_mnist1d
from nasforge.run.training import SGDConfig, train_cosine

pytest.importorskip("mnist1d")


@pytest.mark.slow
def test_the_packages_split_as_one_channel_one_row_sequences() -> None:
    train, test = load_mnist1d(), load_mnist1d(train=False)
    assert (len(train), len(test)) == (4000, 1000)
    assert train.input_shape == test.input_shape == (1, 1, 40)
    assert train.num_classes == test.num_classes == 10
    assert train.x.dtype == torch.float32 and train.y.dtype == torch.int64
    assert set(train.y.tolist()) == set(test.y.tolist()) == set(range(10))
    assert train.digest() != test.digest()


def test_the_runs_seed_leaves_the_data_alone_and_data_seed_draws_another() -> None:
    assert load_mnist1d(seed=0).digest() == load_mnist1d(seed=7).digest()
    other = load_mnist1d(data_seed=1, num_samples=200)
    assert len(other) == 160 and other.digest() != load_mnist1d(num_samples=200).digest()


def test_a_caller_cannot_change_the_cached_data() -> None:
    first = load_mnist1d()
    first.x.zero_()
    assert float(load_mnist1d().x.abs().sum()) > 0.0


def test_generating_it_leaves_the_global_generators_as_they_were() -> None:
    random.seed(123)
    np.random.seed(123)
    expected = (random.random(), float(np.random.rand()))
    random.seed(123)
    np.random.seed(123)
    load_mnist1d(data_seed=5, num_samples=100)  # not cached yet: the package seeds both
    assert (random.random(), float(np.random.rand())) == expected


@pytest.mark.slow
def test_same_data_in_a_new_process() -> None:
    code = "from nasforge.run.builtin_datasets import load_mnist1d; print(load_mnist1d().digest())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == load_mnist1d().digest()


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"num_samples": 5}, "num_samples"),
        ({"num_samples": True}, "num_samples"),
        ({"data_seed": -1}, "data_seed"),
    ],
)
def test_bad_options_are_one_line(options: dict, needle: str) -> None:
    with pytest.raises(NasforgeError, match=needle):
        load_mnist1d(**options)


def test_registered_and_listed(cli) -> None:
    assert load_dataset("mnist1d", registry=get_registry()).name == "mnist1d"
    names = [row["name"] for row in cli("datasets", "--json", ok=True).json()["items"]]
    assert "mnist1d" in names and "files" in names


@pytest.mark.parametrize(
    ("space", "build"),
    [
        ("nb201", {"C": 4, "N": 1}),
        ("darts", {"C": 4, "layers": 3, "auxiliary": False}),
        ("mlp-res", {"in_features": 40}),
        ("act-mlp", {"in_features": 40}),
        ("act-mlp", {}),  # pooled to 8 x 8, as any image
    ],
)
def test_every_image_space_trains_on_it(space: str, build: dict) -> None:
    """Training on 256 sequences lowers a sampled network's training loss, in each space."""
    registry = get_registry()
    data = load_dataset("mnist1d", registry=registry)
    x, y = data.x[:256], data.y[:256]
    sp = registry.space(space)
    g = sp.sample(random.Random(0))
    options = {**network_options(data.input_shape, data.num_classes), **build}
    model = seeded_build(lambda: sp.build(g, **options), 0)
    losses: list[float] = []
    optimiser = SGDConfig(lr=0.05).build(model.parameters())
    order = torch.Generator().manual_seed(0)
    train_cosine(
        model, optimiser, x, y, epochs=4, lr=0.05, batch_size=32, order=order,
        after_epoch=lambda _done, log: losses.append(log["loss"]),
    )  # fmt: skip
    assert all(map(math.isfinite, losses)) and losses[-1] < losses[0]


@pytest.mark.slow
def test_a_short_train_search_on_it(cli, tmp_path) -> None:
    """The issue's command at toy size (the full one is the slow test below)."""
    run = cli(
        "search", "--space", "nb201", "--strategy", "rea", "--evaluator", "short-train",
        "--train-data", "mnist1d", "--budget-trials", "2", "--evaluator-option", "epochs=1",
        "--evaluator-option", 'build={"C": 4, "N": 1}', "--run-dir", tmp_path / "r", "-q", "--json",
        ok=True,
    )  # fmt: skip
    assert run.json()["trials"] == 2
    header = json.loads((tmp_path / "r" / "journal.jsonl").read_text().splitlines()[0])
    assert header["data"] == {
        "name": "mnist1d",
        "digest": load_mnist1d().digest(),
        "shape": [1, 1, 40],
        "classes": 10,
    }


@pytest.mark.slow
def test_the_issues_command_runs(tmp_path) -> None:
    """``nasforge search --space nb201 --strategy rea --evaluator short-train --train-data
    mnist1d --budget-trials 6`` as a user types it (defaults: C=16, N=5, 5 epochs; minutes)."""
    argv = [sys.executable, "-m", "nasforge", "--threads", "1", "search", "--space", "nb201"]
    argv += ["--strategy", "rea", "--evaluator", "short-train", "--train-data", "mnist1d"]
    argv += ["--budget-trials", "6", "--run-dir", str(tmp_path / "r"), "-q", "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["trials"] == 6


@pytest.mark.slow
def test_training_free_metrics_score_on_it_and_on_a_file(cli, tmp_path) -> None:
    common = ["score", "--space", "nb201", "--sample", "2", "-m", "synflow", "-m", "naswot", "--json"]
    common += ["--build-option", "C=4", "--build-option", "N=1", "--batch-size", "16"]
    scores = cli(*common, "--data", "mnist1d", ok=True).json()
    assert scores  # one row per genotype and metric, finite or flagged
    data = load_mnist1d()
    np.savez(tmp_path / "mine.npz", x=data.x[:64].numpy(), y=data.y[:64].numpy())
    assert cli(*common, "--data", tmp_path / "mine.npz", ok=True).json()


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["darts", "nesbs"])
def test_one_shot_strategies_search_on_it(cli, tmp_path, strategy: str) -> None:
    options = {
        "darts": ["-o", "epochs=1", "-o", 'supernet={"C": 4, "N": 1}'],
        "nesbs": ["-o", "supernet_epochs=1", "-o", "posterior_steps=3", "-o", "svgd_steps=5"]
        + ["-o", "iterations=1", "-o", 'supernet={"C": 4, "N": 1}', "-o", "max_batches=2"],
    }[strategy]
    run = cli(
        "search", "--space", "nb201", "--strategy", strategy, "--train-data", "mnist1d", *options,
        "--run-dir", tmp_path / "r", "-q", "--json", ok=True,
    )  # fmt: skip
    assert run.json()["best"]
