"""What a run optimises and what it must obey: objectives, constraints, and their goal.

Results carry every number an evaluator measures (validation and test accuracy, latency,
size, ...); a run names the ones it optimises (``--objective NAME:max|min``, repeatable)
and the bounds it must respect (``--constraint 'NAME<=VALUE'`` or ``>=``). Both arrive as
text from a command line or a journal, so they are parsed here into frozen, validated
values, and written back in the same canonical text (the spec records that text).

:class:`SearchGoal` puts them together for the two readers that rank results:

- strategies receive it as their ``objective`` (it *is* an
  :class:`~nasforge.kernel.result.Objective`, of the first objective), so every strategy, old or
  third-party, ranks an infeasible result last through ``fitness`` without knowing
  constraints exist; multi-objective strategies read ``objectives`` and ``violation``;
- runs pick their best and their Pareto front with it (:meth:`SearchGoal.front`), so an
  infeasible result never becomes the best, whatever the strategy did.

Constraint handling follows Deb's rules: feasible beats infeasible, a smaller violation
beats a larger one, and among feasible results the objectives decide.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from nasforge.kernel.errors import OptionError, show
from nasforge.kernel.result import Objective, Result, Trial, best_trial

#: Directions as written on the command line.
MAX, MIN = "max", "min"
#: Constraint operators (non-strict: a bound is a budget one may spend entirely).
LE, GE = "<=", ">="
Op = Literal["<=", ">="]

#: Objective names as results spell them: no colons or comparison signs, no space at the ends.
_NAME = re.compile(r"[^\s:<>=!]([^:<>=!]*[^\s:<>=!])?")


def _check_name(kind: str, text: str, name: str) -> str:
    if not _NAME.fullmatch(name):
        raise OptionError(f"{kind} {show(text)}: {show(name)} is not an objective name")
    return name


# --- objectives -----------------------------------------------------------------------------
def objective_text(objective: Objective) -> str:
    """``valid_accuracy:max``: the canonical text of an objective (what the spec records)."""
    return f"{objective.name}:{MAX if objective.higher_is_better else MIN}"


def parse_objective(text: str) -> Objective:
    """``NAME:max`` or ``NAME:min`` -> :class:`Objective`; anything else is one line."""
    if not isinstance(text, str):
        raise OptionError(f"an objective must be text like 'valid_accuracy:max', got {show(text)}")
    name, sep, direction = text.strip().rpartition(":")
    if not sep:
        raise OptionError(f"objective {show(text)}: expected NAME:max or NAME:min, e.g. latency_ms:min")
    direction = direction.strip().lower()
    if direction not in (MAX, MIN):
        raise OptionError(
            f"objective {show(text)}: the direction must be 'max' or 'min', got {show(direction)}"
        )
    return Objective(_check_name("objective", text, name.strip()), higher_is_better=direction == MAX)


def as_objective(value: str | Objective | Mapping[str, Any]) -> Objective:
    """An objective given as text, as an :class:`Objective` or as its JSON object."""
    if isinstance(value, Objective):
        return Objective(value.name, value.higher_is_better)  # a SearchGoal stands for its first
    if isinstance(value, Mapping):
        try:
            return Objective(str(value["name"]), bool(value.get("higher_is_better", True)))
        except (KeyError, ValueError) as exc:
            raise OptionError(f"objective {show(dict(value))}: needs a 'name'") from exc
    return parse_objective(value)


# --- constraints ----------------------------------------------------------------------------
def _finite(_instance: Any, _attribute: attrs.Attribute, value: float) -> None:
    if not math.isfinite(value):
        raise OptionError(f"a constraint's bound must be a finite number, got {show(value)}")


def _op(_instance: Any, _attribute: attrs.Attribute, value: str) -> None:
    if value not in (LE, GE):
        raise OptionError(f"a constraint's operator must be '<=' or '>=', got {show(value)}")


def _bound(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptionError(f"a constraint's bound must be a number, got {show(value)}")
    return float(value)


def _name(_instance: Any, _attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise OptionError(f"{show(value)} is not an objective name")


@attrs.frozen
class Constraint:
    """``name op bound``: a result is feasible when its ``name`` value satisfies it.

    A result that failed, or lacks ``name``, or holds NaN there, satisfies no constraint
    (nothing unmeasured may pass for feasible).
    """

    name: str = attrs.field(validator=_name)
    op: Op = attrs.field(validator=_op)
    bound: float = attrs.field(converter=_bound, validator=_finite)

    def value(self, result: Result) -> float:
        value = result.objectives.get(self.name, math.nan)
        return math.nan if result.failed else float(value)

    def satisfied(self, result: Result) -> bool:
        value = self.value(result)
        if not math.isfinite(value):
            return False
        return value <= self.bound if self.op == LE else value >= self.bound

    def violation(self, result: Result) -> float:
        """0 when satisfied; else how far beyond the bound, relative to it (so several
        constraints in different units add up sensibly); infinite when unmeasured."""
        value = self.value(result)
        if not math.isfinite(value):
            return math.inf
        excess = value - self.bound if self.op == LE else self.bound - value
        return max(0.0, excess) / (abs(self.bound) or 1.0)

    def text(self) -> str:
        """``latency_ms<=12``: the canonical text (what the spec records; parses back exactly)."""
        bound = self.bound
        shown = str(int(bound)) if bound.is_integer() and abs(bound) < 1e15 else repr(bound)
        return f"{self.name}{self.op}{shown}"

    def __str__(self) -> str:
        return self.text()


_CONSTRAINT = re.compile(r"\s*(?P<name>[^<>=!\s]+)\s*(?P<op><=|>=)\s*(?P<bound>\S+)\s*")


def parse_constraint(text: str) -> Constraint:
    """``NAME<=VALUE`` or ``NAME>=VALUE`` -> :class:`Constraint`; anything else is one line."""
    if not isinstance(text, str):
        raise OptionError(f"a constraint must be text like 'latency_ms<=12', got {show(text)}")
    match = _CONSTRAINT.fullmatch(text)
    if match is None:
        raise OptionError(
            f"constraint {show(text)}: expected NAME<=VALUE or NAME>=VALUE, e.g. 'latency_ms<=12'"
        )
    try:
        bound = float(match["bound"])
    except ValueError:
        raise OptionError(f"constraint {show(text)}: the bound {show(match['bound'])} is no number") from None
    if not math.isfinite(bound):
        raise OptionError(f"constraint {show(text)}: the bound must be a finite number")
    return Constraint(match["name"], match["op"], bound)  # type: ignore[arg-type]


def as_constraint(value: str | Constraint) -> Constraint:
    """A constraint given as text or as a :class:`Constraint`."""
    return value if isinstance(value, Constraint) else parse_constraint(value)


def objective_texts(values: Iterable[str | Objective] | None) -> tuple[str, ...]:
    """Canonical texts of objectives given as text or objects; a name given twice is refused."""
    if values is None:
        return ()
    if isinstance(values, str | Objective):
        values = [values]
    objectives = [as_objective(v) for v in values]
    names = [o.name for o in objectives]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise OptionError(f"objective '{twice[0]}' is named twice")
    return tuple(objective_text(o) for o in objectives)


def constraint_texts(values: Iterable[str | Constraint] | None) -> tuple[str, ...]:
    """Canonical texts of constraints given as text or objects (duplicates dropped)."""
    if values is None:
        return ()
    if isinstance(values, str | Constraint):
        values = [values]
    return tuple(dict.fromkeys(as_constraint(v).text() for v in values))


# --- the goal -------------------------------------------------------------------------------
def _objectives(value: Iterable[Objective]) -> tuple[Objective, ...]:
    return tuple(as_objective(v) for v in value)


def _constraints(value: Iterable[Constraint | str]) -> tuple[Constraint, ...]:
    return tuple(as_constraint(v) for v in value)


@attrs.frozen
class SearchGoal(Objective):
    """A run's objectives (the first is ``name``/``higher_is_better``) and constraints.

    Build it with :meth:`of`. As an :class:`Objective` it stands for the first objective,
    with a ``fitness`` that is ``-inf`` for an infeasible result: what a single-objective
    strategy maximises. ``rank`` orders results for a best (Deb's rules, then the
    objectives in order); ``vector`` and ``violation`` serve multi-objective strategies.
    """

    objectives: tuple[Objective, ...] = attrs.field(default=(), converter=_objectives)
    constraints: tuple[Constraint, ...] = attrs.field(default=(), converter=_constraints)

    def __attrs_post_init__(self) -> None:
        if not self.objectives:
            raise OptionError("a search needs at least one objective")
        first = self.objectives[0]
        if (first.name, first.higher_is_better) != (self.name, self.higher_is_better):
            raise ValueError("SearchGoal.name must be its first objective's; build it with SearchGoal.of")
        objective_texts(self.objectives)  # a name twice is refused

    @classmethod
    def of(
        cls,
        objectives: Sequence[str | Objective] | str | Objective,
        constraints: Sequence[str | Constraint] = (),
    ) -> SearchGoal:
        """The goal of ``objectives`` (text or objects, at least one) under ``constraints``."""
        if isinstance(objectives, str | Objective):
            objectives = [objectives]
        parsed = [as_objective(v) for v in objectives]
        if not parsed:
            raise OptionError("a search needs at least one objective")
        return cls(
            parsed[0].name,
            parsed[0].higher_is_better,
            objectives=parsed,
            constraints=[parse_constraint(t) for t in constraint_texts(constraints)],
        )

    # --- reading one result -----------------------------------------------------------
    @property
    def multi_objective(self) -> bool:
        return len(self.objectives) > 1

    @property
    def maximize(self) -> tuple[bool, ...]:
        """Directions of :meth:`vector` (all True: it holds fitnesses)."""
        return (True,) * len(self.objectives)

    def vector(self, result: Result) -> tuple[float, ...]:
        """Each objective's fitness (larger is better; -inf when failed or unmeasured)."""
        return tuple(o.fitness(result) for o in self.objectives)

    def violation(self, result: Result) -> float:
        """0 for a feasible result; the summed relative excess over the bounds otherwise;
        infinite when the result failed or lacks an objective (nothing to rank it by)."""
        if any(not math.isfinite(v) for v in self.vector(result)):
            return math.inf
        return sum(c.violation(result) for c in self.constraints)

    def feasible(self, result: Result) -> bool:
        return self.violation(result) == 0.0

    def fitness(self, result: Result) -> float:
        """The first objective as a number to maximise; infeasible and failed rank last."""
        return self.vector(result)[0] if self.feasible(result) else -math.inf

    def rank(self, result: Result) -> tuple[float, ...]:
        """Larger is better: feasibility (minus the violation), then each objective in order."""
        return (-self.violation(result), *self.vector(result))

    # --- reading a run ----------------------------------------------------------------
    def best(self, trials: Sequence[Trial]) -> Trial | None:
        """The feasible trial best on the first objective (ties: the next objectives, then
        the earliest). With several objectives it is the front's first member; when
        nothing is feasible it is the least infeasible, so callers check :meth:`feasible`."""
        return best_trial(trials, self)

    def front(self, trials: Sequence[Trial]) -> tuple[Trial, ...]:
        """The Pareto front of ``trials``: feasible, non-dominated, each genotype once (its
        earliest trial), ordered best-first by :meth:`rank` then by trial index, so the
        order is the same whoever computes it and ``front[0]`` is :meth:`best`."""
        seen: set[Any] = set()
        candidates = []
        for t in sorted(trials, key=lambda t: t.index):
            if t.genotype not in seen and self.feasible(t.result):
                seen.add(t.genotype)
                candidates.append(t)
        if not candidates:
            return ()
        from nasforge.kernel.pareto import non_dominated  # only a run's end needs it

        kept = non_dominated([self.vector(t.result) for t in candidates], self.maximize)
        front = [candidates[i] for i in kept]
        front.sort(key=lambda t: (tuple(-v for v in self.vector(t.result)), t.index))
        return tuple(front)

    # --- text -------------------------------------------------------------------------
    def objective_texts(self) -> list[str]:
        return [objective_text(o) for o in self.objectives]

    def constraint_texts(self) -> list[str]:
        return [c.text() for c in self.constraints]

    def describe(self) -> str:
        """``valid_accuracy:max, latency_ms:min subject to latency_ms<=12``."""
        text = ", ".join(self.objective_texts())
        return f"{text} subject to {', '.join(self.constraint_texts())}" if self.constraints else text

    def to_json(self) -> dict[str, list[str]]:
        return {"objectives": self.objective_texts(), "constraints": self.constraint_texts()}

    @classmethod
    def from_json(cls, data: Any) -> SearchGoal:
        if not isinstance(data, Mapping):
            raise OptionError(f"a search goal must be an object, got {show(data)}")
        return cls.of(list(data.get("objectives") or ()), list(data.get("constraints") or ()))


def as_goal(objective: Objective) -> SearchGoal:
    """The goal a strategy was given: a plain objective is a goal of one, unconstrained."""
    return objective if isinstance(objective, SearchGoal) else SearchGoal.of([objective])
