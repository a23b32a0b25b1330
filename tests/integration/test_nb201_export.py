"""Issue 2: genotype -> safetensors -> genotype for all 15,625 cells; ONNX parity."""

from __future__ import annotations

import json
import random

import pytest
from safetensors.torch import load_file, save_file

from nasforge import ExportError, Genotype
from nasforge.api import load_space
from nasforge.tools.cli import main
from nasforge.tools.export import export_genotype, export_onnx, inspect_file, load_genotype


@pytest.fixture(scope="module")
def space():
    return load_space("nb201")


@pytest.mark.slow
def test_every_cell_round_trips_through_safetensors_bytes(space, tmp_path) -> None:
    """All 15,625 cells through real safetensors files (batched in one file per cell group)."""
    cells = list(space.enumerate())
    assert len(cells) == 15_625
    path = tmp_path / "all.safetensors"
    chunk = 3125
    for start in range(0, len(cells), chunk):
        tensors, metas = {}, {}
        for i, g in enumerate(cells[start : start + chunk]):
            t, m = g.to_tensors()
            tensors.update({f"{i}.{k}": v for k, v in t.items()})
            metas[str(i)] = m
        save_file(tensors, str(path), metadata={"cells": json.dumps(metas)})
        grouped: dict[str, dict] = {}
        for key, tensor in load_file(str(path)).items():
            index, name = key.split(".", 1)
            grouped.setdefault(index, {})[name] = tensor
        for i, g in enumerate(cells[start : start + chunk]):
            assert Genotype.from_tensors(grouped[str(i)], metas[str(i)]) == g


def test_export_genotype_file_round_trip(space, tmp_path) -> None:
    rng = random.Random(0)
    for k in range(25):
        g = space.sample(rng)
        path = export_genotype(g, tmp_path / f"{k}.safetensors", space)
        assert load_genotype(path, space) == g
        info = inspect_file(path)
        assert info["text"] == space.format(g)
        assert info["op_names"] == list(space.op_names)


@pytest.mark.slow
def test_onnx_parity(space, tmp_path) -> None:
    g = space.parse("|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|")
    report = export_onnx(g, tmp_path / "m.onnx", space, build_options={"C": 8, "N": 1})
    assert report.passed and report.max_abs_diff is not None and report.max_abs_diff <= 1e-4
    info = inspect_file(report.path)
    assert info["metadata"]["nasforge.genotype"] == space.format(g)
    assert info["inputs"][0]["shape"][0] == "batch"


@pytest.mark.slow
def test_onnx_parity_full_size_network_on_digits_shape(space, tmp_path) -> None:
    g = space.parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|"
    )
    report = export_onnx(
        g, tmp_path / "d.onnx", space, input_shape=(1, 1, 8, 8), build_options={"in_channels": 1}
    )
    assert report.passed


@pytest.mark.slow
def test_cli_export_writes_both(space, tmp_path, capsys) -> None:
    text = "|nor_conv_3x3~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|"
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "export",
                text,
                "--space",
                "nb201",
                "--out",
                str(tmp_path),
                "--build-option",
                "C=8",
                "--build-option",
                "N=1",
                "--json",
            ]
        )
    assert not exc.value.code
    out = json.loads(capsys.readouterr().out)
    assert out["max_abs_diff"] <= out["tolerance"]
    assert load_genotype(tmp_path / "genotype.safetensors", space) == space.parse(text)


def test_genotype_of_wrong_space_is_refused(space, tmp_path) -> None:
    toy = load_space("toy")
    g = toy.sample(random.Random(0))
    path = export_genotype(g, tmp_path / "toy.safetensors", toy)
    with pytest.raises(Exception, match="toy"):
        load_genotype(path, space)
    (tmp_path / "bad.safetensors").write_bytes(b"garbage!")
    with pytest.raises(ExportError):
        load_genotype(tmp_path / "bad.safetensors")


@pytest.mark.slow
def test_onnx_parity_torch_export_path(space, tmp_path) -> None:
    g = space.parse("|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|")
    report = export_onnx(g, tmp_path / "m.onnx", space, build_options={"C": 8, "N": 1}, dynamo=True)
    assert report.passed
