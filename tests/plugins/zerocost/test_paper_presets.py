"""Each paper preset equals an independent reimplementation of the paper's code on three
NAS-Bench-201 cells (issue 11): fisher (zero-cost-nas), ntk_cond (TE-NAS), ntk_trace
(HNAS), nasi_proxy (NASI), and the zero-cost pairwise vote."""

from __future__ import annotations

import math

import numpy as np
import paper_refs as R
import pytest
import torch
import zc_helpers as H

from nasforge import MetricContext
from nasforge.kernel.seeding import seeded_build
from nasforge.tools.scoring import MetricScore, score_model
from nasforge_zerocost.catalogue import BY_NAME
from nasforge_zerocost.ensemble import VoteEnsemble, vote_agreement

CELLS = (
    "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|",
    "|skip_connect~0|+|none~0|nor_conv_3x3~1|+|nor_conv_1x1~0|none~1|avg_pool_3x3~2|",
    "|nor_conv_1x1~0|+|avg_pool_3x3~0|nor_conv_3x3~1|+|none~0|skip_connect~1|nor_conv_1x1~2|",
)
CTX = MetricContext()


def net(arch: str, *, double: bool = False) -> torch.nn.Module:
    space = H.nb201()
    model = seeded_build(lambda: space.build(space.parse(arch), **H.TINY), 0).train()
    return model.double() if double else model


