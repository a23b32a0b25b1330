"""Theorem 1: with two activations, arg max alpha is the shared-weight best, always.

200 seeded trials, each a random pair from the activation library, a random weight scale
and a random alpha, with realizable labels (A3): arg max recovers the best in all of them
(the research note's R2), Condition 6 holds with equality (D_1 = D_2), and the verdict is
"consistent". With two candidates Theorem 1 is an equivalence (E3).
"""

from __future__ import annotations

import random

import pytest
import torch

from nasforge.kernel.seeding import seeded_generator
from nasforge_simplex.consistency import CONSISTENT, consistency_report
from nasforge_simplex.two_layer import draw_two_layer

LIBRARY = ("relu", "leaky_relu", "tanh", "sigmoid", "softplus", "elu", "gelu", "swish", "identity")
TRIALS = 200


def trial(seed: int):
    rng = random.Random(seed)
    ops = tuple(rng.sample(LIBRARY, 2))
    net = draw_two_layer(k=10, d=32, n=2000, scale=rng.uniform(0.5, 3.0), seed=seed)
    g = net.outputs(ops)
    a1 = float(torch.rand((), generator=seeded_generator(seed), dtype=torch.float64))
    alpha = torch.tensor([a1, 1.0 - a1], dtype=torch.float64)
    return consistency_report(g, alpha, ops, targets=g @ alpha, fragility_draws=100)


def test_arg_max_recovers_the_shared_best_in_every_one_of_200_trials() -> None:
    reports = [trial(seed) for seed in range(TRIALS)]
    recovered = sum(r.match for r in reports)
    assert recovered == TRIALS, f"arg max recovered the best in {recovered}/{TRIALS}"
    for r in reports:
        assert r.verdict == CONSISTENT
        assert r.certified  # Theorem 1: no condition needed (Condition 6 holds with equality)
        assert r.D[0] == pytest.approx(r.D[1], rel=1e-9)
        assert (r.alpha[0] > r.alpha[1]) == (r.losses[0] < r.losses[1])  # E3: an equivalence
