"""Objectives and constraints as parts of a run: parsing, the goal's ranking and front,
the spec and journal that record them, and a run's best under constraints."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from nasforge.kernel.errors import InfeasibleSearchError, JournalError, NasforgeError, OptionError
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.objectives import (
    Constraint,
    SearchGoal,
    as_goal,
    constraint_texts,
    objective_texts,
    parse_constraint,
    parse_objective,
)
from nasforge.kernel.pareto import dominates
from nasforge.kernel.result import Objective, Result, Trial
from nasforge.kernel.testing import ToyEvaluator, ToySpace
from nasforge.run.budget import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.goal_checks import goal_of_header
from nasforge.run.journal_file import journal_path
from nasforge.run.spec import ExperimentSpec, spec_differences
from nasforge_search import NSGA2, RandomSearch, RegularizedEvolution


# --- parsing ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "name", "higher"),
    [("valid_accuracy:max", "valid_accuracy", True), (" latency_ms : MIN ", "latency_ms", False)],
)
def test_objectives_parse(text, name, higher) -> None:
    assert parse_objective(text) == Objective(name, higher_is_better=higher)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("valid_accuracy", "expected NAME:max or NAME:min"),
        ("valid_accuracy:up", "direction must be 'max' or 'min'"),
        (":max", "is not an objective name"),
        ("a=b:max", "is not an objective name"),
        ("x<=3:max", "is not an objective name"),
    ],
)
def test_bad_objectives_are_one_line(text, needle) -> None:
    with pytest.raises(OptionError, match=needle) as info:
        parse_objective(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "constraint"),
    [
        ("latency_ms<=12", Constraint("latency_ms", "<=", 12.0)),
        (" params_mb >= 0.5 ", Constraint("params_mb", ">=", 0.5)),
        ("x<=-1e-3", Constraint("x", "<=", -0.001)),
    ],
)
def test_constraints_parse_and_round_trip(text, constraint) -> None:
    assert parse_constraint(text) == constraint
    assert parse_constraint(constraint.text()) == constraint


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("latency_ms<12", "expected NAME<=VALUE or NAME>=VALUE"),
        ("latency_ms==12", "expected NAME<=VALUE"),
        ("<=12", "expected NAME<=VALUE"),
        ("latency_ms<=", "expected NAME<=VALUE"),
        ("latency_ms<=fast", "is no number"),
        ("latency_ms<=nan", "finite"),
        ("latency_ms<=inf", "finite"),
        ("latency_ms<=1e999", "finite"),
        ("a<=1<=2", "is no number"),
    ],
)
def test_bad_constraints_are_one_line(text, needle) -> None:
    with pytest.raises(OptionError, match=needle) as info:
        parse_constraint(text)
    assert "\n" not in str(info.value)


def test_constraint_objects_validate() -> None:
    with pytest.raises(NasforgeError, match="finite"):
        Constraint("x", "<=", math.nan)
    with pytest.raises(NasforgeError, match="operator"):
        Constraint("x", "<", 1.0)  # type: ignore[arg-type]
    with pytest.raises(NasforgeError, match="number"):
        Constraint("x", "<=", True)  # type: ignore[arg-type]


def test_texts_are_canonical_and_refuse_a_name_twice() -> None:
    assert objective_texts(["a:MAX", Objective("b", higher_is_better=False)]) == ("a:max", "b:min")
    assert constraint_texts(["a <= 12.0", Constraint("a", "<=", 12), "b>=0.1"]) == ("a<=12", "b>=0.1")
    with pytest.raises(OptionError, match="named twice"):
        objective_texts(["a:max", "a:min"])


# --- the goal -----------------------------------------------------------------------------
def _result(**values: float) -> Result:
    return Result(objectives=values)


def test_constraints_decide_feasibility_and_violation() -> None:
    c = Constraint("lat", "<=", 10.0)
    assert c.satisfied(_result(lat=10.0)) and c.violation(_result(lat=10.0)) == 0.0
    assert not c.satisfied(_result(lat=12.0)) and c.violation(_result(lat=12.0)) == pytest.approx(0.2)
    assert not c.satisfied(_result(other=1.0)) and math.isinf(c.violation(_result(other=1.0)))
    assert not c.satisfied(Result(objectives={"lat": 1.0}, failed=True))
    assert not c.satisfied(_result(lat=math.nan))
    assert Constraint("acc", ">=", 0.0).violation(_result(acc=-2.0)) == 2.0  # a zero bound scales by 1


def test_the_goal_ranks_feasible_first_then_by_violation_then_objectives() -> None:
    goal = SearchGoal.of(["acc:max", "lat:min"], ["lat<=10"])
    feasible, near, far = _result(acc=50, lat=9), _result(acc=99, lat=11), _result(acc=99, lat=20)
    failed = Result(objectives={}, failed=True)
    assert goal.fitness(feasible) == 50 and goal.fitness(near) == -math.inf
    ordered = sorted([failed, far, near, feasible], key=goal.rank, reverse=True)
    assert ordered == [feasible, near, far, failed]
    assert goal.rank(_result(acc=50, lat=8)) > goal.rank(feasible)  # ties on acc: latency decides
    assert goal.vector(feasible) == (50, -9) and goal.maximize == (True, True)


def test_a_plain_objective_is_a_goal_of_one() -> None:
    goal = as_goal(Objective("score"))
    assert goal.objectives == (Objective("score"),) and goal.constraints == () and not goal.multi_objective
    assert goal.fitness(_result(score=3.0)) == Objective("score").fitness(_result(score=3.0))
    assert SearchGoal.from_json(goal.to_json()) == goal
    with pytest.raises(OptionError, match="at least one objective"):
        SearchGoal.of([])


def _trials(values: list[tuple[float, float]]) -> list[Trial]:
    return [
        Trial(i, Genotype("toy", "1", (str(i),)), _result(acc=a, lat=lat))
        for i, (a, lat) in enumerate(values)
    ]


def test_front_is_feasible_non_dominated_and_ordered() -> None:
    goal = SearchGoal.of(["acc:max", "lat:min"], ["lat<=10"])
    values = [(a, lat) for a, lat in itertools.product([1.0, 2.0, 3.0, 3.0], [4.0, 8.0, 12.0])]
    trials = _trials(values)
    front = goal.front(trials)
    feasible = [t for t in trials if goal.feasible(t.result)]
    brute = [
        t
        for t in feasible
        if not any(dominates(goal.vector(o.result), goal.vector(t.result), goal.maximize) for o in feasible)
    ]
    assert {t.index for t in front} == {t.index for t in brute}
    assert all(goal.feasible(t.result) for t in front)
    assert [goal.vector(t.result) for t in front] == sorted(
        (goal.vector(t.result) for t in front), reverse=True
    )
    assert goal.best(trials) == front[0]


def test_front_counts_each_genotype_once() -> None:
    goal = SearchGoal.of(["acc:max", "lat:min"])
    g = Genotype("toy", "1", ("a",))
    trials = [Trial(0, g, _result(acc=1, lat=1)), Trial(1, g, _result(acc=1, lat=1))]
    assert goal.front(trials) == (trials[0],)


def test_best_is_never_infeasible_unless_nothing_is_feasible() -> None:
    goal = SearchGoal.of(["acc:max"], ["lat<=10"])
    trials = _trials([(99.0, 20.0), (50.0, 9.0), (98.0, 11.0)])
    assert goal.best(trials).index == 1
    nearest = goal.best(_trials([(99.0, 20.0), (98.0, 11.0)]))
    assert nearest.index == 1 and not goal.feasible(nearest.result)


# --- the spec and the journal ---------------------------------------------------------------
def _spec(**kw) -> ExperimentSpec:
    base = dict(space="toy", strategy="random", evaluator="toy", budget=Budget(trials=8))
    return ExperimentSpec(**{**base, **kw})


def test_the_spec_records_canonical_text_and_reads_it_back() -> None:
    spec = _spec(
        objectives=["score:MAX", Objective("size", False)], constraints=[Constraint("size", "<=", 4)]
    )
    assert spec.objectives == ("score:max", "size:min") and spec.constraints == ("size<=4",)
    data = json.loads(json.dumps(spec.to_json()))
    assert data["objectives"] == ["score:max", "size:min"] and data["constraints"] == ["size<=4"]
    assert ExperimentSpec.from_json(data) == spec


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("objectives", ["score"], "expected NAME:max"),
        ("objectives", [3], "objectives"),
        ("constraints", ["size<4"], "expected NAME<=VALUE"),
        ("constraints", "size<=4", "constraints"),
    ],
)
def test_a_journal_spec_with_bad_goal_fields_is_one_line(field, value, needle) -> None:
    data = {**_spec().to_json(), field: value}
    with pytest.raises(NasforgeError, match=needle):
        ExperimentSpec.from_json(data)


def test_spec_differences_names_objectives_and_constraints() -> None:
    from nasforge.kernel.registry import get_registry

    registry = get_registry()
    old = _spec().to_json()
    del old["objectives"], old["constraints"]  # a journal from before they existed
    assert spec_differences(old, _spec(), registry) == []
    assert spec_differences(old, _spec(constraints=["size<=4"]), registry) == ["constraints"]
    assert spec_differences(_spec(objectives=["score:max"]).to_json(), _spec(), registry) == ["objectives"]


def _experiment(run_dir=None, strategy_cls=RandomSearch, trials=20, **spec_kw) -> Experiment:
    space, evaluator = ToySpace(), ToyEvaluator(ToySpace())
    spec = _spec(strategy=strategy_cls.name, budget=Budget(trials=trials), **spec_kw)
    strategy = strategy_cls(space, objective=spec.goal(evaluator), seed=0)
    return Experiment(space, strategy, evaluator, spec, run_dir=run_dir, progress=False)


def test_an_infeasible_trial_never_becomes_the_best() -> None:
    outcome = _experiment(strategy_cls=RegularizedEvolution, trials=40, constraints=["size<=3"]).run()
    assert outcome.best_result.objectives["size"] <= 3
    feasible = [t for t in outcome.history if t.result.objectives["size"] <= 3]
    assert outcome.best_result.objectives["score"] == max(t.result.objectives["score"] for t in feasible)
    assert any(
        t.result.objectives["score"] > outcome.best_result.objectives["score"] for t in outcome.history
    )


def test_nothing_feasible_is_an_error_naming_the_nearest(tmp_path) -> None:
    with pytest.raises(
        InfeasibleSearchError, match=r"none of the 5 trials satisfied size<=-1.*has size"
    ) as info:
        _experiment(tmp_path / "r", trials=5, constraints=["size<=-1"]).run()
    assert "journal.jsonl" in str(info.value) and "\n" not in str(info.value)


def test_the_journal_header_records_the_goal_and_old_headers_still_read(tmp_path) -> None:
    _experiment(tmp_path, objectives=["score:max", "size:min"], strategy_cls=NSGA2).run()
    header = json.loads(journal_path(tmp_path).read_text().splitlines()[0])
    assert header["goal"] == {"objectives": ["score:max", "size:min"], "constraints": []}
    assert goal_of_header(header) == SearchGoal.of(["score:max", "size:min"])
    old = {"objective": {"name": "score", "higher_is_better": True}, "spec": {}}
    assert goal_of_header(old) == SearchGoal.of(["score:max"])
    assert goal_of_header({"objective": None, "spec": {}}) is None


def test_a_journal_without_goal_fields_resumes(tmp_path) -> None:
    """Journals written before objectives and constraints existed resume as they were."""
    first = _experiment(tmp_path, trials=6).run()
    path = journal_path(tmp_path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    del header["goal"], header["reported"], header["spec"]["objectives"], header["spec"]["constraints"]
    body = [line for line in lines[1:] if json.loads(line)["type"] != "end"]
    path.write_text("\n".join([json.dumps(header), *body[:3]]) + "\n")
    again = _experiment(tmp_path, trials=6).run()
    assert [t.genotype for t in again.history] == [t.genotype for t in first.history]


def test_a_journal_resumed_with_other_constraints_is_refused(tmp_path) -> None:
    _experiment(tmp_path, trials=4).run()
    with pytest.raises(JournalError, match=r"different settings \(constraints\)"):
        _experiment(tmp_path, trials=4, constraints=["size<=4"]).run()


def test_a_strategy_built_for_another_goal_is_refused() -> None:
    space, evaluator = ToySpace(), ToyEvaluator(ToySpace())
    spec = _spec(constraints=["size<=4"])
    strategy = RandomSearch(space, objective=evaluator.objective, seed=0)  # unconstrained
    with pytest.raises(NasforgeError, match="was built to search score:max"):
        Experiment(space, strategy, evaluator, spec, progress=False)


def test_names_the_evaluator_does_not_measure_are_refused_before_any_trial(tmp_path) -> None:
    with pytest.raises(OptionError, match=r"measures no 'sise'; did you mean 'size'\?"):
        _experiment(tmp_path / "r", constraints=["sise<=4"])
    assert not (tmp_path / "r").exists()


def test_undeclared_names_are_refused_at_the_first_result(tmp_path) -> None:
    """An evaluator that declares nothing is checked on its first result, before it is journaled."""

    class Undeclared(Evaluator):
        name = "toy"
        spaces = frozenset({"toy"})

        @property
        def objective(self) -> Objective:
            return Objective("score")

        def evaluate(self, g: Genotype) -> Result:
            return ToyEvaluator(self.space).evaluate(g)

    space, evaluator = ToySpace(), Undeclared(ToySpace())
    spec = _spec(constraints=["width<=4"])
    strategy = RandomSearch(space, objective=spec.goal(evaluator), seed=0)
    with pytest.raises(OptionError, match=r"reports no 'width'"):
        Experiment(space, strategy, evaluator, spec, run_dir=tmp_path / "r", progress=False).run()
    assert not (tmp_path / "r").exists(), "nothing journaled: the run left no directory"
