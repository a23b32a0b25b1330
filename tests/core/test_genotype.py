from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nasforge import Genotype
from nasforge.kernel.errors import InvalidGenotypeError

choice = st.one_of(st.text(min_size=0, max_size=12), st.integers(min_value=-(2**62), max_value=2**62))
genotypes = st.builds(
    Genotype,
    space=st.text(min_size=1, max_size=10),
    version=st.text(min_size=1, max_size=4),
    choices=st.lists(choice, max_size=20).map(tuple),
)


@pytest.mark.slow
@given(genotypes)
def test_tensor_round_trip_is_lossless(g: Genotype) -> None:
    tensors, meta = g.to_tensors()
    back = Genotype.from_tensors(tensors, meta)
    assert back == g
    assert [type(c) for c in back.choices] == [type(c) for c in g.choices]


@pytest.mark.slow
@given(genotypes)
def test_json_round_trip(g: Genotype) -> None:
    assert Genotype.from_json(g.to_json()) == g


def test_hashable_and_frozen() -> None:
    g = Genotype("s", "1", ("a", 1))
    assert {g: 1}[Genotype("s", "1", ["a", 1])] == 1
    with pytest.raises(AttributeError):
        g.space = "t"  # type: ignore[misc]


@pytest.mark.parametrize("bad", [(1.5,), (True,), (None,)])
def test_rejects_non_discrete_choices(bad: tuple) -> None:
    with pytest.raises(TypeError):
        Genotype("s", "1", bad)


def test_rejects_empty_space_name() -> None:
    with pytest.raises(ValueError):
        Genotype("", "1", ())


def test_from_tensors_rejects_inconsistent_input() -> None:
    tensors, meta = Genotype("s", "1", ("a", "b")).to_tensors()
    with pytest.raises(ValueError):
        Genotype.from_tensors(tensors, {k: v for k, v in meta.items() if k != "names"})
    meta["names"] = "[]"
    with pytest.raises(ValueError):
        Genotype.from_tensors(tensors, meta)


@pytest.mark.parametrize("code", [-1, -(2**40), 2, 10**12])
def test_from_tensors_refuses_name_codes_out_of_range(code: int) -> None:
    """-1 would otherwise decode as the last name (Python's negative index), silently."""
    tensors, meta = Genotype("s", "1", ("a", "b", 7)).to_tensors()
    tensors["choices"][0] = code
    with pytest.raises(InvalidGenotypeError, match=rf"^name code {code} out of range for 2 names$") as info:
        Genotype.from_tensors(tensors, meta)
    assert isinstance(info.value, ValueError)  # callers that caught ValueError still do


def test_from_tensors_keeps_negative_integer_choices_and_refuses_unknown_kinds() -> None:
    tensors, meta = Genotype("s", "1", ("a", -1)).to_tensors()
    assert Genotype.from_tensors(tensors, meta).choices == ("a", -1)  # kind 0: the integer itself
    tensors["choice_is_name"][1] = 2
    with pytest.raises(InvalidGenotypeError, match="not a flat integer code"):
        Genotype.from_tensors(tensors, meta)
    meta["names"] = "[not json"
    with pytest.raises(InvalidGenotypeError, match="names metadata is not JSON"):
        Genotype.from_tensors(tensors, meta)
