"""The paper's setting: a two-layer network ``f(x) = v . sigma_alpha(W x)`` and its candidates.

Fixtures and pre-search checks need the candidates' outputs ``g_i(x) = v . sigma_i(W x)``
with shared ``W`` (stored ``(d, k)``: the paper writes ``sigma(W x)`` but ``W*^T x`` in its
proofs) and a fixed ``v`` of entries ``+-1/sqrt(d)`` (our choice: the paper calls only ``W``
shared), drawn from one seed, in float64 so that the identities hold to 1e-10 and not to
float32's rounding. Inputs are ``x ~ N(0, I_k)`` (the paper states no input distribution),
weights ``W_ij ~ N(0, scale^2 / k)``.

:func:`op_set_report` is the pre-search check of a candidate set (our derivation from
fragility): it draws such a network, asks how far apart the candidates' outputs are, and
flags near-duplicates before any search is run.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import torch
from attrs import validators as v

from nasforge.kernel.seeding import seeded_generator
from nasforge_simplex.activations import apply_activation, check_ops
from nasforge_simplex.consistency import ConsistencyReport, consistency_report

#: LeakyReLU's slope in our test fixtures (the paper fixes none).
FIXTURE_NEGATIVE_SLOPE = 0.1


@attrs.frozen
class TwoLayer:
    """A drawn two-layer network: inputs ``x (n, k)``, shared ``w (d, k)``, head ``v (d,)``."""

    x: torch.Tensor
    w: torch.Tensor
    v: torch.Tensor
    negative_slope: float = FIXTURE_NEGATIVE_SLOPE

    def outputs(self, ops: Sequence[str]) -> torch.Tensor:
        """``(n, h)``: column i is ``v . sigma_i(W x)`` for every input."""
        z = self.x @ self.w.T
        return torch.stack(
            [apply_activation(op, z, negative_slope=self.negative_slope) @ self.v for op in ops], 1
        )


def draw_two_layer(
    *,
    k: int = 20,
    d: int = 64,
    n: int = 20_000,
    scale: float = 2.0,
    seed: int = 0,
    negative_slope: float = FIXTURE_NEGATIVE_SLOPE,
    dtype: torch.dtype = torch.float64,
) -> TwoLayer:
    """A network and its inputs from ``seed`` alone (a local generator, not torch's global one)."""
    gen = seeded_generator(seed)
    x = torch.randn((n, k), generator=gen, dtype=dtype)
    w = torch.randn((d, k), generator=gen, dtype=dtype) * (scale / k**0.5)
    signs = torch.randint(0, 2, (d,), generator=gen).to(dtype) * 2 - 1
    return TwoLayer(x, w, signs / d**0.5, negative_slope)


@attrs.frozen
class OpSetCheck:
    """Settings of :func:`op_set_report` (validated: they come from the command line)."""

    k: int = attrs.field(default=20, validator=[v.instance_of(int), v.ge(1), v.le(4096)])
    d: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(1), v.le(1 << 14)])
    n: int = attrs.field(default=20_000, validator=[v.instance_of(int), v.ge(2), v.le(1 << 22)])
    scale: float = attrs.field(default=2.0, converter=float, validator=[v.gt(0.0), v.le(1e3)])
    negative_slope: float = attrs.field(
        default=FIXTURE_NEGATIVE_SLOPE, converter=float, validator=[v.ge(0.0), v.lt(1.0)]
    )
    seed: int = attrs.field(default=0, validator=v.instance_of(int))


def op_set_report(
    ops: Sequence[str], alpha: Sequence[float] | None = None, *, check: OpSetCheck | None = None
) -> ConsistencyReport:
    """The diagnostic of a candidate set in the paper's setting, before any search.

    ``alpha`` is a hypothesised point (default: uniform) and the labels are taken as
    realizable (``y = f_alpha``), so the report shows the geometry alone: distances,
    near-duplicates, fragility, and which candidate arg max would get wrong at that alpha.
    """
    ops = check_ops(tuple(ops))
    check = check or OpSetCheck()
    net = draw_two_layer(
        k=check.k,
        d=check.d,
        n=check.n,
        scale=check.scale,
        seed=check.seed,
        negative_slope=check.negative_slope,
    )
    g = net.outputs(ops)
    a = (
        torch.full((len(ops),), 1.0 / len(ops), dtype=torch.float64)
        if alpha is None
        else torch.tensor(alpha, dtype=torch.float64)
    )
    return consistency_report(g, a, ops, targets=g @ a, seed=check.seed)
