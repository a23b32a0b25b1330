"""score_genotypes, the disk cache, correlate and the plot, on tiny NAS-Bench-201 nets."""

from __future__ import annotations

import math

import pytest
import torch

from nasforge import Evaluator, Genotype, Metric, MetricContext, MetricInfo, Objective, Result, get_registry
from nasforge.kernel.errors import MissingDependencyError
from nasforge.tools.scoring import (
    ScoreCache,
    correlate,
    fixed_batch,
    plot_correlation,
    sample_genotypes,
    score_genotypes,
)

TINY = {"C": 4, "N": 1, "num_classes": 10}
DATA = (torch.randn(8, 3, 8, 8, generator=torch.Generator().manual_seed(0)), torch.arange(8) % 10)


def space():
    return get_registry().space("nb201")


class ParamCount(Evaluator):
    """A stand-in benchmark whose objective is the parameter count; fails on one cell."""

    name = "param-count"

    def __init__(self, sp, *, dataset: str | None = None, fail_on: Genotype | None = None) -> None:
        super().__init__(sp, dataset=dataset)
        self.fail_on = fail_on

    @property
    def objective(self) -> Objective:
        return Objective("size", higher_is_better=True)

    def evaluate(self, g: Genotype) -> Result:
        if g == self.fail_on:
            return Result({}, failed=True, error="no entry")
        net = self.space.build(g, **TINY)
        return Result({"size": float(sum(p.numel() for p in net.parameters()))})


@pytest.mark.slow
def test_cache_reuses_scores_and_respects_keys(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 3, seed=1)
    first = score_genotypes(sp, gs, ["snip", "synflow"], data=DATA, build=TINY, cache=tmp_path)
    assert not any(s.cached for row in first.rows for s in row.values())
    again = score_genotypes(sp, gs, ["snip", "synflow"], data=DATA, build=TINY, cache=ScoreCache(tmp_path))
    assert all(s.cached for row in again.rows for s in row.values())
    assert list(again.values("snip")) == list(first.values("snip"))
    other_seed = score_genotypes(sp, gs, ["snip"], data=DATA, build=TINY, cache=tmp_path, seed=1)
    assert not any(s.cached for s in other_seed.column("snip"))
    other_data = score_genotypes(
        sp, gs[:1], ["snip"], data=(DATA[0] + 1, DATA[1]), build=TINY, cache=tmp_path
    )
    assert not other_data.column("snip")[0].cached


def test_torn_cache_line_is_ignored(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 2, seed=2)
    score_genotypes(sp, gs, ["params"], data=DATA, build=TINY, cache=tmp_path)
    shard = next(tmp_path.glob("params-*.jsonl"))
    shard.write_text(shard.read_text() + '{"genotype": "tor')
    table = score_genotypes(sp, gs, ["params"], data=DATA, build=TINY, cache=tmp_path)
    assert all(s.cached for s in table.column("params"))


@pytest.mark.slow
def test_same_seed_same_scores_any_order() -> None:
    sp = space()
    gs = sample_genotypes(sp, 3, seed=3)
    a = score_genotypes(sp, gs, ["grad_norm"], data=DATA, build=TINY)
    b = score_genotypes(sp, gs[::-1], ["grad_norm"], data=DATA, build=TINY)
    assert list(a.values("grad_norm")) == list(b.values("grad_norm")[::-1])


def test_correlate_against_a_known_objective(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 12, seed=4)
    ev = ParamCount(sp, fail_on=gs[5])
    result = correlate(sp, ["params", "synflow"], ev, genotypes=gs, data=DATA, build=TINY)
    assert result.dropped == 1 and len(result.targets) == 11
    assert result.get("params").spearman == pytest.approx(1.0)
    assert result.get("params").kendall == pytest.approx(1.0)
    assert -1.0 <= result.get("synflow").spearman <= 1.0
    assert result.to_json()["metrics"][0]["metric"] == "params"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="nasforge\\[plot\\]"):
            plot_correlation(result, tmp_path / "c.png")
    else:
        assert plot_correlation(result, tmp_path / "c.png").stat().st_size > 1000


class NegParams(Metric):
    """Minus the parameter count, declared lower-is-better: ranks like ``params``."""

    info = MetricInfo(name="neg_params", higher_is_better=False, needs_data=False, needs_labels=False)

    def score(self, model: torch.nn.Module, batch: object, *, ctx: MetricContext) -> float:
        return -float(sum(p.numel() for p in model.parameters()))


@pytest.mark.slow
def test_lower_is_better_metric_is_sign_corrected() -> None:
    sp = space()
    gs = sample_genotypes(sp, 10, seed=5)
    result = correlate(sp, [NegParams()], ParamCount(sp), genotypes=gs, data=DATA, build=TINY)
    assert result.get("neg_params").spearman == pytest.approx(1.0)
    assert not result.get("neg_params").higher_is_better


@pytest.mark.slow
def test_sample_is_reproducible_and_distinct() -> None:
    sp = space()
    a = sample_genotypes(sp, 50, seed=7)
    assert a == sample_genotypes(sp, 50, seed=7)
    assert len(set(a)) == 50
    assert a != sample_genotypes(sp, 50, seed=8)


def test_fixed_batch_from_registered_dataset() -> None:
    fb = fixed_batch("gaussian", batch_size=16, seed=3)
    again = fixed_batch("gaussian", batch_size=16, seed=3)
    assert fb.x.shape == (16, 3, 32, 32) and fb.digest() == again.digest()
    assert fb.digest() != fixed_batch("gaussian", batch_size=16, seed=4).digest()
    assert fb.describe()["source"] == "gaussian"
    with pytest.raises(ValueError):
        fixed_batch("gaussian", batch_size=0)


def test_invalid_genotype_is_refused_before_work() -> None:
    sp = space()
    bad = Genotype(space="nb201", version=sp.version, choices=("none",) * 5)
    with pytest.raises(ValueError):
        score_genotypes(sp, [bad], ["params"], data=DATA, build=TINY)


def test_metric_context_is_passed_through() -> None:
    sp = space()
    g = sample_genotypes(sp, 1, seed=9)
    table = score_genotypes(sp, g, ["knas"], data=DATA, build=TINY, loss="mse")
    ce = score_genotypes(sp, g, ["knas"], data=DATA, build=TINY)
    assert math.isfinite(table.values("knas")[0])
    assert table.values("knas")[0] != ce.values("knas")[0]
    assert MetricContext(loss="mse").loss == "mse"


def test_random_label_mode_changes_only_labels() -> None:
    true = fixed_batch(DATA, batch_size=8, seed=0)
    rand = fixed_batch(DATA, batch_size=8, seed=0, labels="random")
    assert torch.equal(true.x, rand.x) and not torch.equal(true.y, rand.y)
    assert rand.digest() != true.digest() and rand.source.endswith("random-labels")
    with pytest.raises(ValueError):
        fixed_batch(DATA, labels="shuffled")


@pytest.mark.slow
def test_data_free_metrics_are_cached_across_data(tmp_path) -> None:
    sp = space()
    gs = sample_genotypes(sp, 2, seed=6)
    score_genotypes(sp, gs, ["synflow", "snip"], data=DATA, build=TINY, cache=tmp_path)
    other = score_genotypes(
        sp, gs, ["synflow", "snip"], data=(DATA[0] * 2, DATA[1]), build=TINY, cache=tmp_path
    )
    assert all(s.cached for s in other.column("synflow"))
    assert not any(s.cached for s in other.column("snip"))
