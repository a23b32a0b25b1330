"""NESBS in the thesis's regime: the posterior budget in steps, its entropy watched, the
URS-T baseline, and the check that the supernet ranks architectures."""

from __future__ import annotations

import logging
import math

import pytest
import torch

from nasforge.api import load_space
from nasforge.kernel.datasets import TensorData
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import as_supernet
from nasforge.run.builtin_datasets import load_digits
from nasforge_nesbs import ArchEncoding, ArchPosterior, Nesbs, NesbsConfig, fit_posterior, run_nesbs
from nasforge_nesbs.config import POSTERIOR_STEPS
from nasforge_nesbs.estimation import SupernetPredictor
from nasforge_nesbs.posterior_fit import NEAR_UNIFORM, near_uniform
from nasforge_nesbs.supernet_quality import WEAK_RANKING, SupernetQuality, check_supernet, report
from tests.plugins.nesbs.test_nesbs_posterior import GOOD, AdditiveSupernet

TINY = {
    "supernet_epochs": 1,
    "max_batches": 2,
    "batch_size": 16,
    "svgd_steps": 10,
    "iterations": 2,
    "supernet": {"C": 4, "N": 1},
}


@pytest.fixture
def toy() -> ArchEncoding:
    """A supernet whose likelihood is additive in its decisions (best ops: GOOD)."""
    return ArchEncoding(AdditiveSupernet())


def _additive(n: int = 256) -> tuple[TensorData, torch.Generator]:
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(0, 2, (n,), generator=gen)
    return TensorData("additive", torch.nn.functional.one_hot(y, 2).float(), y, 2), gen


def test_the_default_budget_is_the_theses_steps() -> None:
    assert NesbsConfig().posterior_steps == POSTERIOR_STEPS == 2360
    assert NesbsConfig().posterior_epochs is None


def test_the_posterior_takes_exactly_its_steps(toy, caplog) -> None:
    data, gen = _additive(100)  # 7 batches of 16 an epoch: 25 steps end inside the 4th pass
    calls: list[int] = []
    config = NesbsConfig(posterior_steps=25, batch_size=16)
    with caplog.at_level(logging.INFO, logger="nasforge.nesbs"):
        fit_posterior(toy.supernet, toy, data, config, gen, on_epoch=lambda i, *_: calls.append(i))
    assert "after 25 steps" in caplog.text
    assert calls == [0, 1, 2, 3]  # one report a pass when there are fewer than 20 passes


@pytest.mark.slow
def test_a_long_budget_reports_twenty_times_and_leaves_uniform(toy, caplog) -> None:
    data, gen = _additive(64)  # 2 batches of 32 a pass: 400 steps are 200 passes
    reports: list[float] = []
    config = NesbsConfig(posterior_steps=400, batch_size=32, posterior_lr=0.05)
    with caplog.at_level(logging.INFO, logger="nasforge.nesbs"):
        post = fit_posterior(
            toy.supernet, toy, data, config, gen, on_epoch=lambda i, nll, kl, p: reports.append(nll)
        )
    assert len(reports) == 20 and all(math.isfinite(r) for r in reports)
    assert post.mode() == GOOD
    entropy, prior, flat = near_uniform(post)
    assert entropy < NEAR_UNIFORM * prior and not flat
    assert "stays near uniform" not in caplog.text


def test_a_posterior_left_near_uniform_is_warned_about(toy, caplog) -> None:
    data, gen = _additive(64)
    with caplog.at_level(logging.WARNING, logger="nasforge.nesbs"):
        post = fit_posterior(toy.supernet, toy, data, NesbsConfig(posterior_steps=2), gen)
    assert near_uniform(post)[2]
    assert "stays near uniform" in caplog.text


