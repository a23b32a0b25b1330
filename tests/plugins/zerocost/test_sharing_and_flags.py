"""Pass sharing, NaN/inf flagging and ranking, the ensemble, registration."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import zc_helpers as H

from nasforge import Metric, MetricContext, MetricInfo, get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.tools.backends import KernelSpec, kernel_preset
from nasforge.tools.scoring import SharedPasses, score_genotypes, score_model
from nasforge_zerocost.catalogue import BY_NAME, METRICS
from nasforge_zerocost.ensemble import RankEnsemble

CTX = MetricContext()
ALL_NONE = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
GOOD = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|"


def test_every_metric_is_registered_with_its_info() -> None:
    names = set(get_registry().names("metric"))
    for m in METRICS:
        assert m.info.name in names
        assert m.name == m.info.name
        assert m.__doc__ and len(m.__doc__) > 40  # each names its variant and why


def test_one_main_pass_and_one_kernel_for_all() -> None:
    metrics = [M() for M in METRICS if not M.info.population]
    needs = frozenset().union(*(m.requirements for m in metrics))
    passes = SharedPasses(H.tiny_net(GOOD), H.batch(), CTX, needs=needs)
    for m in metrics:
        assert math.isfinite(m.score_shared(passes))
    assert passes.main_passes == 1
    kernels = {k[1] for k in passes._memo if k[0] == "kernel"}
    # whole kernels only where a metric needs more than the diagonal: the per-sample NTK
    # (lambda_min, ntk_cond_per_sample) and TE-NAS's (ntk_cond)
    assert kernels == {kernel_preset("per-sample"), kernel_preset("tenas")}
    # the traces (ntk_trace: the HNAS code's kernel; ntk_trace_per_sample: read off the
    # per-sample kernel, already formed) and KNAS's sum of entries (the loss kernel) as norms
    norms = {k[1] for k in passes._memo if k[0] == "norms"}
    loss = KernelSpec(output="loss", bn="sample", params="all")
    assert norms == {kernel_preset("hnas-code"), kernel_preset("per-sample"), loss}


def test_all_none_cell_is_flagged_not_raised() -> None:
    metrics = [M() for M in METRICS if not M.info.population]
    out = score_model(H.tiny_net(ALL_NONE), H.batch(), metrics, ctx=CTX)
    assert out["jacob_cov"].flag == "nan"  # constant input gradient: undefined correlation
    assert out["ntk_cond"].flag == "inf"  # rank-one kernel (classifier bias only)
    assert all(s.error is None for s in out.values())


class Exploding(Metric):
    info = MetricInfo(name="exploding")

    def score(self, model: torch.nn.Module, batch: object, *, ctx: MetricContext) -> float:
        raise RuntimeError("boom")


def test_raising_metric_is_flagged_with_its_error() -> None:
    out = score_model(H.tiny_net(GOOD), H.batch(), [Exploding()], ctx=CTX)
    assert out["exploding"].flag == "error" and "boom" in out["exploding"].error


def test_flagged_architectures_rank_worst() -> None:
    space = H.nb201()
    gs = [
        space.parse(a)
        for a in (ALL_NONE, GOOD, "|skip_connect~0|+|nor_conv_3x3~0|none~1|+|none~0|none~1|nor_conv_1x1~2|")
    ]
    table = score_genotypes(space, gs, ["jacob_cov", "ntk_cond", "snip"], data=H.batch(8), build=H.TINY)
    assert table.flagged("jacob_cov") == [0]
    assert table.ranking("jacob_cov")[-1] == gs[0]
    assert table.ranking("ntk_cond")[-1] == gs[0]  # lower is better, yet inf is last


def test_ensemble_is_a_population_rank() -> None:
    space = H.nb201()
    gs = [space.parse(a) for a in (ALL_NONE, GOOD)] + [
        space.sample(__import__("random").Random(i)) for i in range(4)
    ]
    table = score_genotypes(space, gs, ["ensemble"], data=H.batch(8), build=H.TINY)
    assert set(table.metrics) >= {"ensemble", "synflow", "jacob_cov", "snip"}
    ens = table.values("ensemble")
    assert np.all((ens >= 0) & (ens <= 1))
    # the all-none cell is worst or tied-worst on every member, so worst overall
    assert ens[0] == ens.min()
    manual = np.mean(
        [
            (np.argsort(np.argsort(np.nan_to_num(table.values(m), nan=-np.inf)))) / (len(gs) - 1)
            for m in ("synflow", "snip")
        ],
        axis=0,
    )
    assert manual.shape == ens.shape
    with pytest.raises(NasforgeError, match="ranks a population"):
        RankEnsemble().score(H.tiny_net(GOOD), H.batch(), ctx=CTX)


def test_variants_get_their_own_labels() -> None:
    assert BY_NAME["ntk_trace"]().cache_key() == "ntk_trace"
    assert BY_NAME["ntk_trace"](output="sum").cache_key() == "ntk_trace[sum,decomposed,layers]"
    assert BY_NAME["ntk_lambda_min"](output="target").cache_key() == "ntk_lambda_min[target,sample,all]"
    assert BY_NAME["ntk_lambda_min"](method="jvp").cache_key() == "ntk_lambda_min"
    assert BY_NAME["knas"](variant="thesis").cache_key().startswith("knas[thesis")
    with pytest.raises(ValueError):
        BY_NAME["knas"](variant="nope")


def test_unshareable_kernel_variants_still_score() -> None:
    """A jvp-method or coupled-BN NTK cannot join the joint per-sample pass; it must
    still be computed (alone) and agree with the default kernel where it should."""
    metrics = [
        BY_NAME["ntk_trace_per_sample"](),
        BY_NAME["ntk_trace_per_sample"](method="jvp"),
        BY_NAME["ntk_cond_per_sample"](bn="batch"),
        BY_NAME["ntk_cond"](method="jvp"),
        BY_NAME["knas"](),
    ]
    out = score_model(H.tiny_net(GOOD), H.batch(), metrics, ctx=CTX)
    assert all(s.ok for s in out.values()), out
    # jvp changes the cost, not the number, so both land in one column
    assert list(out) == ["ntk_trace_per_sample", "ntk_cond_per_sample[sum,batch,all]", "ntk_cond", "knas"]
    exact = score_model(H.tiny_net(GOOD), H.batch(), [BY_NAME["ntk_cond"]()], ctx=CTX)["ntk_cond"]
    assert out["ntk_cond"].value == pytest.approx(exact.value, rel=1e-4)
