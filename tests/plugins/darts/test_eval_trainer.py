"""The DARTS evaluation trainer (issue 11): a derived cell trained the papers' way.

On digits at tiny width (preset ``cpu-tiny``) with the auxiliary tower and drop-path on:
the loss falls, the auxiliary loss is used, drop-path rises per epoch, the same seed gives
the same numbers, a killed run resumes to them; cutout, crop and the local CIFAR-10 reader
in isolation; ``nasforge darts-train`` refusals are one line; the ``paper`` preset holds
DARTS's published CIFAR-10 recipe.
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import attrs
import numpy as np
import pytest
import torch

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.registry import get_registry
from nasforge.run.builtin_datasets import TRAIN_FILES
from nasforge.tools.export import export_genotype
from nasforge_darts.cifar_local import (
    CIFAR10_MEAN,
    CIFAR10_STD,
    ImageSplits,
    augment,
    load_cifar10,
    random_crop,
)
from nasforge_darts.counting import count_parameters
from nasforge_darts.cutout import cutout
from nasforge_darts.eval_trainer import (
    PRESETS,
    build_eval_network,
    digits_splits,
    train_derived,
    train_settings,
)
from nasforge_darts.published import DARTS_V2, PR_DARTS
from nasforge_darts.space import DartsSpace
from nasforge_darts.train_cmd import resolve_darts_genotype

#: Smaller than cpu-tiny still, for the tests that only compare runs with each other.
SMOKE = {"C": 4, "max_batches": 2, "eval_batch_size": 512}


@pytest.fixture(scope="module")
def digits():
    return digits_splits()


@pytest.fixture(scope="module")
def tiny_run(digits):
    """The cpu-tiny preset as it is: C = 8, 5 cells, aux 0.4, drop-path up to 0.2, cutout 4,
    2 epochs of the 1,438 training digits (about 10 s on one thread)."""
    torch.set_num_threads(1)
    return train_derived(DARTS_V2, digits, train_settings("cpu-tiny"), seed=0)


# --- the preset ---------------------------------------------------------------------------


def test_the_paper_preset_is_the_published_darts_cifar10_recipe() -> None:
    """seed-001-ch1-4.md §5.3-5.5 and seed-004-prdarts.md §1.5/§2.8 (DARTS train.py)."""
    s = train_settings("paper")
    assert (s.C, s.layers) == (36, 20)  # 20 cells, 36 initial channels
    assert (s.epochs, s.batch_size) == (600, 96)
    assert (s.lr, s.lr_min, s.momentum, s.weight_decay, s.grad_clip) == (0.025, 0.0, 0.9, 3e-4, 5.0)
    assert (s.auxiliary_weight, s.drop_path, s.cutout) == (0.4, 0.2, 16)
    assert (s.crop_padding, s.flip) == (4, True)
    assert s.max_batches is None and s.eval_every == 1
    assert train_settings("paper", epochs=10).epochs == 10 and train_settings().preset == "paper"
    assert set(PRESETS) == {"paper", "cpu-tiny"}


def test_the_paper_network_is_darts_v2_at_its_published_size() -> None:
    """3,349,342 parameters without the auxiliary tower (seed-001 §6; the paper's 3.3M)."""
    images = TensorData("cifar-shaped", torch.zeros(2, 3, 32, 32), torch.zeros(2, dtype=torch.int64), 10)
    cifar_shaped = ImageSplits("cifar10", images, images, CIFAR10_MEAN, CIFAR10_STD)
    with torch.device("meta"):  # shapes only: no memory, no time
        net = build_eval_network(DartsSpace().parse(DARTS_V2), cifar_shaped, train_settings("paper"), 0)
    assert count_parameters(net) == 3_349_342 and net.auxiliary is not None


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"lr_min": 0.1}, "lr_min"),
        ({"C": 5}, "even"),
        ({"drop_path": 1.0}, "drop_path"),
        ({"epochs": 0}, "epochs"),
        ({"flip": 1}, "flip"),
        ({"batchsize": 8}, "did you mean 'batch_size'"),
    ],
)
def test_bad_settings_are_one_line_option_errors(overrides: dict, needle: str) -> None:
    with pytest.raises(NasforgeError, match=needle):
        train_settings("cpu-tiny", **overrides)
    with pytest.raises(NasforgeError, match="unknown darts-train preset"):
        train_settings("papers")