def test_the_uniform_sampler_is_urs_t_and_fits_no_posterior() -> None:
    data = load_digits()
    space = load_space("nb201")
    config = NesbsConfig(sampler="uniform", seed=3, **TINY)
    supernet = seeded_build(lambda: space.supernet(C=4, N=1, num_classes=10, in_channels=1), 3)
    encoding = ArchEncoding(as_supernet(supernet, by="test"))
    stages: list[str] = []
    run = run_nesbs(supernet, encoding, data, config, on_stage=lambda stage, *_: stages.append(stage))
    assert "posterior" not in stages
    assert run.posterior.entropy() == pytest.approx(near_uniform(ArchPosterior(encoding))[1])
    assert len(run.candidates) == config.iterations and all(c.delta is None for c in run.candidates)
    best = min(c.scores["nll"] for c in run.candidates)
    assert run.ensemble_scores["nll"] == best  # selected as NESBS selects


def test_the_uniform_draws_do_not_follow_a_posterior() -> None:
    """URS draws every decision uniformly: over many candidates each op shows up about equally."""
    from nasforge_nesbs.sampling import uniform_ensemble

    space = load_space("nb201")
    encoding = ArchEncoding(as_supernet(space.supernet(C=4, N=1), by="test"))
    peaked = ArchPosterior(encoding, torch.tensor([[5.0, 0, 0, 0, 0]] * len(encoding)))
    draws = uniform_ensemble(peaked, 2000, torch.Generator().manual_seed(0))
    share = sum(a[0] == 0 for a in draws) / len(draws)
    assert abs(share - 0.2) < 0.03


@pytest.mark.slow
def test_the_supernet_check_trains_distinct_architectures_and_ranks_them() -> None:
    data = load_digits()
    train, held = data.split(0.7, seed=0)
    space = load_space("nb201")
    supernet = seeded_build(lambda: space.supernet(C=4, N=1, num_classes=10, in_channels=1), 0)
    encoding = ArchEncoding(as_supernet(supernet, by="test"))
    predictor = SupernetPredictor(supernet, encoding, held)
    kwargs = {"count": 3, "epochs": 1, "seed": 0, "build_options": {"C": 4, "N": 1}}
    quality = check_supernet(space, encoding, predictor, train, **kwargs)
    assert len(set(quality.members)) == 3 and len(quality.logits) == 3
    assert all(0.0 <= e <= 100.0 for e in quality.trained_error)
    assert quality.to_json()["spearman"] == quality.spearman
    again = check_supernet(space, encoding, predictor, train, **kwargs)
    assert again.trained_error == quality.trained_error  # same seed, same check


def test_a_supernet_that_does_not_rank_is_warned_about(caplog) -> None:
    def quality(trained_error: tuple[float, ...]) -> SupernetQuality:
        return SupernetQuality(
            ((0,), (1,), (2,), (3,)), (0.1, 0.2, 0.3, 0.4), trained_error, (1.0,) * 4, 5, ()
        )

    with caplog.at_level(logging.WARNING, logger="nasforge.nesbs"):
        report(quality((1.0, 2.0, 3.0, 4.0)))
    assert "barely ranks" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="nasforge.nesbs"):
        report(quality((4.0, 3.0, 2.0, 1.0)))
    assert "barely ranks" in caplog.text and quality((4.0, 3.0, 2.0, 1.0)).spearman < WEAK_RANKING


def test_the_strategy_reports_its_check_and_refuses_a_check_of_one() -> None:
    outcome = Nesbs(seed=0, quality_check=2, quality_epochs=1, posterior_steps=4, **TINY).fit(
        load_space("nb201"), load_digits()
    )
    checked = outcome.produced_by["supernet_quality"]
    assert len(checked["members"]) == 2 and "spearman" in checked
    assert outcome.produced_by["run"]["posterior_prior_entropy"] == pytest.approx(6 * math.log(5))
    with pytest.raises(NasforgeError, match="quality_check"):
        Nesbs(quality_check=1)


