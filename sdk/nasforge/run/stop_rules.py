"""Rules that end a search early: a target reached, a time limit, a plateau.

A budget says how much a run may spend; a stop rule says when spending more is pointless
(the accuracy wanted is reached, the best has not moved for a while) or no longer wanted
(a wall-clock limit). The experiment checks its rules after every recorded trial, and a
run a rule stops ends normally: its journal gets an end record that carries the reason,
so ``nasforge resume`` of it adds nothing and ``nasforge inspect`` says why it stopped.

Rules are frozen attrs classes with a canonical text form, so a spec (and the journal
header that records it) holds them as text, and a resumed run obeys the same rules:

- ``valid_accuracy>=93`` (:class:`TargetReached`): a feasible trial reached the value;
- ``time:600`` or ``time:3600:simulated`` (:class:`TimeLimit`): that many seconds of the
  search's wall clock (or of the simulated clock of a tabular benchmark);
- ``plateau:20`` (:class:`Plateau`): the run's best has not changed in 20 trials;
- ``A & B`` (:class:`AllOf`): every one of the rules holds. A list of rules stops when any
  one of them does.

Plugins and callbacks that need code rather than a rule implement the
``nasforge_should_stop`` hook instead.

Named apart from :mod:`nasforge.run.stop_judge`, which applies these rules (and the hook)
to a running experiment: this module holds the rules as values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import attrs
from attrs import validators as v

from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.result import Trial

__all__ = [
    "AllOf",
    "Plateau",
    "StopContext",
    "StopRule",
    "StopRuleError",
    "TargetReached",
    "TimeLimit",
    "as_rule",
    "check_rules",
    "first_stop",
    "parse_rule",
    "rule_texts",
]


class StopRuleError(NasforgeError):
    """A stop rule that cannot be read or cannot apply to the run."""


@attrs.frozen
class StopContext:
    """What a rule may look at after a trial: every trial so far (the newest last), the
    run's goal, the trials since its best last changed and its two clocks."""

    trials: Sequence[Trial]
    goal: Any
    trials_since_improvement: int
    wall_seconds: float
    simulated_seconds: float

    @property
    def last(self) -> Trial:
        return self.trials[-1]


@runtime_checkable
class StopRule(Protocol):
    """``reason(ctx)`` is why the run should stop now, or None; ``text`` round-trips
    through :func:`parse_rule`."""

    @property
    def text(self) -> str: ...

    def reason(self, ctx: StopContext) -> str | None: ...


