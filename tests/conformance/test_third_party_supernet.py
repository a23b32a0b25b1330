"""A third party's cell space gets DARTS, PR-DARTS and NASI through the supernet contract alone.

The example plugin (``examples/third_party_plugin``) is installed into a private target
dir, as a user would install it; its ``hello-cell`` space is neither NAS-Bench-201 nor
DARTS, and the one-shot plugins know nothing of it. Each search runs from the command
line on digits, journals every epoch (or NASI sample), and ends in a valid genotype.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nasforge.kernel.genotype import Genotype
from nasforge.run.journal_file import JournalReader
from tests.conformance.example_plugin import run_nasforge

SUPERNET = ["-o", 'supernet={"C": 4}']
BILEVEL = ["-o", "epochs=2", "-o", "max_batches=2", "-o", "batch_size=16", *SUPERNET]
NASI = ["-o", "steps=3", "-o", "batch_size=8", "-o", "calibration_samples=2", *SUPERNET]


@pytest.fixture
def hello_space(installed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The installed plugin's space, imported here only to check what the CLI returned."""
    monkeypatch.syspath_prepend(str(installed))
    from nasforge_hello.cell_space import HelloCellSpace

    yield HelloCellSpace()
    for name in [m for m in sys.modules if m == "nasforge_hello" or m.startswith("nasforge_hello.")]:
        monkeypatch.delitem(sys.modules, name)


def _search(installed: Path, run_dir: Path, strategy: str, options: list[str]) -> dict:
    argv = ["search", "--space", "hello-cell", "--strategy", strategy, "--dataset", "digits", *options]
    proc = run_nasforge(installed, *argv, "-q", "--json", "--run-dir", str(run_dir), threads=1)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("strategy", "options", "trials"),
    [
        ("darts", BILEVEL, 2),
        pytest.param("prdarts", BILEVEL, 2, marks=pytest.mark.slow),  # the same bilevel path as darts
        pytest.param("nasi", NASI, 3, marks=pytest.mark.slow),
    ],
)
def test_one_shot_search_runs_on_a_third_party_space(
    installed: Path, hello_space, tmp_path: Path, strategy: str, options: list[str], trials: int
) -> None:
    out = _search(installed, tmp_path / "run", strategy, options)
    best = Genotype.from_json(out["best_genotype"])
    assert best.space == "hello-cell" and out["data"] == "digits"
    hello_space.validate(best)
    assert hello_space.parse(out["best"]) == best  # the space's own text form
    assert out["trials"] == trials  # one journalled trial per epoch (NASI: per sample)
    reader = JournalReader.of_run(tmp_path / "run")
    assert reader.end is not None and len(reader.trials) == trials
    for trial in reader.trials:
        hello_space.validate(trial.genotype)
