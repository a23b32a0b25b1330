"""The benchmark string form: exact round trips and one-line errors that say what is wrong."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nasforge.kernel.errors import InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge_nb201 import NB201Space, arch

RESNET = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
GOOD = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


@pytest.mark.slow
def test_every_table_string_round_trips(space, table_strings) -> None:
    assert len(table_strings) == 15_625
    for text in table_strings:
        g = space.parse(text)
        assert space.format(g) == text
        assert arch.from_code(arch.to_code(g.choices)) == g.choices


def test_table_strings_cover_every_code_once(table_strings) -> None:
    codes = {arch.to_code(arch.from_string(t)) for t in table_strings}
    assert codes == set(range(arch.SPACE_SIZE))


def test_choices_follow_edge_order(space) -> None:
    g = space.parse(GOOD)
    assert g == Genotype(
        "nb201",
        "1",
        ("nor_conv_3x3", "nor_conv_3x3", "avg_pool_3x3", "skip_connect", "nor_conv_3x3", "skip_connect"),
    )
    assert arch.EDGES == ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))


def test_surrounding_whitespace_is_tolerated(space) -> None:
    assert space.format(space.parse(f"  {RESNET}\n")) == RESNET


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "expected 3 nodes"),
        ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|", "expected 3 nodes"),
        (RESNET + "+|none~0|", "expected 3 nodes"),
        (
            "|nor_conv_3x3~0|+|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|",
            "node 2 must have 2 incoming edge(s), got 1",
        ),
        (
            "|none~0|none~1|+|none~0|none~1|+|none~0|none~1|none~2|",
            "node 1 must have 1 incoming edge(s), got 2",
        ),
        (
            "|nor_conv_3x3~0|+|nor_conv_3x3~0|conv_3x3~1|+|none~0|none~1|none~2|",
            "did you mean 'nor_conv_3x3'?",
        ),
        (
            "|skip~0|+|none~0|none~1|+|none~0|none~1|none~2|",
            "did you mean 'skip_connect'?",
        ),
        (
            "|nor_conv_3x3~1|+|none~0|none~1|+|none~0|none~1|none~2|",
            "must read from input 0, got '1'",
        ),
        (
            "|none~0|+|none~1|none~0|+|none~0|none~1|none~2|",
            "must read from input 0, got '1'",
        ),
        ("|none|+|none~0|none~1|+|none~0|none~1|none~2|", "must be 'op~0'"),
        ("none~0+|none~0|none~1|+|none~0|none~1|none~2|", "must be written as '|op~i|...|'"),
        ("|||+|||", "expected 3 nodes separated by '+', got 2"),
        ("||+|none~0|none~1|+|none~0|none~1|none~2|", "edge '' of node 1 must be 'op~0'"),
    ],
)
def test_malformed_strings_raise_one_clear_line(space, text: str, expected: str) -> None:
    with pytest.raises(InvalidGenotypeError) as info:
        space.parse(text)
    message = str(info.value)
    assert expected in message
    assert message.startswith("invalid NAS-Bench-201 string")
    assert "\n" not in message


def test_unknown_op_message_lists_the_vocabulary(space) -> None:
    with pytest.raises(InvalidGenotypeError, match="known: none, skip_connect, nor_conv_1x1"):
        space.parse("|maxpool~0|+|none~0|none~1|+|none~0|none~1|none~2|")


def test_non_string_input_raises(space) -> None:
    with pytest.raises(InvalidGenotypeError, match="must be str"):
        space.parse(None)  # type: ignore[arg-type]


def test_huge_garbage_is_truncated_in_the_message(space) -> None:
    with pytest.raises(InvalidGenotypeError) as info:
        space.parse("x" * 10_000)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    ("choices", "expected"),
    [
        (("none",) * 5, "6 edges (one op each), got 5 choices"),
        (("none",) * 5 + ("avgpool",), "edge 3<-2: unknown op 'avgpool'; did you mean 'avg_pool_3x3'?"),
        ((0, 1, 2, 3, 4, 0), "edge 1<-0: unknown op 0"),
    ],
)
def test_validate_explains_bad_choices(space, choices: tuple, expected: str) -> None:
    with pytest.raises(InvalidGenotypeError) as info:
        space.validate(Genotype("nb201", "1", choices))
    assert expected in str(info.value)


def test_format_refuses_foreign_genotypes(space) -> None:
    with pytest.raises(InvalidGenotypeError, match="space 'darts'"):
        space.format(Genotype("darts", "1", ("none",) * 6))


@pytest.mark.parametrize("code", [-1, 15_625, 1.5, True, "3"])
def test_code_range_is_checked(code) -> None:
    with pytest.raises(InvalidGenotypeError, match=r"\[0, 15625\)"):
        arch.from_code(code)


def test_code_is_base5_first_edge_most_significant() -> None:
    assert arch.to_code(("none",) * 6) == 0
    assert arch.to_code(("none",) * 5 + ("skip_connect",)) == 1
    assert arch.to_code(("skip_connect",) + ("none",) * 5) == 5**5
    assert arch.to_code(("avg_pool_3x3",) * 6) == 15_624


_PIECES = st.sampled_from(
    ["|", "+", "~", "0", "1", "2", "3", " ", "none", "skip_connect", "nor_conv_3x3", "x"]
)


@pytest.mark.slow
@settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=40).map("".join) | st.text(max_size=60))
def test_parse_never_fails_any_other_way(text: str) -> None:
    """Any text either parses to a cell that formats back to it, or raises the one error."""
    space = NB201Space()
    try:
        g = space.parse(text)
    except InvalidGenotypeError as exc:
        assert "\n" not in str(exc)
    else:
        assert space.format(g) == text.strip()


@pytest.mark.slow
@settings(max_examples=200, derandomize=True)
@given(st.lists(st.sampled_from(arch.OP_NAMES), min_size=6, max_size=6))
def test_format_parse_round_trip_property(ops: list[str]) -> None:
    space = NB201Space()
    g = space.genotype(ops)
    assert space.parse(space.format(g)) == g
