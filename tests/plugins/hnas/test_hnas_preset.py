"""The pool's kernel setting (the HNAS code's kernel) and the ``thesis`` preset (issue 11)."""

from __future__ import annotations

import json
import random

import pytest

from nasforge.kernel.errors import OptionError
from nasforge.kernel.testing import ToyEvaluator, ToySpace
from nasforge.tools.backends import kernel_preset
from nasforge_hnas import M_TRACE, Hnas, HnasSettings, PoolDraw, PoolScorer, PoolSettings
from nasforge_hnas.pool_settings import HNAS_CODE_KERNEL
from nasforge_hnas.settings import PRESETS

TOY_POOL = {"batch_size": 8, "input_shape": [8], "num_classes": 3, "gp_restarts": 1}


def test_the_pool_kernel_defaults_to_every_parameter_and_can_be_the_codes() -> None:
    assert PoolSettings().kernel.params == "all"
    code = PoolSettings(**HNAS_CODE_KERNEL)
    assert code.kernel == kernel_preset("hnas-code")
    assert code.to_json()["kernel_params"] == "layers"
    assert PoolSettings().digest("nb201") != PoolSettings(kernel_params="layers").digest("nb201")
    with pytest.raises(ValueError, match="params"):
        PoolSettings(kernel_params="everything")


def test_the_code_kernel_pool_scores_m_as_the_zerocost_ntk_trace() -> None:
    """The pool's M_Trace on the HNAS code's kernel is the zerocost ``ntk_trace`` metric's
    number (that metric's default kernel is the same preset); the cache keys differ."""
    space = ToySpace()
    g = space.sample(random.Random(0))
    shape = {"batch_size": 8, "input_shape": (8,), "num_classes": 3}
    own = PoolScorer(space, PoolSettings(**shape, **HNAS_CODE_KERNEL))
    zerocost = PoolScorer(space, PoolSettings(metric="ntk_trace", **shape, **HNAS_CODE_KERNEL))
    assert own.settings.metric == M_TRACE
    a, b = own.score(g), zerocost.score(g)
    assert b.metric == pytest.approx(a.metric, rel=1e-6)
    assert a.kappa == b.kappa
    assert own.key != zerocost.key


def test_the_thesis_preset_is_the_codes_nb201_run() -> None:
    s = HnasSettings.from_options({"preset": "thesis"})
    assert s.preset == "thesis"
    loop = s.loop
    assert (loop.steps, loop.n_init, loop.acquisition, loop.xi) == (20, 5, "ei", 0.0)
    assert (loop.objective, loop.penalty, loop.init_log10_mu) == ("non-realizable", "abs", -2.0)
    assert (loop.plane.mode, loop.plane.log10_mu, loop.plane.scale) == ("paper", (-4.0, 0.0), 5e3)
    assert s.draw == PoolDraw(size=2000, growth=2000)
    assert s.pool.metric == M_TRACE and s.pool.batch_size == 64
    assert s.pool.kernel == kernel_preset("hnas-code")


def test_options_beside_a_preset_override_it_and_nulls_keep_it() -> None:
    s = HnasSettings.from_options({"preset": "thesis", "pool_size": 30, "plane": "normalised", "xi": None})
    assert s.draw == PoolDraw(size=30, growth=2000)
    assert s.loop.plane.mode == "normalised" and s.loop.xi == 0.0
    assert s.preset == "thesis"
    assert HnasSettings.from_options({"preset": None}) == HnasSettings()


def test_a_preset_survives_the_journal() -> None:
    s = HnasSettings.from_options({"preset": "thesis", "cache": "pool.jsonl"})
    journaled = json.loads(json.dumps(s.to_options()))
    assert journaled["preset"] == "thesis"
    assert HnasSettings.from_options(journaled) == s


@pytest.mark.parametrize(
    ("name", "message"),
    [("thesys", "did you mean 'thesis'"), ("paper", "unknown hnas preset"), (3, "preset")],
)
def test_an_unknown_preset_is_one_line(name, message) -> None:
    with pytest.raises(OptionError, match=message):
        HnasSettings.from_options({"preset": name})
    assert "thesis" in PRESETS


@pytest.mark.slow
def test_the_thesis_preset_grows_the_pool_and_never_reselects() -> None:
    space = ToySpace()
    evaluator = ToyEvaluator(space)
    options = {"preset": "thesis", "steps": 6, "pool_size": 8, "pool_growth": 4, **TOY_POOL}
    strategy = Hnas(space, objective=evaluator.objective, seed=1, **options)
    sizes, chosen = [], []
    for _ in range(6):
        g = strategy.ask()
        sizes.append(strategy._drawn)
        chosen.append(g)
        strategy.tell(g, evaluator.evaluate(g))
    assert sizes == [8 + 4 * k for k in range(6)], "2,000 (here 8) draws, then 4 more per BO step"
    assert len(set(chosen)) == len(chosen), "an architecture already chosen is never chosen again"
    assert strategy.describe()["pool"]["kernel_params"] == "layers"
