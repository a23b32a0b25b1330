"""The CI slice of ``benchmarks/fuzz_cli.py``: the first 250 inputs of seed 0.

Same generators, same harness, same judgement as the 10,000-input benchmark; a failure
lists every broken input grouped by cause, with the shortest reproducer of each group.
Replay one with ``python benchmarks/fuzz_cli.py --case INDEX``.
"""

from __future__ import annotations

import collections
import shutil

import pytest

from fuzz.cases import execute, make_case
from fuzz.templates import Templates

SEED = 0
INPUTS = 250


@pytest.mark.slow  # the fuzz families' own tests stay fast
def test_first_inputs_of_the_fuzz_benchmark(
    templates: Templates, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("fuzz-subset")
    groups: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    families: collections.Counter[str] = collections.Counter()
    for index in range(INPUTS):
        case = make_case(SEED, index, templates)
        families[case.family] += 1
        cwd = root / str(index)
        cwd.mkdir()
        _, found = execute(case, cwd, timeout=60)
        shutil.rmtree(cwd, ignore_errors=True)
        for v in found:
            groups[(v.kind, v.key)].append(f"#{index}: {case.reproducer()[:300]}")
    assert len(families) >= 15, f"the slice should reach most families, reached {sorted(families)}"
    report = [
        f"[{kind}] {len(hits)}x {key}\n    {min(hits, key=len)}" for (kind, key), hits in groups.items()
    ]
    assert not groups, f"{sum(map(len, groups.values()))} violations in {INPUTS} inputs:\n" + "\n".join(
        report
    )
