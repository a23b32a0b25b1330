"""``nasforge export RUN_DIR`` of an ensemble run (issue 13, items b and c): the ensemble
export (manifest, members, fused graph) rather than the best member alone, its members
trained first with ``--train-epochs`` on the run's own data, one member with ``--member``,
and bad input refused in one line."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import torch

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.registry import get_registry
from nasforge.run.builtin_datasets import load_digits
from nasforge.run.ensemble_training import MemberRecipe, predict_probabilities, train_members
from nasforge.tools.cli import main
from nasforge.tools.export.bundle import GENOTYPE_FILE, ONNX_FILE
from nasforge.tools.export.ensemble_export import FUSED, MANIFEST, load_ensemble, member_file
from nasforge.tools.export.run_ensemble import run_ensemble
from tests.nesbs_tiny import BUILD, SEARCH


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """One tiny ensemble search, no export (run once per module, outside ``capsys``)."""
    root = tmp_path_factory.mktemp("ens-run")
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main([str(a) for a in [*SEARCH, "--run-dir", root / "run", "--json"]])
        except SystemExit as exc:
            assert not exc.code, exc
    return root / "run"


def test_export_of_an_ensemble_run_writes_the_ensemble(cli, run_dir, tmp_path) -> None:
    out = tmp_path / "ens"
    doc = cli("export", run_dir, "--out", out, *BUILD, "-q", "--json", ok=True).json()
    assert doc["fused"] == str(out / FUSED) and doc["weights"] == "untrained"
    assert doc["members"] == [str(out / member_file(i)) for i in range(3)]
    assert not (out / GENOTYPE_FILE).exists() and not (out / ONNX_FILE).exists()
    manifest = json.loads((out / MANIFEST).read_text())
    recorded = run_ensemble(run_dir, get_registry()).ensemble
    assert [m["genotype_json"] for m in manifest["members"]] == [g.to_json() for g in recorded.members]
    # built for the run's data (digits: 1x8x8, 10 classes), not the CIFAR default shape
    assert manifest["input"]["shape"] == [None, 1, 8, 8] and manifest["output"]["num_classes"] == 10
    assert all(m["weights"].startswith("untrained") for m in manifest["members"])


@pytest.mark.slow
def test_train_epochs_trains_the_members_on_the_runs_data(cli, run_dir, tmp_path) -> None:
    torch.set_num_threads(1)
    out = tmp_path / "trained"
    doc = cli(
        "export", run_dir, "--out", out, *BUILD, "--train-epochs", "1", "--no-fuse", "-q", "--json", ok=True
    ).json()
    assert doc["weights"] == "trained 1 epochs on digits" and doc["fused"] is None
    assert doc["train_examples"] == 1797 and not (out / FUSED).exists()
    loaded = load_ensemble(out)
    assert all(m["weights"] == "trained" for m in loaded.manifest["members"])
    # the same members, trained as documented (member i from the run's seed + i), predict
    # what the exported files predict
    data = load_digits()
    ensemble = run_ensemble(run_dir, get_registry()).ensemble
    models = train_members(
        ensemble, run_ensemble(run_dir, get_registry()).space, data,
        recipe=MemberRecipe(epochs=1), build_options={"C": 4, "N": 1}, seed=0,
    )  # fmt: skip
    x = data.x[:64]
    expected = predict_probabilities(ensemble, models, x)
    got = torch.as_tensor(loaded.predict(x))
    assert torch.allclose(got.double(), expected.double(), atol=1e-4)
    accuracy = float((expected.argmax(1) == data.y[:64]).double().mean())
    assert accuracy > 0.3  # one epoch on digits is well above chance (0.1)


def test_member_of_an_ensemble_run_exports_that_member(cli, run_dir, tmp_path) -> None:
    out = tmp_path / "one"
    doc = cli("export", run_dir, "--out", out, *BUILD, "--member", "2", "-q", "--json", ok=True).json()
    recorded = run_ensemble(run_dir, get_registry())
    assert doc["text"] == recorded.space.format(recorded.ensemble.members[2]) and doc["member"] == 2
    assert (out / GENOTYPE_FILE).exists() and (out / ONNX_FILE).exists()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--member", "3"], "has 3 members (0..2)"),
        (["--train-epochs", "-1"], "train-epochs"),
        (["--member", "0", "--train-epochs", "1"], "drop --member"),
        (["--no-onnx"], "--no-onnx applies to one member"),
    ],
)
def test_bad_options_of_an_ensemble_run_are_one_line(cli, run_dir, tmp_path, extra, needle) -> None:
    cli("export", run_dir, "--out", tmp_path / "x", *extra).assert_one_line_error(needle)
    assert not (tmp_path / "x").exists()


def test_train_epochs_needs_an_ensemble_run(cli, tmp_path) -> None:
    text = "|nor_conv_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|"
    run = cli("export", text, "--space", "nb201", "--out", tmp_path / "x", "--train-epochs", "2")
    run.assert_one_line_error("--train-epochs trains the members of an ensemble run")


def test_other_data_than_the_run_saw_is_refused(run_dir) -> None:
    found = run_ensemble(run_dir, get_registry())
    header = dict(found.header) | {"data": dict(found.header["data"]) | {"digest": "0" * 16}}
    tampered = type(found)(found.run_dir, found.space, found.ensemble, header)
    with pytest.raises(NasforgeError, match="now loads other data"):
        tampered.load_data(get_registry())
    assert tampered.load_data(get_registry(), check=False).name == "digits"
