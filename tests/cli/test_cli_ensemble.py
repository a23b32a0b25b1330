"""An ensemble search on the command line (issue 13): the members in ``search``'s table and
``--json``, ``--export`` as an ensemble export (``--fuse/--no-fuse``), ``resume`` of the
ended run, and ``inspect`` of the run and of the export (a damaged one refused in one line)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil

import pytest

from nasforge.tools.cli import main
from nasforge.tools.export.ensemble_export import FUSED, MANIFEST, load_ensemble, member_file
from tests.cli_run import run_main
from tests.nesbs_tiny import BUILD, SEARCH


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """One ensemble search with a fused export, as --json reports it (run once per module,
    so outside ``capsys``: stdout is captured here)."""
    root = tmp_path_factory.mktemp("ens")
    argv = [*SEARCH, "--run-dir", root / "run", "--export", root / "ens", *BUILD, "--json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([str(a) for a in argv])
        except SystemExit as exc:
            assert not exc.code, exc
    return root, json.loads(out.getvalue())


@pytest.mark.slow
def test_search_json_has_the_members_and_the_export(searched) -> None:
    root, doc = searched
    assert doc["schema"] == "nasforge.search/1"
    assert doc["ensemble"]["method"] == "nesbs" and doc["ensemble"]["size"] == 3
    assert doc["ensemble"]["combine"] == "mean-softmax"
    assert set(doc["ensemble"]["objectives"]) == {"ensemble_nll", "ensemble_error"}
    members = doc["members"]
    assert [m["member"] for m in members] == [0, 1, 2]
    assert doc["best"] in [m["genotype"] for m in members]
    assert all(set(m["scores"]) == {"member_nll", "member_error"} for m in members)
    assert sum(m["weight"] for m in members) == pytest.approx(1.0)
    # --export wrote an ensemble export, fused by default, and no single-genotype bundle
    assert "genotype_file" not in doc and doc["fused_file"] == str(root / "ens" / FUSED)
    assert doc["member_files"] == [str(root / "ens" / member_file(i)) for i in range(3)]
    assert doc["onnx_max_abs_diff"] <= 1e-4
    loaded = load_ensemble(root / "ens")
    assert [m["genotype_json"] for m in members] == [g.to_json() for g in loaded.ensemble.members]
    manifest = json.loads((root / "ens" / MANIFEST).read_text())
    assert manifest["method"] == "nesbs" and manifest["members"][0]["scores"] == members[0]["scores"]
    assert manifest["input"]["shape"] == [None, 1, 8, 8] and manifest["output"]["num_classes"] == 10


def test_resume_of_the_ended_run_prints_the_members_table(cli, searched) -> None:
    root, doc = searched
    text = cli("resume", root / "run", ok=True).out
    assert "ensemble: 3 members (mean-softmax)" in text and "member_nll" in text
    flat = re.sub(r"[\s│┃]", "", text)  # the table folds long architectures over lines
    assert all(m["genotype"] in flat for m in doc["members"])
    again = cli("resume", root / "run", "-q", "--json", ok=True).json()
    assert again["members"] == doc["members"] and again["ensemble"] == doc["ensemble"]


@pytest.mark.slow
def test_resume_exports_without_the_fused_graph(cli, searched, tmp_path) -> None:
    root, _ = searched
    out = cli("resume", root / "run", "-q", "--export", tmp_path / "x", "--no-fuse", "--json", ok=True)
    doc = out.json()
    assert doc["fused_file"] is None and not (tmp_path / "x" / FUSED).exists()
    assert len(load_ensemble(tmp_path / "x").members) == 3


def test_inspect_the_run_shows_its_members(cli, searched) -> None:
    root, doc = searched
    info = cli("inspect", root / "run", "--json", ok=True).json()
    assert info["kind"] == "run" and info["ensemble"]["method"] == "nesbs"
    assert [m["text"] for m in info["ensemble"]["members"]] == [m["genotype"] for m in doc["members"]]
    assert "members" in cli("inspect", root / "run", ok=True).out


@pytest.mark.parametrize("target", ["dir", "manifest"])
def test_inspect_the_export_verifies_and_lists_it(cli, searched, target) -> None:
    root, doc = searched
    path = root / "ens" if target == "dir" else root / "ens" / MANIFEST
    info = cli("inspect", path, "--json", ok=True).json()
    assert info["kind"] == "ensemble" and info["verified"] is True and info["combine"] == "mean-softmax"
    assert [m["text"] for m in info["members"]] == [m["genotype"] for m in doc["members"]]
    assert all(m["parity_max_abs_diff"] <= 1e-4 for m in info["members"])
    assert info["fused"]["file"] == FUSED and info["normalisation"] is None
    text = cli("inspect", path, ok=True).out
    assert "ensemble" in text and "member_00.onnx" in text and "mean-softmax" in text


def _damaged(searched, tmp_path, damage):
    root, _ = searched
    copy = tmp_path / "copy"
    shutil.copytree(root / "ens", copy)
    damage(copy)
    return copy


def _flip_byte(path):
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(blob))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        (lambda d: _flip_byte(d / member_file(1)), "checksum"),
        (lambda d: _flip_byte(d / FUSED), "checksum"),
        (lambda d: (d / member_file(2)).unlink(), "missing"),
        (lambda d: (d / MANIFEST).write_text((d / MANIFEST).read_text()[:200]), "not valid JSON"),
        (
            lambda d: (d / MANIFEST).write_text((d / MANIFEST).read_text().replace('"weights": [', '"w": [')),
            "malformed",
        ),
    ],
    ids=["member", "fused", "missing-member", "truncated-manifest", "manifest-key"],
)
def test_inspect_refuses_a_damaged_export_in_one_line(cli, searched, tmp_path, damage, needle) -> None:
    copy = _damaged(searched, tmp_path, damage)
    cli("inspect", copy).assert_one_line_error(needle)
    cli("inspect", copy / MANIFEST).assert_one_line_error(needle)


def test_members_carry_the_tables_accuracies_with_an_nb201_table_evaluator(tmp_path) -> None:
    """Issue 13: on NAS-Bench-201 the table serves every member: its validation and test
    accuracy beside the supernet's scores, and their means in the ensemble's objectives."""
    from nasforge.api import load_space
    from nasforge_nb201.evaluator import NB201TableEvaluator

    code, out, err = run_main(*SEARCH, "--evaluator", "nb201-table", "--run-dir", tmp_path / "run", "--json")
    assert code == 0, err
    doc = json.loads(out)
    members = doc["members"]
    space = load_space("nb201")
    table = NB201TableEvaluator(space, dataset="cifar10")
    for m in members:
        assert set(m["scores"]) == {"member_nll", "member_error", "valid_accuracy", "test_accuracy"}
        looked_up = table.evaluate(space.parse(m["genotype"]))
        assert m["scores"]["test_accuracy"] == pytest.approx(looked_up.objectives["test_accuracy"])
    objectives = doc["ensemble"]["objectives"]
    assert objectives["members_mean_test_accuracy"] == pytest.approx(
        sum(m["scores"]["test_accuracy"] for m in members) / len(members)
    )
