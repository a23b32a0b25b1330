"""What a declared space costs: act-mlp as a declaration against its hand-written code, in one run.

``act-mlp`` was a hand-written space with a hand-written supernet; it is now a declaration
(:mod:`nasforge_simplex.act_mlp_space`). The hand-written network and supernet are kept
below, as they were, as the baseline. For both the script times, alternating, median of
``--repeats``:

- building one genotype's network (the declared ``space.build(g)`` against constructing
  the hand-written network), over a fixed list of sampled genotypes;
- one supernet step: a forward under softmax weights, a backward and an SGD step of the
  weights, on a batch of digits-sized images (``--batch`` x 3 x 8 x 8, width ``--width``).

First it checks that the two compute the same: seeded, the same parameters and the same
logits (the hand-written supernet and network against the declared ones). It prints the
times and the ratio declared / hand-written for each, and exits 1 when a ratio exceeds
``--limit`` (1.2). Run on a quiet machine, one thread::

    python benchmarks/declared_space_speed.py
    python benchmarks/declared_space_speed.py --repeats 200 --width 128
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import torch
from torch import nn

from nasforge.kernel.seeding import seeded_build
from nasforge_simplex.act_mlp_network import InputAdapter, check_sizes
from nasforge_simplex.act_mlp_space import ActMlpSpace
from nasforge_simplex.activations import make_activation


# --- the hand-written act-mlp network and supernet, as they were (the baseline) ---------------
class Skeleton(nn.Module):
    def __init__(self, layers: int, *, width: int, num_classes: int, in_channels: int, pool: int) -> None:
        super().__init__()
        features = check_sizes(
            width=width, num_classes=num_classes, in_channels=in_channels, in_features=None, pool=pool
        )
        self.adapter = InputAdapter(pool)
        self.linears = nn.ModuleList(nn.Linear(features if i == 0 else width, width) for i in range(layers))
        self.head = nn.Linear(width, num_classes)


class HandNetwork(Skeleton):
    def __init__(
        self, ops: Sequence[str], *, width: int, num_classes: int, in_channels: int, pool: int
    ) -> None:
        super().__init__(len(ops), width=width, num_classes=num_classes, in_channels=in_channels, pool=pool)
        self.acts = nn.ModuleList(make_activation(op) for op in ops)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.adapter(x)
        for linear, act in zip(self.linears, self.acts, strict=True):
            h = act(linear(h))
        return self.head(h)


class MixedActivation(nn.Module):
    def __init__(self, ops: Sequence[str]) -> None:
        super().__init__()
        self.acts = nn.ModuleList(make_activation(op) for op in ops)

    def forward(self, z: torch.Tensor, weights: torch.Tensor, active: Sequence[int]) -> torch.Tensor:
        out: torch.Tensor | None = None
        for k in active:
            term = weights[k] * self.acts[k](z)
            out = term if out is None else out + term
        return torch.zeros_like(z) if out is None else out


class HandSupernet(Skeleton):
    def __init__(
        self, layers: int, ops: Sequence[str], *, width: int, num_classes: int, in_channels: int, pool: int
    ):
        super().__init__(layers, width=width, num_classes=num_classes, in_channels=in_channels, pool=pool)
        self.mixed = nn.ModuleList(MixedActivation(ops) for _ in range(layers))
        self.alpha = nn.Parameter(1e-3 * torch.randn(layers, len(ops)))

    def forward(self, x: torch.Tensor, weights: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        w = torch.softmax(self.alpha, dim=-1) if weights is None else weights[0]
        if not w.requires_grad:
            active: list[Sequence[int]] = [[k for k, on in enumerate(r) if on] for r in w.ne(0).tolist()]
        else:
            active = [range(w.shape[1])] * w.shape[0]
        h = self.adapter(x)
        for layer, (linear, mixed) in enumerate(zip(self.linears, self.mixed, strict=True)):
            h = mixed(linear(h), w[layer], active[layer])
        return self.head(h)


# --- timing -------------------------------------------------------------------------------------
def median_seconds(a: Callable[[], object], b: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median seconds of ``a`` and of ``b``, timed alternately (after one warm-up each)."""
    a(), b()
    ta, tb = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        a()
        ta.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b()
        tb.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument(
        "--limit", type=float, default=1.2, help="largest acceptable ratio declared / hand-written"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    space = ActMlpSpace(layers=args.layers)
    sizes = {"width": args.width, "num_classes": 10, "in_channels": 3, "pool": 8}
    rng = random.Random(0)
    genotypes = [space.sample(rng) for _ in range(16)]
    x = torch.randn(args.batch, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 10, (args.batch,), generator=torch.Generator().manual_seed(1))

    # the same computation, seeded alike
    for g in genotypes[:4]:
        ours = seeded_build(lambda g=g: space.build(g, **sizes), 3).eval()
        theirs = seeded_build(lambda g=g: HandNetwork([str(o) for o in g.choices], **sizes), 3).eval()
        assert torch.equal(ours(x), theirs(x)), (
            f"build({space.format(g)}) differs from the hand-written network"
        )
    declared = seeded_build(lambda: space.supernet(**sizes), 5)
    hand = seeded_build(lambda: HandSupernet(args.layers, space.ops, **sizes), 5)
    assert torch.equal(declared(x), hand(x)), "the declared supernet differs from the hand-written one"

    build_ours, build_theirs = median_seconds(
        lambda: [space.build(g, **sizes) for g in genotypes],
        lambda: [HandNetwork([str(o) for o in g.choices], **sizes) for g in genotypes],
        args.repeats,
    )

    def stepper(net: nn.Module, weights: list[nn.Parameter]) -> Callable[[], None]:
        optimiser = torch.optim.SGD(weights, lr=0.01, momentum=0.9)

        def step() -> None:
            loss = nn.functional.cross_entropy(net(x), y)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()

        return step

    hand_weights = [p for n, p in hand.named_parameters() if n != "alpha"]
    step_ours, step_theirs = median_seconds(
        stepper(declared, declared.weight_parameters()), stepper(hand, hand_weights), args.repeats
    )
    rows = [
        (f"build, {len(genotypes)} networks", build_ours, build_theirs),
        (f"supernet step, batch {args.batch}", step_ours, step_theirs),
    ]
    print(f"act-mlp, {args.layers} layers of width {args.width}, 1 thread, median of {args.repeats}")
    print(f"{'':32} {'declared':>12} {'hand-written':>14} {'ratio':>7}")
    worst = 0.0
    for what, ours_s, theirs_s in rows:
        ratio = ours_s / theirs_s
        worst = max(worst, ratio)
        print(f"{what:32} {ours_s * 1e3:10.3f}ms {theirs_s * 1e3:12.3f}ms {ratio:7.2f}")
    print(f"largest ratio {worst:.2f} (limit {args.limit})")
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
