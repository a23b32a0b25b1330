"""Training data given to the Python API: in memory, by path, recorded and checked on resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nasforge import NasforgeError, api, get_registry
from nasforge.kernel.datasets import TensorData, is_data_path
from nasforge.kernel.errors import JournalError, UnknownNameError
from nasforge.run.builtin_datasets import DataError
from nasforge.run.journal_file import journal_path
from nasforge.run.run_data import as_training_data, spec_name

TOY = {"space": "toy", "strategy": "random", "evaluator": "short-train", "trials": 2}
EPOCHS = {"evaluator_options": {"epochs": 1}}


def _arrays(n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 8)).astype(np.float32), np.arange(n) % 3


@pytest.mark.parametrize("form", ["pair", "mapping", "tensors", "tensordata"])
def test_the_api_searches_data_in_memory(tmp_path, form: str) -> None:
    x, y = _arrays()
    given = {
        "pair": (x, y),
        "mapping": {"x": x, "y": y},
        "tensors": (torch.from_numpy(x), torch.from_numpy(y)),
        "tensordata": TensorData("mine", torch.from_numpy(x), torch.from_numpy(y), 3),
    }[form]
    outcome = api.search(**TOY, **EPOCHS, train_data=given, run_dir=tmp_path / "r")
    assert outcome.best is not None
    header = json.loads(journal_path(tmp_path / "r").read_text().splitlines()[0])
    assert header["spec"]["train_data"].startswith("memory:")
    assert header["data"]["digest"] == as_training_data(given)[1].digest()


def test_a_run_on_data_in_memory_resumes_only_with_the_same_data(tmp_path) -> None:
    x, y = _arrays()
    api.search(**TOY, **EPOCHS, train_data=(x, y), run_dir=tmp_path / "r")
    with pytest.raises(NasforgeError, match="given in memory"):
        api.resume(tmp_path / "r")
    with pytest.raises(JournalError, match="made on other data"):
        api.resume(tmp_path / "r", train_data=(x[1:], y[1:]))
    assert api.resume(tmp_path / "r", train_data=(x, y)).best is not None


@pytest.mark.slow
def test_a_one_shot_search_takes_data_in_memory(tmp_path) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 1, 4, 4)).astype(np.float32), np.arange(64) % 4
    outcome = api.search(
        "nb201",
        "nesbs",
        train_data={"x": x, "y": y},
        strategy_options={
            "supernet": {"C": 4, "N": 1},
            "supernet_epochs": 1,
            "posterior_epochs": 1,
            "svgd_steps": 5,
            "iterations": 1,
        },
        run_dir=tmp_path / "r",
    )
    assert len(outcome.members) == 3
    with pytest.raises(JournalError, match="made on other data"):
        api.resume(tmp_path / "r", train_data={"x": x[:32], "y": y[:32]})


def test_bad_arrays_are_refused_before_a_run_starts(tmp_path) -> None:
    x, y = _arrays()
    with pytest.raises(DataError, match="non-integer labels"):
        api.search(**TOY, train_data=(x, y + 0.25), run_dir=tmp_path / "r")
    with pytest.raises(DataError, match="must be a dataset name, a path"):
        api.search(**TOY, train_data=42, run_dir=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_a_path_object_and_a_relative_path_are_recorded_absolute(tmp_path, monkeypatch) -> None:
    x, y = _arrays()
    np.savez(tmp_path / "d.npz", x=x, y=y)
    monkeypatch.chdir(tmp_path)
    spec = api.build_spec(**{k: v for k, v in TOY.items()}, train_data="d.npz")
    assert spec.train_data == str((tmp_path / "d.npz").resolve())
    spec = api.build_spec(**{k: v for k, v in TOY.items()}, train_data=tmp_path / "d.npz")
    assert spec.train_data == str((tmp_path / "d.npz").resolve())


def test_names_and_paths_are_told_apart(tmp_path, monkeypatch) -> None:
    registry = get_registry()
    assert not is_data_path("digits") and not is_data_path("mnist1d")
    assert is_data_path("data/x.npz") and is_data_path("x.safetensors") and is_data_path("./photos")
    assert spec_name("digits", registry) == "digits"
    with pytest.raises(UnknownNameError, match="digit"):
        spec_name("digitz", registry)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "digits").mkdir()  # a folder named like a dataset: the dataset wins
    assert spec_name("digits", registry) == "digits"
    (tmp_path / "photos").mkdir()  # an existing folder with a plain name is a path
    assert spec_name("photos", registry) == str((tmp_path / "photos").resolve())
