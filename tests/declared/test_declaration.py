"""What a declaration's choices make of genotypes: canonical absent choices, a size that
counts distinct networks, text and numeric forms that round-trip, moves that stay inside."""

from __future__ import annotations

import random

import pytest

from nasforge import InvalidGenotypeError
from nasforge.kernel.declaration import Declaration
from nasforge.kernel.declared_choices import DEPTH, LAYER, VALUE, Condition, DeclarationError, DeclaredChoice


def nested() -> Declaration:
    """A depth of 1-3 whose blocks each choose a kernel; a layer choice whose 'conv' has a width."""
    choices = [DeclaredChoice("s.depth", DEPTH, (1, 2, 3), "depth", "")]
    for i in range(3):
        cond = Condition("s.depth", {d for d in (1, 2, 3) if d > i})
        choices.append(DeclaredChoice(f"s.block{i}.k", VALUE, (3, 5), "k", f"s.block{i}", cond))
    choices.append(DeclaredChoice("op", LAYER, ("conv", "pool"), "op", ""))
    choices.append(DeclaredChoice("op.conv.w", VALUE, (8, 16, 32), "w", "op.conv", Condition("op", {"conv"})))
    return Declaration("nested", choices)


def test_size_counts_distinct_networks_and_enumerate_yields_each_once() -> None:
    d = nested()
    assert d.size == (2 + 4 + 8) * (3 + 1)
    every = list(d.enumerate())
    assert len(every) == len(set(every)) == d.size
    for values in every:
        d.check(values)
        assert d.canonical(values) == values
    assert every[0] == (1, 3, 3, 3, "conv", 8)


def test_absent_choices_are_canonical() -> None:
    d = nested()
    assert d.canonical((1, 5, 5, 5, "pool", 32)) == (1, 5, 3, 3, "pool", 8)
    with pytest.raises(InvalidGenotypeError, match="absent"):
        d.check((1, 5, 5, 3, "conv", 8))
    with pytest.raises(InvalidGenotypeError, match="not one of"):
        d.check((4, 3, 3, 3, "conv", 8))
    with pytest.raises(InvalidGenotypeError, match="not one of"):
        d.check((1, "3", 3, 3, "conv", 8))


def test_text_form_lists_present_choices_and_round_trips() -> None:
    d = nested()
    values = (2, 5, 3, 3, "conv", 16)
    text = d.format(values)
    assert text == "s.depth=2 s.block0.k=5 s.block1.k=3 op=conv op.conv.w=16"
    assert d.parse(text) == values
    assert d.parse("op=pool s.depth=1 s.block0.k=5") == (1, 5, 3, 3, "pool", 8)
    for values in d.enumerate():
        assert d.parse(d.format(values)) == values


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "reads 'label=value"),
        ("s.depth", "no 'label=value'"),
        ("s.dept=2", "did you mean 's.depth'"),
        ("s.depth=1 s.depth=1", "twice"),
        ("s.depth=1 s.block0.k=3 s.block1.k=3 op=pool", "absent unless"),
        ("s.depth=1 op=pool", "no value for choice 's.block0.k'"),
        ("s.depth=1 s.block0.k=4 op=pool", "not one of"),
    ],
)
def test_bad_text_is_refused_naming_the_choice(text: str, match: str) -> None:
    with pytest.raises(InvalidGenotypeError, match=match):
        nested().parse(text)


def test_sample_neighbours_and_encoding_stay_canonical() -> None:
    d = nested()
    rng = random.Random(0)
    for _ in range(50):
        values = d.sample(rng)
        d.check(values)
        ns = d.neighbours(values)
        assert values not in ns and len(set(ns)) == len(ns)
        for n in ns:
            d.check(n)
        assert d.decode(d.encode(values)) == values
    present = sum(d.present((1, 3, 3, 3, "pool", 8)))
    assert present == 3 and d.encode((1, 3, 3, 3, "pool", 8)).count(1.0) == present


def test_a_declaration_needs_a_choice_and_parents_first() -> None:
    with pytest.raises(DeclarationError, match="declares no choice"):
        Declaration("empty", [])
    late = [
        DeclaredChoice("k", VALUE, (3, 5), "k", "", Condition("d", {2})),
        DeclaredChoice("d", DEPTH, (1, 2), "depth", ""),
    ]
    with pytest.raises(DeclarationError, match="comes after it"):
        Declaration("late", late)
