"""``--sample N`` on every space: listed where the space can list itself (NAS-Bench-201),
drawn where it cannot (the DARTS spaces are finite in name only; listing them failed with
"does not support 'enumerate'" before)."""

from __future__ import annotations

import random

import pytest

from nasforge import get_registry
from nasforge.tools.scoring import sample_genotypes


@pytest.mark.parametrize("name", ["darts", "nasnet-cells"])
def test_unlisted_spaces_are_sampled_by_draws(name: str) -> None:
    space = get_registry().space(name)
    drawn = sample_genotypes(space, 5, seed=3)
    assert len(set(drawn)) == 5 and drawn == sample_genotypes(space, 5, seed=3)
    for g in drawn:
        space.validate(g)


@pytest.mark.slow
def test_a_listed_space_samples_its_enumeration_as_before() -> None:
    space = get_registry().space("nb201")
    assert sample_genotypes(space, 4, seed=1) == random.Random(1).sample(list(space.enumerate()), 4)


def test_the_cli_scores_a_sample_of_an_unlisted_space(cli) -> None:
    build = ["--build-option", "C=4", "--build-option", "layers=3", "--build-option", "auxiliary=false"]
    doc = cli(
        "score",
        "--space",
        "nasnet-cells",
        "--sample",
        "2",
        "-m",
        "params",
        *build,
        "--no-cache",
        "--json",
        ok=True,
    )
    rows = doc.json()["rows"]
    assert len(rows) == 2 and all(r["text"].startswith("Genotype(normal=") for r in rows)
