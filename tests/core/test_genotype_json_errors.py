"""A genotype read from JSON (a journal, a request, a fuzzer) that is malformed is the
library's own one-line error, never a raw TypeError, ValueError or KeyError: embedders
catch :class:`~nasforge.NasforgeError`, and the CLI turns it into one line."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasforge import Genotype, InvalidGenotypeError, NasforgeError
from nasforge.api import load_space

GOOD = {"space": "nb201", "version": "1", "choices": ["none"] * 6}

MALFORMED = [
    None,
    42,
    "nb201",
    [],
    ["nb201", "1", []],
    {},
    {"space": "nb201", "version": "1"},
    {"space": "nb201", "choices": []},
    {"version": "1", "choices": []},
    {**GOOD, "space": 7},
    {**GOOD, "space": ""},
    {**GOOD, "version": None},
    {**GOOD, "version": ""},
    {**GOOD, "choices": None},
    {**GOOD, "choices": 12},
    {**GOOD, "choices": "none"},
    {**GOOD, "choices": [["none"]]},
    {**GOOD, "choices": [{"op": "none"}]},
    {**GOOD, "choices": [1.5]},
    {**GOOD, "choices": [True]},
    {**GOOD, "choices": [None]},
    {**GOOD, "choices": [math.nan]},
]


@pytest.mark.parametrize("data", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_json_is_an_invalid_genotype(data: object) -> None:
    with pytest.raises(InvalidGenotypeError) as caught:
        Genotype.from_json(data)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value).strip()


def test_a_space_refuses_what_is_not_a_genotype() -> None:
    space = load_space("nb201")
    for bad in (None, GOOD, "|none~0|", ("nb201", "1", ())):
        with pytest.raises(InvalidGenotypeError):
            space.validate(bad)  # type: ignore[arg-type]


def test_good_json_round_trips() -> None:
    g = Genotype.from_json(GOOD)
    assert g.to_json() == GOOD and Genotype.from_json(g.to_json()) == g


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.one_of(
        _json,
        st.fixed_dictionaries({"space": _json, "version": _json, "choices": _json}),
        st.fixed_dictionaries(
            {"space": st.text(max_size=5), "version": st.text(max_size=3), "choices": _json}
        ),
    )
)
def test_any_json_is_a_genotype_or_the_librarys_error(data: object) -> None:
    """Whatever a JSON document holds, ``from_json`` and a space's ``validate`` either take
    it or raise the library's error."""
    space = load_space("nb201")
    try:
        g = Genotype.from_json(data)  # type: ignore[arg-type]
        space.validate(g)
    except NasforgeError:
        return