# --- training on digits -------------------------------------------------------------------


@pytest.mark.slow
def test_a_derived_cell_trains_on_digits_with_aux_head_and_drop_path(tiny_run) -> None:
    first, last = tiny_run.history
    assert [r["epoch"] for r in tiny_run.history] == [0, 1]
    assert last["train_loss"] < first["train_loss"], "the loss decreases"
    assert last["test_loss"] < first["test_loss"]
    assert tiny_run.test_accuracy > 0.5 and tiny_run.test_accuracy == last["test_accuracy"]  # chance: 0.1
    assert all(r["train_aux_loss"] > 0 for r in tiny_run.history), "the auxiliary loss was computed"
    assert tiny_run.test_error == pytest.approx(100 * (1 - tiny_run.test_accuracy))
    assert tiny_run.parameters > 0 and tiny_run.dataset == "digits"


def test_the_auxiliary_loss_reaches_the_auxiliary_tower(tiny_run, digits) -> None:
    """The tower's weights moved away from their seeded initial values: its loss was
    back-propagated (it is built only when its weight is positive)."""
    settings = train_settings("cpu-tiny")
    initial = build_eval_network(DartsSpace().parse(DARTS_V2), digits, settings, seed=0)
    trained = tiny_run.model
    assert trained is not None and trained.auxiliary is not None
    before = initial.auxiliary.classifier.weight
    assert not torch.equal(before, trained.auxiliary.classifier.weight.detach().cpu())
    off = build_eval_network(
        DartsSpace().parse(DARTS_V2), digits, attrs.evolve(settings, auxiliary_weight=0.0), 0
    )
    assert off.auxiliary is None


@pytest.mark.slow
def test_drop_path_ramps_linearly_by_epoch(digits) -> None:
    """DARTS: ``drop_path_prob = 0.2 * epoch / epochs``, set before each epoch, 0 first."""
    paper = train_settings("paper")
    assert [paper.drop_path_at(e) for e in (0, 300, 599)] == [0.0, 0.1, pytest.approx(0.2 * 599 / 600)]
    seen: list[float] = []
    settings = train_settings("cpu-tiny", epochs=3, **SMOKE)
    result = train_derived(PR_DARTS, digits, settings, seed=1, on_epoch=lambda r: seen.append(r["drop_path"]))
    assert seen == [r["drop_path"] for r in result.history] == pytest.approx([0.0, 0.2 / 3, 0.4 / 3])
    assert result.model.drop_path_prob == pytest.approx(0.4 / 3), "the network used the epoch's value"
    lrs = [r["lr"] for r in result.history]
    assert lrs[0] == 0.025 and lrs[0] > lrs[1] > lrs[2] > 0, "cosine, stepped per epoch"


@pytest.mark.slow
def test_the_same_seed_gives_identical_results(digits) -> None:
    settings = train_settings("cpu-tiny", epochs=1, **SMOKE)
    a = train_derived(DARTS_V2, digits, settings, seed=5)
    b = train_derived(DARTS_V2, digits, settings, seed=5)
    c = train_derived(DARTS_V2, digits, settings, seed=6)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a.history]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in b.history]
    for (name, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values(), strict=True):
        assert torch.equal(x, y), name
    assert a.history[0]["train_loss"] != c.history[0]["train_loss"]


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_checkpoint_to_the_same_numbers(digits, tmp_path: Path) -> None:
    settings = train_settings("cpu-tiny", epochs=3, **SMOKE)
    straight = train_derived(DARTS_V2, digits, settings, seed=2)

    def kill_after_first(record: dict) -> None:
        if record["epoch"] == 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_derived(DARTS_V2, digits, settings, seed=2, out=tmp_path, on_epoch=kill_after_first)
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"], "no temporary file is left"
    resumed = train_derived(DARTS_V2, digits, settings, seed=2, out=tmp_path)
    assert resumed.resumed_from == 1
    drop_seconds = [{k: v for k, v in r.items() if k != "seconds"} for r in resumed.history]
    assert drop_seconds == [{k: v for k, v in r.items() if k != "seconds"} for r in straight.history]
    assert resumed.test_accuracy == straight.test_accuracy
    with pytest.raises(NasforgeError, match="checkpoint of another run .*seed"):
        train_derived(DARTS_V2, digits, settings, seed=3, out=tmp_path)


