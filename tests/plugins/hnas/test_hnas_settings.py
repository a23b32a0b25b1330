"""HNAS's grouped settings and the flat ``-o key=value`` form the CLI and the journal use."""

from __future__ import annotations

import json
import math
import random

import pytest

from nasforge.kernel.errors import OptionError
from nasforge.kernel.run_context import RunContext
from nasforge.kernel.testing import ToyEvaluator, ToySpace
from nasforge.run.construction import build_component
from nasforge_hnas import (
    M_TRACE,
    GPSettings,
    Hnas,
    HnasSettings,
    LoopSettings,
    MuNuPlane,
    PoolDraw,
    PoolScorer,
    PoolSettings,
)

#: Small enough for the 81-architecture toy space (an MLP on 8 features).
TOY = {"steps": 6, "pool_size": 30, "batch_size": 8, "input_shape": [8], "num_classes": 3, "gp_restarts": 1}


def test_flat_options_land_in_their_groups() -> None:
    s = HnasSettings.from_options(
        {
            "score": "realizable",
            "plane": "paper",
            "nu_scale": 100,
            "pool_growth": 2,
            "cache": "c.jsonl",
            **TOY,
        }
    )
    assert (s.loop.steps, s.loop.objective, s.loop.gp.restarts) == (6, "realizable", 1)
    assert (s.loop.plane.mode, s.loop.plane.scale) == ("paper", 100.0)
    assert s.loop.plane.log10_mu == (-4.0, 0.0), "the paper plane defaults to the code's bounds"
    assert s.draw == PoolDraw(size=30, growth=2)
    assert (s.pool.batch_size, s.pool.input_shape, s.pool.num_classes) == (8, (8,), 3)
    assert s.pool.metric == M_TRACE == "m_trace"
    assert s.cache == "c.jsonl"


def test_unset_or_null_options_keep_the_settings_defaults() -> None:
    nulls = {
        "input_shape": None,
        "build": None,
        "log10_mu_bounds": None,
        "init_log10_mu": None,
        "cache": None,
    }
    assert HnasSettings.from_options({}) == HnasSettings.from_options(nulls) == HnasSettings()
    assert HnasSettings().loop.plane.log10_mu == (-3.0, 2.0)


def test_settings_survive_the_journal_as_flat_json() -> None:
    settings = HnasSettings(
        loop=LoopSettings(steps=5, acquisition="ucb", plane=MuNuPlane(mode="paper", scale=50.0)),
        pool=PoolSettings(batch_size=8, input_shape=(8,), build={"width": 4}, kernel_output="target"),
        draw=PoolDraw(size=40, growth=3),
        cache="pool.jsonl",
    )
    journaled = json.loads(json.dumps(settings.to_options()))
    assert HnasSettings.from_options(journaled) == settings


def test_settings_without_a_flat_form_are_refused_not_truncated() -> None:
    settings = HnasSettings(loop=LoopSettings(gp=GPSettings(noise=1e-3)))
    with pytest.raises(ValueError, match="no flat form"):
        settings.to_options()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"stepz": 3}, "did you mean 'steps'"),
        ({"steps": True}, "option 'steps' expects"),
        ({"score": "best"}, "bad hnas option 'score'"),
        ({"pool_size": 0}, "bad hnas option 'pool_size'"),
        ({"log10_mu_bounds": [2, 1]}, "increasing"),
    ],
)
def test_bad_options_name_the_option(options: dict, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        HnasSettings.from_options(options)


@pytest.mark.slow
def test_settings_and_flat_options_run_the_same_search() -> None:
    space = ToySpace()
    evaluator = ToyEvaluator(space)

    def asks(strategy: Hnas) -> list:
        out = []
        for _ in range(8):
            g = strategy.ask()
            strategy.tell(g, evaluator.evaluate(g))
            out.append(g)
        return out

    flat = Hnas(space, objective=evaluator.objective, seed=3, **TOY)
    grouped = Hnas(space, objective=evaluator.objective, seed=3, settings=HnasSettings.from_options(TOY))
    assert flat.settings == grouped.settings
    assert asks(flat) == asks(grouped)


def test_settings_and_options_together_are_refused() -> None:
    space = ToySpace()
    with pytest.raises(OptionError, match="not both"):
        Hnas(space, objective=ToyEvaluator(space).objective, settings=HnasSettings(), steps=3)


def test_the_registry_path_takes_flat_options_only() -> None:
    space = ToySpace()
    objective = ToyEvaluator(space).objective
    goal = objective
    built = build_component("strategy", Hnas, RunContext(), dict(TOY), space, objective=goal)
    assert built.settings == HnasSettings.from_options(TOY)
    with pytest.raises(OptionError, match="settings"):
        build_component("strategy", Hnas, RunContext(), {"settings": {"steps": 3}}, space, objective=goal)


@pytest.mark.slow
def test_the_zerocost_ntk_traces_serve_as_m() -> None:
    """HNAS's own metric is m_trace, on the pool's kernel settings. The zerocost plugin's
    ``ntk_trace_per_sample`` is the same number under the default settings; its
    ``ntk_trace`` (which an old journal's ``metric="ntk_trace"`` names) is the HNAS code's
    kernel since issue 11, a different number under its own cache key, so such a pool is
    rescored rather than served stale."""
    space = ToySpace()
    own = PoolSettings(batch_size=8, input_shape=(8,), num_classes=3)
    per_sample = PoolSettings(metric="ntk_trace_per_sample", batch_size=8, input_shape=(8,), num_classes=3)
    old = PoolSettings(metric="ntk_trace", batch_size=8, input_shape=(8,), num_classes=3)
    g = space.sample(random.Random(0))
    ours, same = PoolScorer(space, own).score(g), PoolScorer(space, per_sample).score(g)
    assert same.metric == pytest.approx(ours.metric, rel=1e-6)
    assert same.kappa == ours.kappa
    keys = {PoolScorer(space, s).key for s in (own, per_sample, old)}
    assert len(keys) == 3
    assert math.isfinite(PoolScorer(space, old).score(g).metric)
