"""The shared training utilities: schedules, optimiser configs, clipping, batches, loop."""

from __future__ import annotations

import io
import math

import pytest
import torch
from rich.console import Console

from nasforge.run.training import (
    AdamConfig,
    CosineSchedule,
    LinearSchedule,
    SGDConfig,
    accuracy,
    clip_gradients,
    evaluate,
    iterate_batches,
    paired_batches,
    run_epochs,
    set_lr,
    train_epoch,
)


def test_cosine_matches_torch_scheduler() -> None:
    sched = CosineSchedule(0.025, 0.001, 50)
    opt = SGDConfig().build([torch.nn.Parameter(torch.zeros(1))])
    ref = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 50, eta_min=0.001)
    for e in range(50):
        assert math.isclose(sched(e), opt.param_groups[0]["lr"], rel_tol=1e-9)
        opt.step()
        ref.step()
    assert sched(0) == 0.025 and math.isclose(sched(50), 0.001) and sched(99) == sched(50)


def test_linear_schedule_endpoints_as_pr_darts_temperature() -> None:
    tau = LinearSchedule(10.0, 0.1, 200)
    assert tau(0) == 10.0 and math.isclose(tau(199), 0.1) and math.isclose(tau(500), 0.1)
    assert math.isclose(tau(161), 10 - 9.9 * 161 / 199)
    assert LinearSchedule(1.0, 0.1, 1)(0) == 0.1


def test_optimizer_configs_validate_and_build() -> None:
    p = torch.nn.Parameter(torch.ones(2))
    sgd = SGDConfig(lr=0.1, nesterov=True).build([p])
    assert sgd.param_groups[0]["nesterov"] and sgd.param_groups[0]["weight_decay"] == 3e-4
    adam = AdamConfig().build([p])
    assert adam.param_groups[0]["betas"] == (0.5, 0.999)
    set_lr(adam, 0.5)
    assert adam.param_groups[0]["lr"] == 0.5
    with pytest.raises(ValueError):
        SGDConfig(lr=0)
    with pytest.raises(ValueError):
        AdamConfig(betas=(0.5, 1.5))
    assert AdamConfig().to_json()["betas"] == [0.5, 0.999]


def test_clip_returns_pre_clip_norm_and_clips() -> None:
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    assert clip_gradients([p], None) == pytest.approx(5.0)
    assert clip_gradients([p], 1.0) == pytest.approx(5.0)
    assert torch.linalg.vector_norm(p.grad).item() == pytest.approx(1.0, rel=1e-5)
    assert clip_gradients([torch.nn.Parameter(torch.zeros(1))], 1.0) == 0.0
    with pytest.raises(ValueError):
        clip_gradients([p], 0.0)


def test_accuracy_topk() -> None:
    logits = torch.tensor([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5]])
    y = torch.tensor([1, 1, 0])
    assert accuracy(logits, y) == pytest.approx(1 / 3)
    assert accuracy(logits, y, k=2) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        accuracy(logits, y[:2])


def test_batches_cover_data_reproducibly() -> None:
    x, y = torch.arange(10).float().unsqueeze(1), torch.arange(10)
    a = [b[1].tolist() for b in iterate_batches(x, y, 4, generator=torch.Generator().manual_seed(0))]
    b = [b[1].tolist() for b in iterate_batches(x, y, 4, generator=torch.Generator().manual_seed(0))]
    assert a == b and [len(t) for t in a] == [4, 4, 2]
    assert sorted(sum(a, [])) == list(range(10))
    assert len(list(iterate_batches(x, y, 4, drop_last=True))) == 2
    pairs = list(paired_batches((x, y), (x[:3], y[:3]), 2, generator=torch.Generator().manual_seed(1)))
    assert len(pairs) == 5 and all(set(v[1].tolist()) <= {0, 1, 2} for _, v in pairs)


def test_train_epoch_and_run_epochs_fit_a_separable_problem() -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 2)
    y = (x[:, 0] > 0).long()
    model = torch.nn.Linear(2, 2)
    opt = SGDConfig(lr=0.5, weight_decay=0.0).build(model.parameters())
    gen = torch.Generator().manual_seed(0)
    seen: list[int] = []
    logs = run_epochs(
        5,
        lambda e: train_epoch(model, iterate_batches(x, y, 32, generator=gen), opt),
        progress=True,
        console=Console(file=io.StringIO()),
        on_epoch_end=lambda log: seen.append(log.epoch),
    )
    assert seen == [0, 1, 2, 3, 4] and logs[-1].metrics["loss"] < logs[0].metrics["loss"]
    loss, acc = evaluate(model, x, y, batch_size=100)
    assert acc > 0.95 and loss < 0.3 and model.training