def _number_or_as_is(value: Any) -> Any:
    """A float where ``value`` is a number; as it is otherwise, for the validator to name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return float(value)


def _finite(_inst: Any, attr: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise StopRuleError(f"{attr.name} must be a finite number, got {value!r}")


def _positive(_inst: Any, attr: attrs.Attribute, value: float) -> None:
    _finite(_inst, attr, value)
    if value <= 0:
        raise StopRuleError(f"{attr.name} must be positive, got {value!r}")


def _clock(_inst: Any, attr: attrs.Attribute, value: str) -> None:
    if value not in ("wall", "simulated"):
        raise StopRuleError(f"a time limit's clock is 'wall' or 'simulated', got {value!r}")


def _count(_inst: Any, attr: attrs.Attribute, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise StopRuleError(f"{attr.name} must be a whole number of at least 1, got {value!r}")


def _name(_inst: Any, attr: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][\w.\-]*", value):
        raise StopRuleError(f"{attr.name} must be an objective name like 'valid_accuracy', got {value!r}")


@attrs.frozen
class TargetReached:
    """Stop once a feasible, successful trial has ``objective`` at ``value`` or better:
    ``>=`` (``at_least``) or ``<=``. Only trials the goal counts feasible count, so a
    target is never "reached" by an architecture the run could not choose."""

    kind: ClassVar[str] = "target"
    objective: str = attrs.field(validator=_name)
    value: float = attrs.field(converter=_number_or_as_is, validator=_finite)
    at_least: bool = attrs.field(default=True, validator=v.instance_of(bool))

    @property
    def text(self) -> str:
        return f"{self.objective}{'>=' if self.at_least else '<='}{self.value:g}"

    def reason(self, ctx: StopContext) -> str | None:
        result = ctx.last.result
        got = result.objectives.get(self.objective)
        if result.failed or got is None or not math.isfinite(got) or not ctx.goal.feasible(result):
            return None
        if (got >= self.value) if self.at_least else (got <= self.value):
            return f"target {self.text} reached by trial {ctx.last.index} ({self.objective} {got:.6g})"
        return None


@attrs.frozen
class TimeLimit:
    """Stop once the search has run ``seconds`` on its ``clock``: ``wall`` (every session
    of the run together, as the budget counts) or ``simulated`` (the sum of the trials'
    costs: a tabular benchmark's recorded training time)."""

    kind: ClassVar[str] = "time"
    seconds: float = attrs.field(converter=_number_or_as_is, validator=_positive)
    clock: Literal["wall", "simulated"] = attrs.field(default="wall", validator=_clock)

    @property
    def text(self) -> str:
        return f"time:{self.seconds:g}" + (":simulated" if self.clock == "simulated" else "")

    def reason(self, ctx: StopContext) -> str | None:
        spent = ctx.wall_seconds if self.clock == "wall" else ctx.simulated_seconds
        if spent >= self.seconds:
            return f"time limit {self.seconds:g} s ({self.clock}) reached after {spent:.1f} s"
        return None


@attrs.frozen
class Plateau:
    """Stop once the run's best (by its goal: the best objective, feasible first) has not
    changed for ``trials`` consecutive trials."""

    kind: ClassVar[str] = "plateau"
    trials: int = attrs.field(validator=_count)

    @property
    def text(self) -> str:
        return f"plateau:{self.trials}"

    def reason(self, ctx: StopContext) -> str | None:
        if ctx.trials_since_improvement >= self.trials:
            return f"plateau: the best has not changed in {ctx.trials_since_improvement} trials"
        return None


def _rules(value: Iterable[Any]) -> tuple[StopRule, ...]:
    """The rules, a nested AllOf's inlined (its text reads back flat)."""
    rules: tuple[StopRule, ...] = ()
    for r in value:
        rule = as_rule(r)
        rules += rule.rules if isinstance(rule, AllOf) else (rule,)
    if len(rules) < 2:
        raise StopRuleError("AllOf needs at least two rules")
    return rules


@attrs.frozen
class AllOf:
    """Stop when every one of ``rules`` holds at once (e.g. a target, but not before an
    hour: ``valid_accuracy>=93 & time:3600``)."""

    kind: ClassVar[str] = "all"
    rules: tuple[StopRule, ...] = attrs.field(converter=_rules)

    @property
    def text(self) -> str:
        return " & ".join(r.text for r in self.rules)

    def reason(self, ctx: StopContext) -> str | None:
        reasons = []
        for rule in self.rules:
            why = rule.reason(ctx)
            if why is None:
                return None
            reasons.append(why)
        return "; ".join(reasons)


_TARGET = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(>=|<=)\s*(\S+)\s*$")


def _number(text: str, what: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise StopRuleError(f"stop rule {what}: '{text}' is not a number") from None
    return number


def parse_rule(text: str) -> StopRule:
    """The rule ``text`` names (see the module's list); a bad one is one line saying what is
    expected."""
    if not isinstance(text, str) or not text.strip():
        raise StopRuleError(f"a stop rule is text like 'valid_accuracy>=93', got {text!r}")
    parts = [p.strip() for p in text.split("&")]
    if len(parts) > 1:
        return AllOf([parse_rule(p) for p in parts])
    body = parts[0]
    head, _, rest = body.partition(":")
    if head == "time" and rest:
        seconds, _, clock = rest.partition(":")
        return TimeLimit(_number(seconds, repr(body)), clock or "wall")
    if head == "plateau" and rest:
        if not rest.isdigit():
            raise StopRuleError(f"stop rule {body!r}: plateau takes a whole number of trials")
        return Plateau(int(rest))
    match = _TARGET.match(body)
    if match:
        return TargetReached(match[1], _number(match[3], repr(body)), at_least=match[2] == ">=")
    raise StopRuleError(
        f"cannot read the stop rule {body!r}: expected OBJECTIVE>=VALUE, OBJECTIVE<=VALUE, "
        "time:SECONDS[:simulated] or plateau:TRIALS (join rules that must all hold with '&')"
    )


def as_rule(rule: Any) -> StopRule:
    """A rule from its text or itself (anything with ``text`` and ``reason``)."""
    if isinstance(rule, str):
        return parse_rule(rule)
    if isinstance(rule, StopRule):
        return rule
    raise StopRuleError(f"a stop rule is text like 'valid_accuracy>=93' or a rule object, got {rule!r}")


def rule_texts(rules: Any) -> tuple[str, ...]:
    """The canonical texts of ``rules`` (one rule or text, or a sequence of them): what a spec
    and a journal hold. A rule whose text does not read back as an equal rule is refused,
    since a resumed run would obey another one."""
    if rules is None:
        return ()
    if isinstance(rules, str | StopRule):
        rules = [rules]
    out = []
    for rule in rules:
        rule = as_rule(rule)
        if parse_rule(rule.text) != rule:
            raise StopRuleError(
                f"stop rule {rule!r} has no text form that reads back as itself; a run records its "
                "rules as text, so use the nasforge_should_stop hook for custom stopping"
            )
        out.append(rule.text)
    return tuple(out)


def check_rules(rules: Sequence[StopRule], goal: Any, measured: Iterable[str] | None) -> None:
    """Refuse, before any trial, a target on an objective the run never measures
    (``measured``: what the evaluator declares, None when it declares nothing)."""
    known = None if measured is None else set(measured) | {o.name for o in goal.objectives}
    for rule in rules:
        inner = rule.rules if isinstance(rule, AllOf) else (rule,)
        for part in inner:
            if isinstance(part, TargetReached) and known is not None and part.objective not in known:
                raise StopRuleError(
                    f"stop rule {part.text}: the evaluator measures no '{part.objective}' "
                    f"(it measures: {', '.join(sorted(known))})"
                )


def first_stop(rules: Sequence[StopRule], ctx: StopContext) -> tuple[str, str] | None:
    """(rule text, reason) of the first of ``rules`` that holds, else None."""
    for rule in rules:
        why = rule.reason(ctx)
        if why is not None:
            return rule.text, why
    return None