def batch(double: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = H.batch()
    return (x.double() if double else x), y


def score(name: str, model: torch.nn.Module, b: tuple[torch.Tensor, torch.Tensor], **kw: str) -> float:
    return BY_NAME[name](**kw).score(model, b, ctx=CTX)


@pytest.mark.parametrize("arch", CELLS)
def test_fisher_is_the_published_form_and_fisher_channel_ours(arch: str) -> None:
    x, y = batch()
    published, channel = R.zero_cost_fisher(net(arch), x, y)
    assert score("fisher", net(arch), (x, y)) == pytest.approx(published, rel=1e-5)
    assert score("fisher_channel", net(arch), (x, y)) == pytest.approx(channel, rel=1e-5)
    assert published > channel  # every channel counts C_in·k·k ≥ 1 times


@pytest.mark.slow
@pytest.mark.parametrize("arch", CELLS)
def test_ntk_cond_is_tenas_kernel(arch: str) -> None:
    x, y = batch(double=True)
    eig = torch.linalg.eigvalsh(R.tenas_kernel(net(arch, double=True), x))
    kappa = float(eig[-1] / eig[0])
    assert score("ntk_cond", net(arch, double=True), (x, y)) == pytest.approx(kappa, rel=1e-7)
    # and the per-sample kernel is a different number
    other = score("ntk_cond_per_sample", net(arch, double=True), (x, y))
    assert other != pytest.approx(kappa, rel=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("arch", CELLS)
def test_ntk_trace_is_the_hnas_code_kernel(arch: str) -> None:
    x, y = batch(double=True)
    theta = R.hnas_kernel(net(arch, double=True), x, y)
    m_trace = math.sqrt(float(theta.trace()) / len(x))
    assert score("ntk_trace", net(arch, double=True), (x, y)) == pytest.approx(m_trace, rel=1e-9)
    # κ of the same kernel, as HNAS's score pairs them
    eig = torch.linalg.eigvalsh(theta)
    kappa = score("ntk_cond", net(arch, double=True), (x, y), preset="hnas-code")
    assert kappa == pytest.approx(float(eig[-1] / eig[0]), rel=1e-6)


@pytest.mark.parametrize("arch", CELLS)
def test_nasi_proxy_is_batch_statistics_and_knas_is_not(arch: str) -> None:
    x, y = batch(double=True)
    ref = R.nasi_proxy(net(arch, double=True), x, y)
    assert score("nasi_proxy", net(arch, double=True), (x, y)) == pytest.approx(ref, rel=1e-9)
    # KNAS's formula on the coupled batch's Jacobian is the same number, at m times the cost
    assert score("knas", net(arch, double=True), (x, y), bn="batch") == pytest.approx(ref, rel=1e-7)
    # KNAS's own pipeline (samples forwarded alone) is not
    assert score("knas", net(arch, double=True), (x, y)) != pytest.approx(ref, rel=1e-3)


def test_named_presets_label_their_columns() -> None:
    assert BY_NAME["ntk_cond"]().cache_key() == "ntk_cond"
    assert BY_NAME["ntk_cond"](preset="per-sample").cache_key() == "ntk_cond[per-sample]"
    assert BY_NAME["ntk_trace"](preset="tenas").cache_key() == "ntk_trace[tenas]"
    hnas = BY_NAME["ntk_trace_per_sample"](preset="hnas-code")
    assert hnas.cache_key() == "ntk_trace_per_sample[hnas-code]"
    assert BY_NAME["ntk_lambda_min"](bn="batch").cache_key() == "ntk_lambda_min[sum,batch,all]"
    with pytest.raises(ValueError, match="unknown kernel preset 'te-nas'"):
        BY_NAME["ntk_cond"](preset="te-nas")


def test_per_sample_names_keep_the_old_numbers() -> None:
    """``ntk_*_per_sample`` are the kernels ``ntk_trace``/``ntk_cond`` had before the presets;
    ``ntk_cond_per_sample``'s version stays 1 so cached scores of it stay valid, while the
    renamed defaults changed numbers and bumped theirs. The trace metrics bumped theirs
    again when their traces came from per-sample gradient norms (the same numbers to float
    rounding)."""
    model, b = net(CELLS[0]), batch()
    preset = score("ntk_trace", model, b, preset="per-sample")
    assert score("ntk_trace_per_sample", model, b) == pytest.approx(preset)
    assert BY_NAME["ntk_trace"].info.version == "3" and BY_NAME["ntk_cond"].info.version == "2"
    assert BY_NAME["fisher"].info.version == "2"
    assert BY_NAME["ntk_trace_per_sample"].info.version == "2"
    assert BY_NAME["ntk_cond_per_sample"].info.version == "1"
    assert BY_NAME["fisher_channel"].info.version == "1"


def test_vote_agreement_is_the_notebook_statistic() -> None:
    gen = np.random.default_rng(0)
    acc = np.round(gen.normal(size=40), 1)  # ties in accuracy are skipped
    base = acc + gen.normal(scale=0.8, size=40)
    members = [base + gen.normal(scale=0.5, size=40) for _ in range(3)]
    members[1] = np.round(members[1])  # ties within a member count as no vote
    assert vote_agreement(members, [True] * 3, acc) == pytest.approx(R.notebook_vote(members, acc), abs=1e-15)
    # a lower-is-better member is turned before voting
    flipped = [members[0], -members[1], members[2]]
    assert vote_agreement(flipped, [True, False, True], acc) == pytest.approx(R.notebook_vote(members, acc))
    # one member: its pairwise ordering accuracy
    assert vote_agreement([acc], [True], acc) == 1.0


def test_vote_ensemble_is_the_share_of_majority_wins() -> None:
    gen = np.random.default_rng(1)
    cols = {m: gen.normal(size=12) for m in ("synflow", "jacob_cov", "snip")}
    cols["jacob_cov"][3] = np.nan  # flagged: loses every comparison for that member
    ensemble = VoteEnsemble()
    columns = {m: [MetricScore(m, float(v)) for v in c] for m, c in cols.items()}
    infos = {m: BY_NAME[m].info for m in cols}
    got = ensemble.aggregate(columns, infos)
    oriented = {m: np.where(np.isfinite(c), c, -np.inf) for m, c in cols.items()}
    want = [
        sum(sum(oriented[m][i] > oriented[m][j] for m in cols) >= 2 for j in range(12) if j != i) / 11
        for i in range(12)
    ]
    assert got == pytest.approx(want)


@pytest.mark.slow
def test_shared_pass_equals_separate_for_the_new_metrics() -> None:
    names = ("fisher", "fisher_channel", "ntk_trace", "ntk_cond", "ntk_lambda_min", "knas", "nasi_proxy")
    metrics = [BY_NAME[n]() for n in names]
    model, b = net(CELLS[0]), batch()
    shared = score_model(model, b, metrics, ctx=CTX, shared=True)
    separate = score_model(model, b, metrics, ctx=CTX, shared=False)
    for name in names:
        assert shared[name].ok, shared[name]
        assert shared[name].value == pytest.approx(separate[name].value, rel=1e-6), name


def test_nasi_proxy_writes_no_running_statistics() -> None:
    model, b = net(CELLS[0]), batch()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    score("nasi_proxy", model, b)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
