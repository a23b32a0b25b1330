"""Importing the package and the four contracts does not import torch.

An ask/tell service, a listing or a type checker needs the contracts (Strategy,
SearchSpace, Metric, Evaluator) and the values they pass, not the arithmetic: torch
(seconds to import) loads when a network is built, a genotype becomes tensors or a metric
scores. Checked in a fresh interpreter, since this one has long imported torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CONTRACTS = (
    "nasforge",
    "nasforge.kernel.strategy",
    "nasforge.kernel.search_space",
    "nasforge.kernel.metric",
    "nasforge.kernel.evaluator",
)
#: Public names a contract's user reaches first: looked up, they load no torch either.
NAMES = ("Strategy", "SearchSpace", "Metric", "Evaluator", "Genotype", "Result", "MetricInfo", "Proposal")


def _fresh(code: str, env: dict[str, str] | None = None) -> object:
    """Run ``code`` in a new interpreter; it prints one JSON value, returned here."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_contracts_import_without_torch() -> None:
    found = _fresh(
        "import importlib, json, sys\n"
        f"for m in {CONTRACTS!r}: importlib.import_module(m)\n"
        "import nasforge\n"
        f"for n in {NAMES!r}: getattr(nasforge, n)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))))\n"
    )
    assert found == []


@pytest.mark.slow
def test_torch_loads_when_it_is_used() -> None:
    """The lazy imports change nothing a user sees: tensors come out, ``Batch`` is the pair."""
    found = _fresh(
        "import json, sys\n"
        "from nasforge.kernel.genotype import Genotype\n"
        "from nasforge.kernel.metric import Batch\n"
        "import torch\n"
        "g = Genotype('s', '1', ('a', 2))\n"
        "tensors, meta = g.to_tensors()\n"
        "pair = tuple[torch.Tensor, torch.Tensor]\n"
        "print(json.dumps([Genotype.from_tensors(tensors, meta) == g, Batch == pair]))\n"
    )
    assert found == [True, True]


#: Command lines that answer without running anything: each must not import torch.
ANSWERED_AT_ONCE = (
    ("--help",),
    ("--version",),
    ("search", "--help"),
    ("search", "--budget-trials", "abc"),
    ("serch",),
    ("train", "--help"),
    ("export", "--help"),
    ("score", "--help"),
    ("darts-train", "--help"),
    ("insight", "--help"),
)


def test_the_command_line_imports_no_torch() -> None:
    """``import nasforge.tools.cli`` loads no torch, and help, ``--version`` and usage errors
    answer before it loads (torch's import is seconds on a busy machine)."""
    env = {k: v for k, v in os.environ.items() if k != "NASFORGE_PLUGINS"}  # the toy plugin is torch's
    found = _fresh(
        "import contextlib, io, json, sys\n"
        "import nasforge.tools.cli\n"
        "seen = [sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))]\n"
        f"for argv in {[list(a) for a in ANSWERED_AT_ONCE]!r}:\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            nasforge.tools.cli.main(argv)\n"
        "        except SystemExit as exc:\n"
        "            status = exc.code\n"
        "    seen.append([argv, status, 'torch' in sys.modules, err.getvalue()])\n"
        "print(json.dumps(seen))\n",
        env=env,
    )
    assert isinstance(found, list)
    assert found[0] == []
    for argv, status, torch_loaded, stderr in found[1:]:
        assert status == (2 if argv[-1] in ("abc", "serch") else 0), (argv, stderr)
        assert not torch_loaded, argv
