"""The user's own data: tensor files and image folders by path, checked before a run starts.

Good files search like a built-in dataset (the path recorded absolute, the digest in the
journal header, a resume on changed data refused); every kind of bad file is one line on
stderr, exit 2, and no run directory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from nasforge.run.journal_file import journal_path

PIL = pytest.importorskip("PIL.Image")

TOY = ["search", "--space", "toy", "--strategy", "random", "--evaluator", "short-train", "-q"]
TOY += ["--budget-trials", "2", "--evaluator-option", "epochs=1"]
NB201 = ["search", "--space", "nb201", "--strategy", "random", "--evaluator", "short-train", "-q"]
NB201 += [
    "--budget-trials",
    "2",
    "--evaluator-option",
    "epochs=1",
    "--evaluator-option",
    'build={"C": 4, "N": 1}',
]


def arrays(n: int = 40, features: int = 8, classes: int = 3) -> dict[str, np.ndarray]:
    """Flat samples the toy space takes, every class present, from a fixed generator."""
    rng = np.random.default_rng(0)
    return {
        "x": rng.normal(size=(n, features)).astype(np.float32),
        "y": np.arange(n, dtype=np.int64) % classes,
    }


def save_images(
    root: Path, classes: dict[str, int], *, size: tuple[int, int] = (6, 6), mode: str = "L"
) -> Path:
    rng = np.random.default_rng(1)
    for name, count in classes.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            shape = (size[1], size[0]) if mode == "L" else (size[1], size[0], 3)
            PIL.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode).save(root / name / f"{i}.png")
    return root


# --- good data ----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".npz", ".pt", ".safetensors"])
def test_a_tensor_file_searches_like_a_dataset(cli, tmp_path, monkeypatch, suffix: str) -> None:
    data = arrays()
    path = tmp_path / f"mine{suffix}"
    if suffix == ".npz":
        np.savez(path, **data, x_test=data["x"][:6], y_test=data["y"][:6])
    elif suffix == ".pt":
        torch.save({k: torch.from_numpy(v) for k, v in data.items()}, path)
    else:
        from safetensors.torch import save_file

        save_file({k: torch.from_numpy(v) for k, v in data.items()}, str(path))
    monkeypatch.chdir(tmp_path)
    cli(*TOY, "--train-data", path.name, "--run-dir", "r", ok=True)
    header = json.loads(journal_path(tmp_path / "r").read_text().splitlines()[0])
    assert header["spec"]["train_data"] == str(path.resolve())  # a resume elsewhere finds it
    assert header["data"]["name"] == "mine" and header["data"]["shape"] == [8]


def test_an_image_folder_searches_like_a_dataset(cli, tmp_path) -> None:
    root = save_images(tmp_path / "photos", {"cat": 5, "dog": 5, "eel": 5}, mode="RGB")
    (root / "README.txt").write_text("not a class")  # files beside the class folders are skipped
    (root / "cat" / "notes.txt").write_text("not an image suffix: skipped")
    cli(*NB201, "--train-data", root, "--run-dir", tmp_path / "r", ok=True)
    header = json.loads(journal_path(tmp_path / "r").read_text().splitlines()[0])
    assert header["data"]["shape"] == [3, 6, 6]


def test_an_image_folder_reads_classes_in_sorted_order_and_a_test_split(tmp_path) -> None:
    from nasforge.kernel.datasets import load_dataset

    root = tmp_path / "split"
    save_images(root / "train", {"b": 2, "a": 3})
    save_images(root / "test", {"a": 1, "b": 1})
    train = load_dataset(str(root))
    test = load_dataset(str(root), train=False)
    assert train.y.tolist() == [0, 0, 0, 1, 1] and test.y.tolist() == [0, 1]
    assert train.input_shape == (1, 6, 6) and float(train.x.max()) <= 1.0


@pytest.mark.slow
def test_a_changed_file_is_refused_on_resume(cli, tmp_path) -> None:
    path = tmp_path / "mine.npz"
    np.savez(path, **arrays())
    cli(*TOY, "--train-data", path, "--run-dir", tmp_path / "r", ok=True)
    changed = arrays()
    changed["x"][0, 0] += 1.0
    np.savez(path, **changed)
    cli("resume", tmp_path / "r", "-q").assert_one_line_error("made on other data", "digest")


# --- bad data: one line, exit 2, nothing written ------------------------------------------
def _npz(**data: object) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        np.savez(tmp / "bad.npz", **data)
        return tmp / "bad.npz"

    return make


def _raw(name: str, content: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / name).write_bytes(content)
        return tmp / name

    return make


def _torch_object(obj: object) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        torch.save(obj, tmp / "bad.pt")
        return tmp / "bad.pt"

    return make


def _folder(classes: dict[str, int], **kwargs: object) -> Callable[[Path], Path]:
    return lambda tmp: save_images(tmp / "photos", classes, **kwargs)


def _mixed_sizes(tmp: Path) -> Path:
    root = save_images(tmp / "photos", {"a": 2, "b": 2})
    PIL.fromarray(np.zeros((9, 9), dtype=np.uint8), "L").save(root / "b" / "odd.png")
    return root


def _fake_png(tmp: Path) -> Path:
    root = save_images(tmp / "photos", {"a": 2, "b": 2})
    (root / "a" / "broken.png").write_text("this is text, not a PNG")
    return root


def _empty_class(tmp: Path) -> Path:
    root = save_images(tmp / "photos", {"a": 2, "b": 2})
    (root / "c").mkdir()
    return root


X, Y = arrays()["x"], arrays()["y"]
BAD = {
    "no such file": (lambda tmp: tmp / "missing.npz", "no such file"),
    "unknown suffix": (_raw("data.csv", b"1,2,3\n"), "unknown data file type '.csv'"),
    "empty file": (_raw("bad.npz", b""), "the file is empty"),
    "npz that is text": (_raw("bad.npz", b"x,y\n1,2\n"), "not a NumPy .npz archive"),
    "npz that is a .npy": (lambda tmp: _save_npy(tmp), "holds one array"),
    "pt that is text": (_raw("bad.pt", b"not a torch file at all"), "not a readable torch file"),
    "safetensors that is text": (_raw("bad.safetensors", b"0123456789abcdef"), "not a readable safetensors"),
    "pt holding a tensor": (_torch_object(torch.zeros(3)), "not a dict of named tensors"),
    "no x": (_npz(inputs=X, y=Y), "unexpected key 'inputs'"),
    "no y": (_npz(x=X), "no 'y'"),
    "x and y lengths differ": (_npz(x=X, y=Y[:-1]), "x has 40 samples but y has 39 labels"),
    "x_test without y_test": (_npz(x=X, y=Y, x_test=X), "x_test without y_test"),
    "test samples of another shape": (
        _npz(x=X, y=Y, x_test=X[:, :4], y_test=Y),
        "x_test samples have shape (4,), x samples (8,)",
    ),
    "non-integer labels": (_npz(x=X, y=Y + 0.5), "non-integer labels"),
    "negative label": (_npz(x=X, y=Y - 1), "has label -1"),
    "test label outside the classes": (_npz(x=X, y=Y, x_test=X, y_test=Y + 5), "outside the 3 classes"),
    "label beyond num_classes": (_npz(x=X, y=Y, num_classes=2), "outside num_classes 2"),
    "one-hot labels": (_npz(x=X, y=np.eye(3)[Y]), "not one-hot"),
    "NaN inputs": (_npz(x=np.where(X > 1.5, np.nan, X), y=Y), "NaN values"),
    "infinite inputs": (_npz(x=np.where(X > 1.5, np.inf, X), y=Y), "infinite values"),
    "no samples": (_npz(x=np.zeros((0, 8), np.float32), y=np.zeros(0, np.int64)), "empty"),
    "one value per sample, no feature axis": (_npz(x=X[:, 0], y=Y), "one row per sample"),
    "text inputs": (_npz(x=np.array(["a"] * 40), y=Y), "not numbers"),
    "one class only": (_npz(x=X, y=np.zeros(40, np.int64)), "one class only"),
    "folder with one class": (_folder({"cats": 3}), "one class subfolder"),
    "folder without class folders": (lambda tmp: _mkdir(tmp / "photos"), "no class subfolders"),
    "class folder without images": (_empty_class, "no images"),
    "a .png that is no image": (_fake_png, "not an image Pillow can read"),
    "images of different sizes": (_mixed_sizes, "images differ in size"),
}


def _save_npy(tmp: Path) -> Path:
    np.save(tmp / "one.npy", X)
    (tmp / "one.npy").rename(tmp / "bad.npz")
    return tmp / "bad.npz"


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_data_is_one_line_and_leaves_no_run(cli, tmp_path, case: str) -> None:
    make, needle = BAD[case]
    source = tmp_path / "in"
    source.mkdir()
    path = make(source)
    run_dir = tmp_path / "r"
    search = NB201 if path.suffix == "" or path.is_dir() else TOY
    run = cli(*search, "--train-data", path, "--run-dir", run_dir)
    run.assert_one_line_error(needle)
    assert str(path.name) in run.err or "photos" in run.err
    assert not run_dir.exists()


def test_at_least_twenty_kinds_of_bad_data() -> None:
    assert len(BAD) >= 20


def test_the_files_dataset_without_a_path_says_how_to_give_one(cli, tmp_path) -> None:
    cli(*TOY, "--train-data", "files", "--run-dir", tmp_path / "r").assert_one_line_error("give its path")
