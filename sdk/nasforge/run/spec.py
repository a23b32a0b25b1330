"""A JSON-able description of a search: what the CLI builds and the journal records.

Because a run can be rebuilt from its spec alone, ``nasforge resume DIR`` needs no
arguments and a journal can never be resumed with different settings by accident.
Everything in a spec is user input (from the command line or from a journal file), so
its fields and every option it passes to a constructor are checked against the declared
types before anything is built: a wrong value is one line naming the option, never a
traceback from deep inside a plugin.

A spec names two datasets apart: ``train_data``, what networks are trained on (a one-shot
strategy's supernet, an evaluator that ``trains`` such as short-train), and
``benchmark_dataset``, the dataset of the benchmark an evaluator reports on (nb201-table's
table column). The command line's one ``--dataset`` is placed in one of them when the
spec is made (:func:`nasforge.run.api.build_spec`); a spec itself is always explicit.

What a component needs of the run itself (the seed, the registry, the device, loaded
data) is one :class:`~nasforge.kernel.run_context.RunContext` (:meth:`ExperimentSpec.context`),
handed to each component through its ``from_context`` hook
(:func:`nasforge.run.construction.build_component`), never fetched globally.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import attrs

from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError, OptionError, show
from nasforge.kernel.evaluator import Evaluator
from nasforge.kernel.fidelity import max_fidelity
from nasforge.kernel.objectives import SearchGoal, constraint_texts, objective_texts
from nasforge.kernel.one_shot import OneShotStrategy
from nasforge.kernel.option_types import INT_MAX, INT_MIN, as_dict, check_options, in_range, typed
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.registry import Registry
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.run.budget import Budget
from nasforge.run.construction import build_component
from nasforge.run.executors import Executor, ExecutorOptions, build_executor
from nasforge.run.goal_checks import check_declared
from nasforge.run.run_data import load_training_data
from nasforge.run.stop_rules import rule_texts


def _seed(value: Any) -> int:
    """Seeds may be any integral number (numpy's too), within the 64 bits torch accepts."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionError(f"seed must be an integer, got {show(value)}")
    if not INT_MIN <= int(value) <= INT_MAX:
        raise OptionError(f"seed must fit in 64 bits, got {show(int(value))}")
    return int(value)


def _data_name(value: Any) -> Any:
    """A dataset name, or a path (a path object kept as its text); anything else is left
    to the type check."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def _objectives(value: Any) -> tuple[str, ...]:
    """Objectives as text (``NAME:max|min``) or :class:`~nasforge.kernel.result.Objective`; kept as
    canonical text, so a spec written to a journal and read back compares equal."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple | str) and not hasattr(value, "higher_is_better"):
        raise OptionError(f"objectives must be a list like ['valid_accuracy:max'], got {show(value)}")
    return objective_texts(value)


def _constraints(value: Any) -> tuple[str, ...]:
    """Constraints as text (``NAME<=VALUE``, ``NAME>=VALUE``) or
    :class:`~nasforge.kernel.objectives.Constraint`."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple | str) and not hasattr(value, "bound"):
        raise OptionError(f"constraints must be a list like ['latency_ms<=12'], got {show(value)}")
    return constraint_texts(value)


def _stop(value: Any) -> tuple[str, ...]:
    """Stop rules as text (``valid_accuracy>=93``, ``time:600``, ``plateau:20``) or rule
    objects (:mod:`nasforge.run.stop_rules`); kept as canonical text, as objectives are."""
    try:
        return rule_texts(value)
    except NasforgeError as exc:
        raise OptionError(str(exc)) from exc


@attrs.frozen
class ExperimentSpec:
    """Names and options of everything a run is made of.

    For ask/tell strategies ``evaluator`` and ``budget`` are required; for one-shot
    strategies (DARTS, NASI, ...) the budget lives in the strategy's options (epochs),
    ``train_data`` is what the supernet trains on, and an evaluator, if named, scores the
    final architecture. ``train_data`` also feeds an evaluator that trains (short-train);
    ``benchmark_dataset`` is a benchmark evaluator's dataset (nb201-table's column). The
    evaluator option ``dataset``, where given, names the evaluator's dataset directly.

    ``objectives`` (``NAME:max|min``) and ``constraints`` (``NAME<=VALUE``, ``>=``) are
    what an ask/tell run optimises and obeys, as canonical text; none means the
    evaluator's own objective, unconstrained (what every spec before them meant, so
    older journals resume unchanged). :meth:`goal` turns them into a
    :class:`~nasforge.kernel.objectives.SearchGoal`.

    ``stop`` are the rules that end an ask/tell run early (:mod:`nasforge.run.stop_rules`),
    any one of which stops it; kept in the spec so a resumed run obeys the same ones.

    ``build_options`` are network options (``C``, ``N``, ``width``...) for every network the
    run builds: given to an evaluator or strategy that declares the context field
    ``build_options`` (its own ``build`` option wins key by key) and used by the export, so
    the network scored, the one trained and the one exported are the same. Empty (the
    default) is left out of the journal, as every spec before it was written.

    ``device`` (``--device``: cpu, cuda, cuda:N) is given to every component that declares
    the context field ``device`` (one-shot strategies, evaluators that train, strategies
    that score networks). None (the default) leaves each its own default and is left out
    of the journal; older journals name it as a strategy or evaluator option instead.
    """

    space: str = attrs.field(validator=typed)
    strategy: str = attrs.field(validator=typed)
    evaluator: str | None = attrs.field(validator=typed)
    budget: Budget | None = attrs.field(validator=typed)
    seed: int = attrs.field(default=0, converter=_seed)
    space_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    strategy_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    evaluator_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    executor: str = attrs.field(default="inprocess", validator=typed)
    workers: int = attrs.field(default=1, validator=[typed, in_range(ge=1)])
    dedup: bool = attrs.field(default=True, validator=typed)
    train_data: str | None = attrs.field(default=None, converter=_data_name, validator=typed)
    benchmark_dataset: str | None = attrs.field(default=None, validator=typed)
    objectives: tuple[str, ...] = attrs.field(default=(), converter=_objectives)
    constraints: tuple[str, ...] = attrs.field(default=(), converter=_constraints)
    stop: tuple[str, ...] = attrs.field(default=(), converter=_stop)
    build_options: dict[str, Any] = attrs.field(factory=dict, converter=as_dict)
    device: str | None = attrs.field(default=None, validator=typed)

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["budget"] = self.budget.to_json() if self.budget is not None else None
        data["objectives"], data["constraints"] = list(self.objectives), list(self.constraints)
        data["stop"] = list(self.stop)
        if not self.build_options:
            del data["build_options"]
        if self.device is None:
            del data["device"]
        return data

    @classmethod
    def from_json(cls, data: Any) -> ExperimentSpec:
        """The spec a journal header recorded; a hand-edited or foreign one fails in one line."""
        if not isinstance(data, dict):
            raise NasforgeError(f"run spec must be an object, got {show(data)}")
        data = dict(data)
        if data.get("dataset", "") is None:  # a field headers held, always empty, until 0.1.0
            del data["dataset"]
        missing = [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING and f.name not in data]
        if missing:
            raise NasforgeError(f"run spec lacks {', '.join(repr(m) for m in missing)}")
        budget = data.get("budget")
        if budget:
            if not isinstance(budget, dict):
                raise NasforgeError(f"run spec: budget must be an object, got {show(budget)}")
            check_options("run spec budget", Budget, budget)
            data["budget"] = Budget.from_json(budget)
        else:
            data["budget"] = None
        check_options("run spec", cls, data)
        try:
            return cls(**data)
        except OptionError as exc:
            raise OptionError(f"run spec: {exc}") from exc

    # --- what the names mean ----------------------------------------------------------
    def is_one_shot(self, registry: Registry) -> bool:
        """Whether the strategy trains a supernet (``fit``) rather than asking and telling."""
        cls = registry.get("strategy", self.strategy)
        return isinstance(cls, type) and issubclass(cls, OneShotStrategy)

    def evaluator_trains(self, registry: Registry) -> bool:
        """Whether the evaluator's dataset is training data (see ``Evaluator.trains``)."""
        if self.evaluator is None:
            return False
        return bool(getattr(registry.get("evaluator", self.evaluator), "trains", False))

    def evaluator_dataset(self, registry: Registry) -> str | None:
        """The ``dataset`` the evaluator is built with.

        The evaluator option ``dataset`` where given (an evaluator that trains may then
        train on other data than a one-shot search did); else the training data for an
        evaluator that trains, the benchmark dataset for any other. A benchmark dataset
        named twice, differently, is refused.
        """
        trains = self.evaluator_trains(registry)
        chosen = self.train_data if trains else self.benchmark_dataset
        option = self.evaluator_options.get("dataset")
        if option is None:
            return chosen
        if not isinstance(option, str):
            raise OptionError(
                f"evaluator '{self.evaluator}': option 'dataset' expects a string, got {show(option)}"
            )
        if not trains and chosen is not None and chosen != option:
            raise NasforgeError(
                f"the evaluator option dataset={option} and --benchmark-dataset {chosen} disagree; "
                "give one of them"
            )
        return option

    # --- the goal ---------------------------------------------------------------------
    def goal(self, evaluator: Any, *, warn: bool = True) -> SearchGoal:
        """What the run optimises and obeys: the spec's objectives (else ``evaluator``'s
        objective) under its constraints. Names the evaluator declares it never measures
        are refused here, in one line (:func:`~nasforge.kernel.objectives.check_declared`); an
        objective against its declared direction is logged with ``warn``."""
        goal = SearchGoal.of(list(self.objectives) or [evaluator.objective], self.constraints)
        check_declared(goal, evaluator, warn=warn)
        return goal

    def check_strategy_goal(self, registry: Registry) -> None:
        """A single-objective strategy given several objectives is refused before anything
        is built, naming the strategies that can take them."""
        if len(self.objectives) < 2:
            return
        cls = registry.get("strategy", self.strategy)
        if getattr(cls, "multi_objective", False):
            return
        several = [name for name, c in registry.items("strategy") if getattr(c, "multi_objective", False)]
        raise OptionError(
            f"strategy '{self.strategy}' optimises one objective, but the run names {len(self.objectives)} "
            f"({', '.join(self.objectives)}); multi-objective strategies: "
            f"{', '.join(sorted(several)) or 'none installed'}"
        )

    # --- building ---------------------------------------------------------------------
    def context(
        self,
        registry: Registry,
        *,
        data: TensorData | None = None,
        parallelism: Parallelism | None = None,
        max_fidelity: int | None = None,
        progress: bool = False,
    ) -> RunContext:
        """The run context this spec's components are built with: its seed, device and
        build options, and what the run adds (the registry, the training data it loaded,
        where its work goes, the evaluator's full budget, whether bars are drawn)."""
        return RunContext(
            seed=self.seed,
            registry=registry,
            device=self.device,
            data=data,
            parallelism=parallelism if parallelism is not None else Parallelism(self.executor, self.workers),
            max_fidelity=max_fidelity,
            build_options=self.build_options,
            progress=progress,
        )

    def build(
        self, registry: Registry, executor_options: Any = None, *, data: TensorData | None = None
    ) -> tuple[SearchSpace, Evaluator, Strategy, Executor]:
        """Instantiate (space, evaluator, strategy, executor) of an ask/tell run.

        Every component comes from ``registry`` and is built from the run's
        :meth:`context` through its ``from_context`` hook: an evaluator that trains gets
        the run's training data (``data`` where the caller loaded it, else loaded once
        here), and so does a strategy that declares ``data`` (one that scores candidates
        on it); a strategy that declares ``parallelism`` learns where the run's work goes
        (:mod:`nasforge.kernel.parallelism`), one that declares ``max_fidelity`` the
        evaluator's full budget. The strategy's ``objective`` is the run's :meth:`goal`
        (objectives and constraints). ``executor_options``
        (:class:`nasforge.run.executors.ExecutorOptions`: the executor's own options, such as a
        cluster's address, and retries) say where the executor runs trials; they are not part
        of the spec, since they do not change what a trial computes.
        """
        executor_cls = registry.get("executor", self.executor)
        if self.evaluator is None or self.budget is None:
            raise NasforgeError(f"strategy '{self.strategy}' needs an evaluator and a budget")
        self.check_strategy_goal(registry)
        strategy_cls = registry.strategy(self.strategy)
        space = self.build_space(registry)
        data = (
            self.load_train_data(registry, given=data) if self.evaluator_uses_train_data(registry) else None
        )
        evaluator = self.build_evaluator(registry, space, data=data)
        options = executor_options if executor_options is not None else ExecutorOptions()
        # a strategy that scores a pool runs that sweep where the run's trials run; a
        # multi-fidelity one learns the evaluator's full budget (it follows from the spec,
        # so a resume offers the same one)
        where = Parallelism(self.executor, self.workers, options.options)
        context = self.context(registry, data=data, parallelism=where, max_fidelity=max_fidelity(evaluator))
        strategy = build_component(
            "strategy",
            strategy_cls,
            context,
            self.strategy_options,
            space,
            objective=self.goal(evaluator, warn=False),  # the Experiment warns, once
            plugin=registry.origin("strategy", self.strategy),
        )
        executor = build_executor(executor_cls, self.workers, options, registry)
        return space, evaluator, strategy, executor

    def build_space(self, registry: Registry) -> SearchSpace:
        """The run's space; a declared one has its declaration read now, so a bad one is
        refused in one line before the run writes anything."""
        space = build_component(
            "search space",
            registry.search_space(self.space),
            self.context(registry),
            self.space_options,
            plugin=registry.origin("space", self.space),
        )
        getattr(space, "declaration", None)
        return space

    def load_train_data(self, registry: Registry, *, given: TensorData | None = None) -> TensorData | None:
        """The run's training data (None if it names none): ``given`` for data the caller
        holds in memory, else loaded by name or path with the run's seed
        (:mod:`nasforge.run.run_data`)."""
        name = self.train_data
        if name is None:
            return None
        return load_training_data(name, registry=registry, seed=self.seed, given=given)

    def evaluator_uses_train_data(self, registry: Registry) -> bool:
        """Whether the evaluator trains on the run's training data, so the run hands it
        the data it loaded (an evaluator given its own dataset by option loads that)."""
        return (
            self.train_data is not None
            and self.evaluator_trains(registry)
            and self.evaluator_dataset(registry) == self.train_data
        )

    def build_evaluator(
        self,
        registry: Registry,
        space: SearchSpace,
        *,
        data: TensorData | None = None,
        dataset: str | None = None,
    ) -> Evaluator:
        """The evaluator on ``space``, built from the run's :meth:`context` (``data``: the
        run's loaded training data) with its dataset (:meth:`evaluator_dataset`, unless
        ``dataset`` names another). One that cannot serve ``space`` refuses it as it is
        built (:class:`~nasforge.kernel.errors.CapabilityError`, one line)."""
        if self.evaluator is None:
            raise NasforgeError("no evaluator named")
        evaluator_cls = registry.evaluator(self.evaluator)
        chosen = dataset if dataset is not None else self.evaluator_dataset(registry)
        options = {k: v for k, v in self.evaluator_options.items() if k != "dataset"}
        return build_component(
            "evaluator",
            evaluator_cls,
            self.context(registry, data=data),
            options,
            space,
            dataset=chosen,
            plugin=registry.origin("evaluator", self.evaluator),
        )


def spec_differences(recorded: Any, spec: ExperimentSpec, registry: Registry) -> list[str]:
    """The settings in which a journal's recorded spec differs from ``spec`` (sorted names);
    a header that is no spec differs in everything. (``registry`` is where the names of
    both are looked up; the comparison is of what was written.)"""
    try:
        theirs = ExperimentSpec.from_json(recorded)
    except NasforgeError:
        return sorted(spec.to_json())
    mine_json, theirs_json = spec.to_json(), theirs.to_json()
    return sorted(k for k in mine_json if theirs_json.get(k) != mine_json[k])
