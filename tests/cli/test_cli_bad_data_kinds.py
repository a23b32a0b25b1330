"""Bad data that used to get through: symbolic link loops wherever a data path is read,
labels that skip classes, inputs that are not numbers, and a torch file of pickled objects
refused in a whole sentence. Each is one line on stderr, exit 2, no run directory, and a
:class:`~nasforge.run.builtin_datasets.DataError` (a ValueError) from the Python API."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from nasforge import api
from nasforge.run.builtin_datasets import DataError

TOY = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "short-train", "-q"]
TOY += ["--budget-trials", "1", "--evaluator-option", "epochs=1"]
LOOP = "symbolic link loop"


def _flat(n: int = 30, classes: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.normal(size=(n, 8)).astype(np.float32), "y": np.arange(n) % classes}


def _self_link(tmp: Path) -> Path:
    link = tmp / "data.npz"
    os.symlink(link.name, link)  # data.npz -> data.npz
    return link


def _two_links(tmp: Path) -> Path:
    os.symlink("b", tmp / "a")
    os.symlink("a", tmp / "b")  # a -> b -> a: two "directories" linked to each other
    return tmp / "a"


def _loop_on_the_way(tmp: Path) -> Path:
    os.symlink("loop", tmp / "loop")
    return tmp / "loop" / "train.npz"  # the loop is a folder on the way to the file


LOOPS = {"a file linked to itself": _self_link, "two links to each other": _two_links}
LOOPS["a loop on the way"] = _loop_on_the_way


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_symlink_loop_as_train_data_is_one_line(cli, tmp_path, case: str) -> None:
    path = LOOPS[case](tmp_path)
    run = cli(*TOY, "--train-data", path, "--run-dir", tmp_path / "r")
    run.assert_one_line_error(LOOP)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_symlink_loop_from_the_api_is_a_data_error(tmp_path, case: str) -> None:
    path = LOOPS[case](tmp_path)
    with pytest.raises(DataError, match=LOOP):
        api.search("toy", "random", "short-train", train_data=path, trials=1, run_dir=tmp_path / "r")
    with pytest.raises(DataError, match=LOOP):
        api.search("toy", "random", "short-train", train_data=str(path), trials=1)
    assert not (tmp_path / "r").exists()


def test_a_symlink_loop_given_by_a_bare_name_is_a_loop_not_an_unknown_dataset(
    cli, tmp_path, monkeypatch
) -> None:
    _two_links(tmp_path)
    monkeypatch.chdir(tmp_path)
    cli(*TOY, "--train-data", "a", "--run-dir", "r").assert_one_line_error(f"a: a {LOOP}")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_symlink_loop_as_score_data_is_a_loop_not_a_missing_file(cli, tmp_path, case: str) -> None:
    path = LOOPS[case](tmp_path)
    run = cli("score", "--space", "toy", "--metric", "params", "--sample", "1", "-q", "--data", path)
    run.assert_one_line_error(LOOP)


def test_a_class_folder_that_is_a_link_loop_is_one_line(cli, tmp_path) -> None:
    pytest.importorskip("PIL.Image")
    root = tmp_path / "photos"
    root.mkdir()
    os.symlink("cats", root / "cats")  # a class "folder" that is a loop is no folder
    os.symlink("../photos", root / "dogs")  # a folder linking to its parent
    run = cli(*TOY, "--train-data", root, "--run-dir", tmp_path / "r")
    assert run.code == 2 and "Traceback" not in run.err
    assert not (tmp_path / "r").exists()


def test_labels_that_skip_classes_are_refused_unless_num_classes_says_so(cli, tmp_path) -> None:
    data = _flat()
    data["y"] = np.where(data["y"] == 2, 1000, data["y"])  # three classes: 0, 1, 1000
    np.savez(tmp_path / "skip.npz", **data)
    run = cli(*TOY, "--train-data", tmp_path / "skip.npz", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("3 distinct labels (0, 1, 1000)", "num_classes")
    assert not (tmp_path / "r").exists()
    with pytest.raises(DataError, match="998 of the 1001 classes"):
        api.search("toy", "random", "short-train", train_data=(data["x"], data["y"]), trials=1)
    np.savez(tmp_path / "meant.npz", **data, num_classes=np.int64(1001))  # said so: accepted
    cli(*TOY, "--train-data", tmp_path / "meant.npz", "--run-dir", tmp_path / "ok", ok=True)


def test_a_test_split_may_lack_a_class(tmp_path) -> None:
    from nasforge.run.builtin_datasets import read_user_data

    data = _flat()
    np.savez(tmp_path / "d.npz", **data, x_test=data["x"][:4], y_test=np.array([0, 0, 2, 2]))
    assert read_user_data(str(tmp_path / "d.npz")).test.num_classes == 3


@pytest.mark.parametrize("suffix", [".safetensors", ".npz", ".pt"])
def test_bool_inputs_are_refused(cli, tmp_path, suffix: str) -> None:
    x, y = torch.rand(30, 8) > 0.5, torch.arange(30) % 3
    path = tmp_path / f"bool{suffix}"
    if suffix == ".safetensors":
        from safetensors.torch import save_file

        save_file({"x": x, "y": y}, str(path))
    elif suffix == ".npz":
        np.savez(path, x=x.numpy(), y=y.numpy())
    else:
        torch.save({"x": x, "y": y}, path)
    run = cli(*TOY, "--train-data", path, "--run-dir", tmp_path / "r")
    run.assert_one_line_error("x holds bool values, not numbers")
    assert not (tmp_path / "r").exists()


def test_a_torch_file_of_pickled_objects_is_refused_in_a_whole_sentence(cli, tmp_path) -> None:
    data = _flat()
    torch.save(data, tmp_path / "numpy.pt")  # numpy arrays: objects weights_only will not load
    run = cli(*TOY, "--train-data", tmp_path / "numpy.pt", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("holds Python objects other than tensors")
    line = run.err.strip()
    assert line.endswith(".safetensors file") and "Re-running" not in line, "a whole message, ours"
    assert "\x1b" not in run.err and "[1m" not in run.err
    assert not (tmp_path / "r").exists()


def test_a_long_parser_message_is_cut_where_a_sentence_ends() -> None:
    from nasforge.run.builtin_datasets.tensor_files import MAX_REASON, _reason

    first = "A first sentence long enough to say what went wrong in the file, which is what a user reads."
    assert _reason(ValueError(first + " " + "word " * 80)) == first
    words = _reason(ValueError("word " * 80))
    assert words.endswith(" ...") and len(words) <= MAX_REASON + 4
    assert not words[:-4].endswith("wor")


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_symlink_loop_as_what_to_train_or_inspect_is_one_line(cli, tmp_path, case: str) -> None:
    path = LOOPS[case](tmp_path)
    cli("train", path, "--space", "toy", "--train-data", "digits", "-q").assert_one_line_error(LOOP)
    cli("inspect", path).assert_one_line_error(LOOP)
    data = tmp_path / "d.npz"
    np.savez(data, **_flat())
    cli("train", "linear-skip-skip-skip", "--space", "toy", "--train-data", path, "-q").assert_one_line_error(
        LOOP
    )
    assert not (tmp_path / "runs").exists()