# --- augmentation ---------------------------------------------------------------------------


def test_cutout_zeroes_one_square_per_image_on_every_channel() -> None:
    x = torch.ones(64, 3, 32, 32)
    out = cutout(x, 16, generator=torch.Generator().manual_seed(0))
    assert torch.equal(x, torch.ones(64, 3, 32, 32)), "the input is untouched"
    zeros = out == 0
    assert torch.equal(zeros[:, 0], zeros[:, 1]) and torch.equal(zeros[:, 0], zeros[:, 2])
    for image in zeros[:, 0]:
        rows, cols = image.any(1).nonzero().flatten(), image.any(0).nonzero().flatten()
        assert 0 < len(rows) <= 16 and 0 < len(cols) <= 16
        assert int(image.sum()) == len(rows) * len(cols), "a (border-clipped) square"
        assert rows.tolist() == list(range(int(rows[0]), int(rows[-1]) + 1))
    assert any(int(image.sum()) == 256 for image in zeros[:, 0]), "inside the image: 16 x 16"
    assert cutout(x, 0) is x


def test_crop_and_flip_are_windows_of_the_padded_image_drawn_from_the_generator() -> None:
    x = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8) + 1
    cropped = random_crop(x, 2, torch.Generator().manual_seed(0))
    padded = torch.nn.functional.pad(x, (2, 2, 2, 2))
    for i in range(2):
        windows = [padded[i, :, r : r + 8, c : c + 8] for r in range(5) for c in range(5)]
        assert any(torch.equal(cropped[i], w) for w in windows)
    a = augment(x, (0.0,) * 3, (1.0,) * 3, padding=2, generator=torch.Generator().manual_seed(4))
    b = augment(x, (0.0,) * 3, (1.0,) * 3, padding=2, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and a.shape == x.shape


# --- CIFAR-10 from a local directory --------------------------------------------------------


def _fake_cifar(root: Path, per_file: int = 6) -> Path:
    """The python layout (``cifar-10-batches-py``) with a few random images per file."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in (*TRAIN_FILES, "test_batch"):
        entry = {
            b"batch_label": name.encode(),
            b"labels": [int(v) for v in rng.integers(0, 10, per_file)],
            b"data": rng.integers(0, 256, (per_file, 3072), dtype=np.uint8),
            b"filenames": [b"x.png"] * per_file,
        }
        (folder / name).write_bytes(pickle.dumps(entry, protocol=2))
    return folder


def test_cifar10_is_read_from_the_python_layout(tmp_path: Path) -> None:
    folder = _fake_cifar(tmp_path)
    data = load_cifar10(tmp_path)  # the parent works, as does the folder itself
    assert data.train.x.shape == (30, 3, 32, 32) and data.train.x.dtype == torch.uint8
    assert data.test.x.shape == (6, 3, 32, 32) and (data.mean, data.std) == (CIFAR10_MEAN, CIFAR10_STD)
    again = load_cifar10(folder, limit=4)
    assert torch.equal(again.train.x, data.train.x[:4]) and len(again.test) == 4


def test_a_foreign_pickle_in_the_cifar_directory_is_refused_not_run(tmp_path: Path) -> None:
    folder = _fake_cifar(tmp_path)

    class Boom:
        def __reduce__(self):
            return (print, ("ran",))

    (folder / "data_batch_3").write_bytes(pickle.dumps(Boom()))
    with pytest.raises(NasforgeError, match="data_batch_3 is not a CIFAR-10 python batch"):
        load_cifar10(folder)


# --- the command ------------------------------------------------------------------------------


def test_darts_train_comes_from_the_darts_plugin() -> None:
    assert get_registry().origin("command", "darts-train") == "darts"


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_a_bad_data_dir_is_one_line_with_exit_2(cli, tmp_path: Path, make: str) -> None:
    bad = tmp_path / "cifar"
    if make == "empty":
        bad.mkdir()
    elif make == "file":
        bad.write_text("not a directory")
    argv = ["darts-train", "--genotype", "DARTS-V2", "--dataset", "cifar10", "--data-dir", bad]
    cli(*argv, "--preset", "paper").assert_one_line_error("CIFAR-10 not found", str(bad), "never downloads")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--genotype", "DARTS-V3"], "unknown genotype 'DARTS-V3'"),
        (["--genotype", "DARTS-V2", "--preset", "fast"], "unknown darts-train preset"),
        (["--genotype", "DARTS-V2", "-o", "C=3"], "must be even"),
        (["--genotype", "DARTS-V2", "--dataset", "mnist"], "unknown --dataset 'mnist'"),
        (["--genotype", "DARTS-V2", "--data-dir", "."], "--data-dir is for --dataset cifar10"),
    ],
)
def test_bad_input_is_one_line(cli, argv: list[str], needle: str) -> None:
    cli("darts-train", *argv).assert_one_line_error(needle)


def test_genotypes_resolve_from_names_strings_and_files(tmp_path: Path) -> None:
    space = DartsSpace()
    v2 = space.parse(DARTS_V2)
    assert resolve_darts_genotype("DARTS-V2") == resolve_darts_genotype("darts_v2") == v2
    assert resolve_darts_genotype(DARTS_V2) == v2
    path = export_genotype(v2, tmp_path / "v2.safetensors", space)
    assert resolve_darts_genotype(str(path)) == v2


@pytest.mark.slow
def test_the_command_trains_on_local_cifar10_and_writes_its_result(cli, tmp_path: Path) -> None:
    """The cifar10 path end to end at toy size: crop 4, flip, cutout 16 on 32x32 images."""
    _fake_cifar(tmp_path / "data")
    out = tmp_path / "run"
    argv = ["darts-train", "--genotype", "PR-DARTS", "--dataset", "cifar10", "--data-dir", tmp_path / "data"]
    argv += ["--preset", "paper", "--epochs", "1", "-o", "C=4", "-o", "layers=3", "-o", "batch_size=8"]
    argv += ["--limit", "16", "--out", out, "--seed", "1", "--json", "-q"]
    doc = cli(*argv, ok=True).json()
    assert doc["schema"] == "nasforge.darts-train/1" and doc["dataset"] == "cifar10"
    assert doc["preset"] == "paper" and doc["settings"]["cutout"] == 16 and doc["settings"]["C"] == 4
    assert len(doc["epochs"]) == 1 and 0.0 <= doc["test_accuracy"] <= 1.0
    assert doc["epochs"][0]["train_aux_loss"] > 0
    assert json.loads((out / "result.json").read_text()) == doc
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.pt", "result.json"]


@pytest.mark.gpu
def test_the_trainer_runs_on_cuda(digits) -> None:
    """``pytest -m gpu`` on a GPU machine: the same loop on CUDA, drop-path masks included."""
    settings = train_settings("cpu-tiny", epochs=2, **SMOKE)
    result = train_derived(DARTS_V2, digits, settings, seed=0, device="cuda")
    assert result.device.startswith("cuda") and len(result.history) == 2
    assert all(math.isfinite(r["train_loss"]) for r in result.history)
