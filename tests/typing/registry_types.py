"""The typed hand-off, as mypy sees it (``tests/typing/test_typed_handoff.py`` runs mypy on
this file): the registry gives each kind of component as its contract's type, and a run
builds them as those types, so a host program or a plugin is checked where it uses them."""

from __future__ import annotations

from typing import assert_type

from nasforge import Evaluator, Metric, SearchSpace, Strategy
from nasforge.kernel.one_shot import OneShotStrategy, one_shot_strategy
from nasforge.kernel.registry import Registry, get_registry
from nasforge.run.construction import build_component
from nasforge.run.executors import Executor
from nasforge.run.spec import ExperimentSpec

registry: Registry = get_registry()

assert_type(registry.strategy("rea"), type[Strategy])
assert_type(one_shot_strategy(registry, "darts"), type[OneShotStrategy])
assert_type(registry.search_space("nb201"), type[SearchSpace])
assert_type(registry.metric("synflow"), type[Metric])
assert_type(registry.evaluator("nb201-table"), type[Evaluator])
assert_type(registry.space("nb201"), SearchSpace)


def built(spec: ExperimentSpec) -> Strategy:
    space, evaluator, strategy, executor = spec.build(registry)
    assert_type(space, SearchSpace)
    assert_type(evaluator, Evaluator)
    assert_type(executor, Executor)
    metric = build_component("metric", registry.metric("synflow"), spec.context(registry), {})
    assert_type(metric, Metric)
    return strategy
