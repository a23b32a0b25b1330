"""The run context: one typed value handed to every component a run builds, through one hook.

A component declares the fields it is built with (``context_fields``) or defines
``from_context``; the run never matches constructor parameter names, except in the one
adapter kept for components written before the hook, which warns naming the parameter.
``--seed``, ``--executor`` and ``--device`` are plain fields of the spec and the context,
followed here from the spec to the component.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from nasforge import api
from nasforge.kernel.errors import NasforgeError, OptionError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.parallelism import Parallelism
from nasforge.kernel.registry import get_registry
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.run_context import FIELDS, RunContext, build_from_context
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.strategy import Strategy
from nasforge.kernel.testing.toy import ToySpace
from nasforge.run.budget import Budget
from nasforge.run.construction import build_component
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec

ROOT = Path(__file__).resolve().parents[2]


class Declares(Strategy):
    """Declares the registry and the data; takes a device option it does not declare."""

    name: ClassVar[str] = "declares"
    context_fields = Strategy.context_fields | {"registry", "data"}

    def __init__(
        self,
        space: SearchSpace,
        *,
        objective: Any,
        seed: int = 0,
        registry: Any = None,
        data: Any = None,
        device: str = "own",
    ) -> None:
        super().__init__(space, objective=objective, seed=seed)
        self.registry, self.data, self.device = registry, data, device

    def ask(self) -> Genotype:
        return self.space.sample(self.rng)

    def tell(self, g: Genotype, result: Result) -> None:
        pass


def _objective() -> Objective:
    return Objective("score")


def test_the_context_is_frozen_and_says_what_it_holds() -> None:
    context = RunContext(seed=3, build_options={"C": 4})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        context.seed = 4  # type: ignore[misc]
    assert tuple(a.name for a in attrs.fields(RunContext)) == FIELDS
    assert context.holds("seed") and context.holds("build_options") and context.holds("parallelism")
    assert (
        not context.holds("data") and not context.holds("device") and not RunContext().holds("build_options")
    )
    with pytest.raises(NasforgeError, match="seed must be an integer"):
        RunContext(seed="3")  # type: ignore[arg-type]


def test_declared_fields_reach_the_constructor_and_undeclared_ones_do_not() -> None:
    context = RunContext(seed=5, registry=get_registry(), data="loaded", device="cuda:7")  # type: ignore[arg-type]
    built = build_component("strategy", Declares, context, {}, ToySpace(), objective=_objective())
    assert (built.seed, built.registry, built.data) == (5, context.registry, "loaded")
    assert built.device == "own", "device is not declared: the run's device does not reach it"
    none = build_component("strategy", Declares, RunContext(), {}, ToySpace(), objective=_objective())
    assert none.data is None, "a field the run does not hold is not passed: the default stands"


def test_a_field_only_the_run_gives_is_no_option_and_one_a_user_may_set_is() -> None:
    with pytest.raises(OptionError, match=r"^strategy 'declares': option 'data' is supplied by the run"):
        build_component("strategy", Declares, RunContext(), {"data": "x"}, ToySpace(), objective=_objective())
    with pytest.raises(OptionError, match="option 'seed' is supplied by the run"):
        build_component("strategy", Declares, RunContext(), {"seed": 2}, ToySpace(), objective=_objective())

    class Fidelity(Declares):
        name: ClassVar[str] = "fidelity"
        context_fields = Declares.context_fields | {"device"}

    context = RunContext(device="cpu")
    assert (
        build_component("strategy", Fidelity, context, {}, ToySpace(), objective=_objective()).device == "cpu"
    )
    given = build_component(
        "strategy", Fidelity, context, {"device": "meta"}, ToySpace(), objective=_objective()
    )
    assert given.device == "meta", "the user's option wins for a field a user may set"


def test_a_component_s_own_from_context_gets_the_whole_context() -> None:
    class Whole(Declares):
        name: ClassVar[str] = "whole"

        @classmethod
        def from_context(cls, context: RunContext, space: SearchSpace, **options: Any) -> Whole:
            built = cls(space, seed=context.seed + 100, **options)
            built.context = context  # type: ignore[attr-defined]
            return built

    context = RunContext(seed=1, parallelism=Parallelism("process", 2))
    built = build_from_context("strategy", Whole, context, ToySpace(), objective=_objective())
    assert built.seed == 101 and built.context is context


def test_no_constructor_signature_is_read_in_the_run_and_the_tools() -> None:
    """A component gets what it declares: the run never matches a constructor's parameter
    names to context fields (the kernel reads signatures only to check declarations)."""
    found = subprocess.run(
        ["grep", "-rn", "inspect.signature", "sdk/nasforge/run", "sdk/nasforge/tools"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert found == [], found


# --- --seed, --executor and --device, from the spec to the component --------------------------
def _built(**spec: Any) -> Experiment:
    base = {"space": "nb201", "budget": Budget(trials=2), "benchmark_dataset": "cifar10"}
    return Experiment.from_spec(ExperimentSpec(**{**base, **spec}), progress=False)


def test_the_seed_reaches_the_strategy_and_an_evaluator_that_declares_it() -> None:
    exp = _built(strategy="rea", evaluator="nb201-table", seed=11)
    assert exp.strategy.seed == 11
    trained = _built(
        strategy="random",
        evaluator="short-train",
        benchmark_dataset=None,
        train_data="digits",
        seed=12,
        evaluator_options={"epochs": 1, "build": {"C": 4, "N": 1}},
    )
    assert trained.evaluator.seed == 12


def test_the_executor_reaches_a_strategy_that_runs_work_of_its_own() -> None:
    options = {"metric": "params", "top_k": 2, "pool": 4, "cache": False}
    exp = _built(
        strategy="prerank", evaluator="nb201-table", executor="process", workers=2, strategy_options=options
    )
    try:
        assert exp.strategy.parallelism == Parallelism("process", 2)
        assert exp.executor.workers == 2 and exp.executor.name == "process"
    finally:
        exp.executor.close()


def test_the_device_is_a_field_of_the_spec_that_reaches_every_component_taking_one() -> None:
    spec = api.build_spec(
        "nb201",
        "prerank",
        "short-train",
        train_data="digits",
        device="cpu",
        trials=1,
        strategy_options={"metric": "params", "top_k": 1, "pool": 2, "cache": False},
        evaluator_options={"epochs": 1, "build": {"C": 4, "N": 1}},
    )
    assert (
        spec.device == "cpu"
        and "device" not in spec.strategy_options
        and "device" not in spec.evaluator_options
    )
    exp = Experiment.from_spec(spec, progress=False)
    assert exp.evaluator.device == "cpu" and exp.strategy.settings.device == "cpu"
    assert ExperimentSpec.from_json(spec.to_json()) == spec


def test_a_journal_naming_the_device_as_an_option_still_resumes() -> None:
    """Before the spec had a device, --device was written into the component's options; such
    a spec still reads back as written, and its evaluator still gets the device."""
    old = ExperimentSpec(
        space="nb201",
        strategy="random",
        evaluator="short-train",
        budget=Budget(trials=1),
        train_data="digits",
        evaluator_options={"epochs": 1, "build": {"C": 4, "N": 1}, "device": "cpu"},
    ).to_json()
    assert "device" not in old  # no device field: as those journals were written
    spec = ExperimentSpec.from_json(old)
    evaluator = spec.build_evaluator(get_registry(), spec.build_space(get_registry()))
    assert evaluator.device == "cpu"


def test_a_device_for_a_run_that_takes_none_is_one_line() -> None:
    with pytest.raises(
        NasforgeError, match=r"^--device cpu: strategy 'random' and evaluator 'toy' take no device"
    ):
        api.search("toy", "random", "toy", trials=3, device="cpu")


def test_a_strategy_that_asks_an_invalid_genotype_is_named_for_it() -> None:
    class Foreign(Strategy):
        name: ClassVar[str] = "foreign"

        def ask(self) -> Genotype:
            return Genotype(space="other", version="1", choices=("x",))

        def tell(self, g: Genotype, result: Result) -> None:
            pass

    space = ToySpace()
    evaluator = get_registry().get("evaluator", "toy")(space)
    spec = ExperimentSpec(space="toy", strategy="foreign", evaluator="toy", budget=Budget(trials=2))
    strategy = Foreign(space, objective=evaluator.objective)
    with pytest.raises(
        NasforgeError, match=r"^strategy 'foreign' asked for an invalid genotype of space 'toy'"
    ) as caught:
        Experiment(space, strategy, evaluator, spec, progress=False).run()
    assert "\n" not in str(caught.value)


def test_a_run_hands_its_logger_and_build_options_through_the_context() -> None:
    context = ExperimentSpec(
        space="toy", strategy="random", evaluator="toy", budget=None, seed=4, build_options={"width": 3}
    ).context(get_registry(), progress=True)
    assert (context.seed, context.build_options, context.progress) == (4, {"width": 3}, True)
    assert context.logger.name == "nasforge.run" and context.registry is get_registry()


@pytest.mark.slow
@pytest.mark.parametrize("module", ["nasforge.kernel.run_context", "nasforge.kernel.context_fields"])
def test_the_context_modules_import_without_torch(module: str) -> None:
    code = f"import sys, {module}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