def test_supernet_steps_count_sgd_steps_whatever_the_dataset_size() -> None:
    """``supernet_steps`` is a budget in SGD steps (the last epoch cut short), so one setting
    carries from a CIFAR-sized split to a few thousand examples; unset, epochs count."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    from nasforge_nesbs.supernet_training import train_uniform

    assert NesbsConfig(supernet_epochs=4).supernet_schedule(3) == (4, 12)
    assert NesbsConfig(supernet_steps=7).supernet_schedule(3) == (3, 7)
    assert NesbsConfig(supernet_steps=0).supernet_schedule(3) == (0, 0)
    with pytest.raises(NasforgeError, match="supernet_steps"):
        NesbsConfig(supernet_steps=-1)
    space = load_space("nb201")
    g = torch.Generator().manual_seed(0)
    data = TensorData("toy", torch.randn(64, 1, 8, 8, generator=g), torch.arange(64) % 4, 4)
    encoding = ArchEncoding(as_supernet(space.supernet(C=4, N=1, num_classes=4, in_channels=1), by="test"))
    steps: list[int] = []
    hook = register_optimizer_step_post_hook(lambda *_: steps.append(1))
    try:  # 64 examples at batch 16: 4 steps an epoch, so 7 steps are 2 epochs, the second cut short
        config = NesbsConfig(supernet_steps=7, batch_size=16)
        logs = train_uniform(encoding.supernet, encoding, data, config, g)
    finally:
        hook.remove()
    assert len(steps) == 7 and len(logs) == 2


def test_recalibrated_batch_norm_scores_a_path_on_its_own_statistics_and_restores_the_supernet() -> None:
    """A14's other reading: the path's running statistics re-estimated on the supernet's
    training split, then eval mode. A prediction then no longer depends on the rest of its
    evaluation batch (with batch statistics it does), and the supernet is left exactly as it
    was (buffers, momentum, mode)."""
    from torch.nn.modules.batchnorm import _BatchNorm

    data = load_digits()
    train, held = data.split(0.7, seed=0)
    held = TensorData("held", held.x[:40], held.y[:40], held.num_classes)
    space = load_space("nb201")
    supernet = seeded_build(lambda: space.supernet(C=4, N=1, num_classes=10, in_channels=1), 0)
    encoding = ArchEncoding(as_supernet(supernet, by="test"))
    bns = [m for m in supernet.modules() if isinstance(m, _BatchNorm)]
    before = [(m.training, m.track_running_stats, m.momentum, m.running_mean) for m in bns]
    from nasforge_nb201 import OP_NAMES

    a = (OP_NAMES.index("nor_conv_3x3"),) * len(encoding)  # convolutions: outputs vary by example

    def logits(bn: str, batch_size: int) -> torch.Tensor:
        kwargs = {"calibration": train, "calibration_batches": 3, "calibration_batch_size": 32}
        return SupernetPredictor(supernet, encoding, held, batch_size=batch_size, bn=bn, **kwargs).logits(a)

    assert torch.allclose(logits("recalibrate", 40), logits("recalibrate", 7), atol=1e-5)
    assert not torch.allclose(logits("batch", 40), logits("batch", 7), atol=1e-3)
    assert not torch.allclose(logits("recalibrate", 40), logits("batch", 40), atol=1e-3)
    after = [(m.training, m.track_running_stats, m.momentum, m.running_mean) for m in bns]
    assert all(x[:3] == y[:3] and (x[3] is y[3]) for x, y in zip(before, after, strict=True)), (
        "the supernet's BatchNorms are restored"
    )
    with pytest.raises(ValueError, match="recalibrate"):
        SupernetPredictor(supernet, encoding, held, bn="recalibrate")  # no calibration data
    with pytest.raises(NasforgeError, match="bn"):
        NesbsConfig(bn="running")


@pytest.mark.slow
def test_a_search_with_recalibrated_batch_norm_runs_end_to_end() -> None:
    data = load_digits()
    space = load_space("nb201")
    config = NesbsConfig(seed=2, bn="recalibrate", bn_batches=2, **TINY)
    supernet = seeded_build(lambda: space.supernet(C=4, N=1, num_classes=10, in_channels=1), 2)
    encoding = ArchEncoding(as_supernet(supernet, by="test"))
    run = run_nesbs(supernet, encoding, data, config)
    assert run.predictor is not None and run.predictor.bn == "recalibrate"
    assert math.isfinite(run.ensemble_scores["nll"]) and len(run.members) == config.ensemble_size
