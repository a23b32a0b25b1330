"""The boundary checks behind the one-line option errors: types, ranges, JSON depth."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import attrs
import numpy as np
import pytest

from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.option_types import (
    INT_MAX,
    as_float,
    as_tuple,
    check_option,
    check_options,
    in_range,
    one_of,
    typed,
)
from nasforge.kernel.run_context import ContextError, RunContext
from nasforge.run.construction import build_component
from nasforge.run.spec import ExperimentSpec
from nasforge.tools.cli.error_lines import MAX_CHARS, one_line
from nasforge.tools.cli.options import MAX_DEPTH, json_depth, parse_options


@pytest.mark.parametrize(
    ("hint", "good", "bad"),
    [
        (int, [0, -3, INT_MAX, np.int64(7)], [True, 1.0, "1", None, INT_MAX + 1, [1]]),
        (float, [0, 1.5, -1e300, np.float32(2.0)], [True, float("inf"), float("nan"), "1", 10**400]),
        (bool, [True, False], [0, 1, "true", None]),
        (str, ["", "x"], [1, None, ["x"]]),
        (int | None, [None, 3], ["3", 3.0]),
        (Literal["a", 1], ["a", 1], ["b", True, 1.0]),
        (list[int], [[], [1, 2], (1,)], [[1, "2"], "12", {"a": 1}, [True]]),
        (tuple[float, float], [[0.5, 1], (0.1, 0.2)], [[0.5], [0.5, 1, 2], ["a", 1]]),
        (dict[str, Any], [{}, {"C": 8, "x": [1]}], [[], [["C", 8]], "C=8"]),
        (Path, ["runs/a", Path("x")], [1, None]),
        (Any, [object(), None, 10**400], []),
    ],
)
def test_values_against_hints(hint: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        check_option("opt", value, hint)
    for value in bad:
        with pytest.raises(OptionError, match="option 'opt'"):
            check_option("opt", value, hint)


def test_messages_say_what_was_expected() -> None:
    with pytest.raises(OptionError, match=r"expects a list of integers, got \[1, 'x'\]"):
        check_option("shape", [1, "x"], list[int])
    with pytest.raises(OptionError, match="expects one of 'fix', 'ada', got 'fx'"):
        check_option("mode", "fx", Literal["fix", "ada"])
    with pytest.raises(OptionError, match="must fit in 64 bits, got an integer of about 401 digits"):
        check_option("n", 10**400, int)
    assert issubclass(OptionError, NasforgeError) and issubclass(OptionError, ValueError)


@attrs.frozen
class Settings:
    steps: int = attrs.field(default=1, validator=[typed, in_range(ge=1)])
    lr: float = attrs.field(default=0.1, converter=as_float, validator=in_range(gt=0, lt=1))
    shape: tuple[int, ...] | None = attrs.field(default=None, converter=as_tuple)
    mode: str = attrs.field(default="a", validator=one_of(("a", "b")))


def test_attrs_helpers() -> None:
    s = Settings(steps=3, lr=np.float64(0.5), shape=[1, 2])
    assert (s.lr, type(s.lr), s.shape) == (0.5, float, (1, 2))
    for kwargs, message in [
        ({"steps": True}, "option 'steps' expects an integer, got True"),
        ({"steps": 0}, "option 'steps' must be >= 1, got 0"),
        ({"lr": "0.5"}, "option 'lr' expects a finite number, got '0.5'"),
        ({"lr": 1}, "option 'lr' must be < 1, got 1.0"),
        ({"shape": [1, "2"]}, "option 'shape' expects a list of integers or null, got [1, '2']"),
        ({"mode": "c"}, "option 'mode' must be one of 'a', 'b', got 'c'"),
    ]:
        with pytest.raises(OptionError) as info:
            Settings(**kwargs)
        assert str(info.value) == message


def test_call_options_by_name_and_type() -> None:
    def build(g: object, C: int = 16, N: int = 5) -> None: ...

    check_options("net", build, {"C": 8, "N": 1}, accepted=["C", "N"])
    with pytest.raises(OptionError, match=r"^net does not accept option 'c'; did you mean 'C'\?"):
        check_options("net", build, {"c": 8}, accepted=["C", "N"])
    with pytest.raises(OptionError, match=r"^net: option 'N' expects an integer"):
        check_options("net", build, {"N": "5"}, accepted=["C", "N"])


def test_build_component_names_the_component_for_errors_the_constructor_raises() -> None:
    class Thing:
        name = "thing"

        def __init__(self, *, size: int = 1) -> None:
            if size > 10:
                raise ValueError("size too large", "extra attrs-style argument")

    with pytest.raises(OptionError, match=r"^widget 'thing': size too large$"):
        build_component("widget", Thing, RunContext(), {"size": 11})

    class Buggy:
        name = "buggy"

        def __init__(self) -> None:
            raise TypeError("a bug, not the user's input")

    # no user options: the component cannot be built at all, said in one line naming it
    with pytest.raises(ContextError, match=r"^widget 'buggy' \(plugin 'p'\) cannot be built .*a bug"):
        build_component("widget", Buggy, RunContext(), {}, plugin="p")


def test_the_run_supplies_declared_data_and_registry_but_a_component_may_own_a_data_option() -> None:
    class Declares:
        name = "declares"
        context_fields = frozenset({"data", "registry"})

        def __init__(self, *, data: Any = None, registry: Any = None) -> None:
            self.data, self.registry = data, registry

    with pytest.raises(OptionError, match=r"^widget 'declares': option 'data' is supplied by the run"):
        build_component("widget", Declares, RunContext(), {"data": "digits"})
    built = build_component("widget", Declares, RunContext(data="loaded", registry="reg"), {})  # type: ignore[arg-type]
    assert (built.data, built.registry) == ("loaded", "reg")

    class Owns:  # HNAS: its pool's dataset is a flat option named data
        name = "owns"

        def __init__(self, **options: Any) -> None:
            self.options = options

    assert build_component("widget", Owns, RunContext(), {"data": "digits"}).options == {"data": "digits"}


def test_spec_rejects_mistyped_fields() -> None:
    base = ExperimentSpec("toy", "rea", "toy", None)
    assert ExperimentSpec.from_json(base.to_json()) == base
    with pytest.raises(OptionError, match="option 'strategy_options' expects an object"):
        ExperimentSpec("toy", "rea", "toy", None, strategy_options=[("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="seed must fit in 64 bits"):
        ExperimentSpec("toy", "rea", "toy", None, seed=2**64)
    assert ExperimentSpec("toy", "rea", "toy", None, seed=np.int64(3)).seed == 3
    with pytest.raises(NasforgeError, match="run spec lacks 'strategy', 'evaluator'"):
        ExperimentSpec.from_json({"space": "toy", "budget": None})


def test_parse_options_reads_json_and_refuses_deep_or_huge_values() -> None:
    assert parse_options(["a=1", "b-c=[1, 2]", "d=x", 'e={"C": 8}', "f=" + "9" * 5000]) == {
        "a": 1,
        "b_c": [1, 2],
        "d": "x",
        "e": {"C": 8},
        "f": "9" * 5000,  # past Python's int digit limit: kept as the text it is
    }
    assert json_depth('["[[[[", {"a": "]]"}]') == 2  # brackets inside strings do not count
    assert parse_options(['s="' + "[" * 100 + '"']) == {"s": "[" * 100}  # a JSON string, depth 0
    with pytest.raises(OptionError, match=f"nested {MAX_DEPTH + 1} levels deep"):
        parse_options(["x=" + "[" * (MAX_DEPTH + 1)])
    with pytest.raises(OptionError, match="not of the form key=value"):
        parse_options(["=1"])


def test_one_line_flattens_and_shortens() -> None:
    assert one_line("a\nb\r\n") == "a\\nb"
    long = one_line("x" * 10 * MAX_CHARS)
    assert len(long) <= MAX_CHARS and " ... " in long
