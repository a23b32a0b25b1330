"""The convergence probe and the filter-normalised loss landscape (issue 14, step 4)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasforge.kernel.datasets import load_dataset
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.run.training import evaluate
from nasforge_insight.convergence import ProbeSettings, split, summarise, train_curve
from nasforge_insight.landscape import filter_normalised_direction, surface

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def _cnn() -> nn.Module:
    return seeded_build(
        lambda: nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(256, 10)
        ),
        0,
    )


def test_directions_are_filter_normalised_and_ignore_biases_and_batchnorm() -> None:
    model = _cnn()
    for p, d in zip(model.parameters(), filter_normalised_direction(model, seeded_generator(1)), strict=True):
        if p.dim() <= 1:
            assert not d.any()
        else:
            assert torch.allclose(d.flatten(1).norm(dim=1), p.detach().flatten(1).norm(dim=1), rtol=1e-5)


def test_surface_centre_is_the_eval_loss_and_weights_are_restored(digits) -> None:
    model = _cnn()
    model.train()
    x, y = digits.x[:128], digits.y[:128]
    before = [p.detach().clone() for p in model.parameters()]
    s = surface(model, x, y, steps=5, span=0.5)
    loss, _ = evaluate(model, x, y)
    assert s.losses[2][2] == pytest.approx(loss, rel=1e-5) and s.centre == pytest.approx(loss, rel=1e-5)
    assert all(torch.equal(a, b.detach()) for a, b in zip(before, model.parameters(), strict=True))
    assert model.training and len(s.losses) == 5 and len(s.losses[0]) == 5
    assert max(max(r) for r in s.losses) > s.centre  # moving away from trained-or-not weights costs
    assert abs(s.cosine) < 0.2  # two random directions in many dimensions are nearly orthogonal
    assert surface(model, x, y, steps=5, span=0.5) == s  # seeded directions


def test_convergence_probe_is_deterministic_and_learns(digits) -> None:
    settings = ProbeSettings(epochs=2, batch_size=32, limit=400)
    train, test = split(digits, settings, seed=0)
    assert len(train) + len(test) == 400
    runs = [train_curve(_cnn(), train, test, settings, seed=0, label="cnn") for _ in range(2)]
    assert runs[0].step_loss == runs[1].step_loss and runs[0].test_loss == runs[1].test_loss
    curve = runs[0]
    assert len(curve.epoch_loss) == 2 and len(curve.step_loss) == 2 * -(-len(train) // 32)
    assert curve.epoch_loss[1] < curve.epoch_loss[0] and curve.test_accuracy > 0.5
    summary = summarise("cnn", runs)
    assert summary.auc == pytest.approx(curve.auc) and summary.auc_std == 0.0


@pytest.mark.slow
def test_figures_are_pngs(digits, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from nasforge_insight.figures import contour_figure, convergence_figure, variance_figure

    settings = ProbeSettings(epochs=2, batch_size=64, limit=200)
    train, test = split(digits, settings, seed=0)
    curves = {f"net {s}": [train_curve(_cnn(), train, test, settings, seed=s, label="x")] for s in (0, 1)}
    s = surface(_cnn(), test.x, test.y, steps=3)
    paths = [
        convergence_figure(curves, tmp_path / "curves.png"),
        contour_figure(s, "cnn", tmp_path / "deep" / "contour.png"),
        variance_figure({"a": (1.0, 2.0), "b": (3.0, 0.5)}, tmp_path / "variance.png"),
    ]
    for path in paths:
        assert path.read_bytes().startswith(PNG)
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        "contour.png",
        "curves.png",
        "deep",
        "variance.png",
    ]
