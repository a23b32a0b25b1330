"""Ensemble export: manifest + one ONNX per member + a fused graph, checked and verified on load."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from nasforge.api import load_space
from nasforge.kernel.ensemble import ENSEMBLE_KEY, Ensemble
from nasforge.kernel.errors import ExportError, NasforgeError
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.tools.export.ensemble_export import FUSED, MANIFEST, export_ensemble, load_ensemble, member_file
from nasforge.tools.export.parity import randomise_batchnorm

TEXTS = (
    "|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|",
    "|skip_connect~0|+|nor_conv_1x1~0|nor_conv_3x3~1|+|nor_conv_3x3~0|skip_connect~1|avg_pool_3x3~2|",
    "|avg_pool_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_1x1~2|",
)
SHAPE = (1, 1, 8, 8)
NORM = {"mean": [0.3], "std": [0.4]}


@pytest.fixture(scope="module")
def space():
    return load_space("nb201")


@pytest.fixture(scope="module")
def members(space):
    """Three small networks with BatchNorm statistics of their own (as trained ones have)."""
    ens = Ensemble(members=[space.parse(t) for t in TEXTS], scores=[{"nll": 0.1 * i} for i in range(3)])
    nets = []
    for i, g in enumerate(ens.members):
        net = seeded_build(lambda g=g: space.build(g, C=4, N=1, in_channels=1, num_classes=10), i)
        randomise_batchnorm(net, SHAPE, seed=i)
        nets.append(net.eval())
    return ens, nets


@pytest.fixture(scope="module")
def exported(members, space, tmp_path_factory):
    ens, nets = members
    out = tmp_path_factory.mktemp("ens") / "export"
    report = export_ensemble(ens, out, space, models=nets, input_shape=SHAPE, normalisation=NORM, fuse=True)
    return report


@pytest.mark.slow
def test_writes_manifest_members_and_fused_file(exported) -> None:
    names = sorted(p.name for p in exported.directory.iterdir())
    assert names == sorted([MANIFEST, FUSED, *(member_file(i) for i in range(3))])
    manifest = json.loads(exported.manifest.read_text())
    assert [m["genotype"] for m in manifest["members"]] == list(TEXTS)
    assert manifest["combine"] == {"rule": "mean-softmax", "weights": [1 / 3] * 3, "output": "probabilities"}
    assert manifest["input"]["normalisation"] == NORM and manifest["input"]["shape"] == [None, 1, 8, 8]
    assert all(len(m["sha256"]) == 64 and m["weights"] == "trained" for m in manifest["members"])
    assert exported.max_abs_diff is not None and exported.max_abs_diff <= 1e-4


def test_fused_onnx_reproduces_the_averaged_torch_output(exported, members) -> None:
    ens, nets = members
    loaded = load_ensemble(exported.directory)
    x = torch.rand((16, 1, 8, 8), generator=seeded_generator(7))
    with torch.no_grad():
        torch_probs = torch.stack([torch.softmax(n((x - 0.3) / 0.4), -1) for n in nets]).mean(0)
    fused = loaded.predict(x, fused=True)
    by_members = loaded.predict(x)
    assert torch.allclose(fused, torch_probs, atol=1e-5)
    assert torch.allclose(by_members, torch_probs, atol=1e-5)
    assert loaded.ensemble.members == ens.members and loaded.ensemble.scores == ens.scores


def _copy(exported, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(exported.directory, target)
    return target


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


def test_corrupted_member_is_refused_in_one_line(exported, tmp_path) -> None:
    d = _copy(exported, tmp_path)
    blob = bytearray((d / member_file(1)).read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (d / member_file(1)).write_bytes(bytes(blob))
    with pytest.raises(ExportError) as exc:
        load_ensemble(d)
    assert member_file(1) in _one_line(exc) and "checksum" in _one_line(exc)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: text.replace('"nasforge-ensemble-export"', '"something-else"'),
        lambda text: text.replace('"sha256"', '"sha"', 1),
        lambda text: text.replace('"member_00.onnx"', '"../member_00.onnx"'),
    ],
    ids=["truncated", "foreign", "missing-key", "escaping-path"],
)
def test_corrupted_manifest_is_refused_in_one_line(exported, tmp_path, damage) -> None:
    d = _copy(exported, tmp_path)
    (d / MANIFEST).write_text(damage((d / MANIFEST).read_text()))
    with pytest.raises(ExportError) as exc:
        load_ensemble(d)
    _one_line(exc)


def test_missing_member_is_refused(exported, tmp_path) -> None:
    d = _copy(exported, tmp_path)
    (d / member_file(2)).unlink()
    with pytest.raises(ExportError, match="missing"):
        load_ensemble(d)


def test_failed_parity_check_leaves_nothing(members, space, tmp_path) -> None:
    ens, nets = members
    target = tmp_path / "new" / "ens"
    with pytest.raises(ExportError, match="parity"):
        export_ensemble(ens, target, space, models=nets, input_shape=SHAPE, tolerance=-1.0, rtol=0.0)
    assert not (tmp_path / "new").exists()


def test_ensemble_value_round_trips_and_validates(space) -> None:
    ens = Ensemble(members=[space.parse(t) for t in TEXTS], combine="mean-logits", method="nesbs")
    assert Ensemble.from_json(json.loads(json.dumps(ens.to_json()))) == ens
    with pytest.raises(ValueError):
        Ensemble(members=[space.parse(TEXTS[0])], weights=[0.7])
    with pytest.raises(NasforgeError, match="version"):
        Ensemble.from_json({**ens.to_json(), "version": 99})


@pytest.mark.slow
def test_nesbs_outcome_exports_as_a_fused_ensemble(space, tmp_path) -> None:
    """The Python API path: search, read the outcome as an Ensemble, export, load, predict."""
    from nasforge.run.builtin_datasets import load_gaussian
    from nasforge_nesbs import Nesbs

    tiny = {"supernet_epochs": 1, "posterior_epochs": 1, "max_batches": 1, "batch_size": 16}
    tiny |= {"svgd_steps": 5, "iterations": 1, "supernet": {"C": 4, "N": 1}}
    outcome = Nesbs(seed=0, **tiny).fit(space, load_gaussian(n=48, shape=(1, 8, 8), num_classes=4))
    ens = Ensemble.from_outcome(outcome)
    assert ens is not None and ens.members == outcome.members and ens.method == "nesbs"
    recorded = outcome.produced_by[ENSEMBLE_KEY]["scores"]
    assert [s["member_nll"] for s in ens.scores] == [s["member_nll"] for s in recorded]
    build = {"C": 4, "N": 1, "in_channels": 1, "num_classes": 4}
    export_ensemble(ens, tmp_path / "e", space, input_shape=SHAPE, build_options=build, fuse=True)
    loaded = load_ensemble(tmp_path / "e")
    x = torch.rand((5, 1, 8, 8), generator=seeded_generator(1))
    assert torch.allclose(loaded.predict(x, fused=True), loaded.predict(x), atol=1e-5)
    assert json.loads((tmp_path / "e" / MANIFEST).read_text())["method"] == "nesbs"
