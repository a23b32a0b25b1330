"""Does arg max alpha recover the shared-weight best? The paper's theory, as a check.

Given each candidate's output with the shared weights, ``g_i`` (the mixed edge forced to
candidate i, everything else as searched), and the simplex point ``alpha``, the supernet's
output is ``f = sum_i alpha_i g_i`` wherever the output is linear in that edge's weights.
Then (Roberts, Liang and Sala, §2: Lemma 5, Theorems 1, 4 and 7, and our derivations from
them, each marked):

- the identity: ``1/2 |g_i - f|^2 = (1 - alpha_i)^2 D_i`` with
  ``D_i = 1/2 |g_i - sum_{k != i} gamma_k g_k|^2``, ``gamma = alpha_{-i} / (1 - alpha_i)``
  (Lemma 5); under realizability (the paper's A3, ``y = f``) the left side is candidate i's loss
  ``L_i``, and at a stationary alpha (ours: a KKT point of alpha on the simplex) it is ``L_i - L_alpha``;
- the distance form (ours): the same quantity is ``1/2 (Delta alpha)_i - 1/4 alpha' Delta alpha``
  with ``Delta_ij = |g_i - g_j|^2``, so only unlabelled outputs and alpha are needed;
- Theorem 7: ``L_i < L_j`` and Condition 6 (``D_i >= D_j``) imply ``alpha_j < alpha_i``;
  arg max is certified when Condition 6 holds between the best and every other candidate
  (h = 2 needs no condition: Theorem 1), and only where the theorem's assumptions hold
  (not in the heuristic regime below);
- the exact pairwise margins (ours): ``M_j = (alpha_m - alpha_j) Delta_mj -
  sum_{k not in {m, j}} alpha_k (Delta_mk - Delta_jk) = 2 (L_j - L_m)`` for the arg max m;
  arg max is the best iff every margin is positive. Near-duplicates (small ``Delta_ij``)
  shrink the first term, so the others decide: weight split between two near-identical
  candidates hands arg max to a third (the "mass splitting" failure);
- fragility (ours): the chance, over ``alpha ~ Dirichlet(1)``, that arg max and the
  geometric best disagree; zero iff the candidates are equidistant.

Condition 6 is sufficient, not necessary, and conservative; the margins are exact under
A3 or stationarity and our derivation (not the paper's). The report says which regime applies:
"exact" needs the squared loss, a linear edge (small linearity gap) and realizability or
stationarity (small identity residual); without targets A3 is assumed; anything else
(cross-entropy, an edge followed by non-linear layers) is "heuristic", and only the
direct comparison of arg max with the measured shared-weight losses is then a fact.
Every verdict compares arg max with those losses, the near-vertex case included: an
exponentiated-gradient search reaches a vertex whatever the losses say.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import torch
import torch.nn.functional as F

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.seeding import seeded_generator
from nasforge.tools.scoring import kendall
from nasforge_simplex.losses import squared_targets

#: Relative tolerance of Condition 6's comparison and of ties in float64 (the paper's
#: strict total order, its A1, meets ties and rounding).
EXACT_TOL = 1e-9
#: A pair is a near-duplicate when its distance is below this share of the typical distance.
NEAR_DUPLICATE_RATIO = 0.1
#: Largest linearity gap for which the identity is taken as exact (float32 supernets).
LINEARITY_TOL = 1e-4
#: Largest relative identity residual for the "exact (stationary)" regime (search mode).
IDENTITY_TOL = 1e-3
#: Dirichlet draws of the fragility estimate.
FRAGILITY_DRAWS = 20_000

REGIME_EXACT_REALIZABLE = "exact (realizable)"
REGIME_EXACT_STATIONARY = "exact (stationary)"
REGIME_ASSUMED = "assumed realizable (no targets)"
REGIME_HEURISTIC = "heuristic"

CONSISTENT = "consistent"
AMBIGUOUS = "ambiguous"
INCONSISTENT = "INCONSISTENT"


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def _matrix(values: Any) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(row) for row in values)


@attrs.frozen
class NearDuplicate:
    """Two candidates whose shared-weight outputs almost coincide."""

    first: str
    second: str
    #: ``Delta_ij`` over the typical distance (median pair; mean squared norm for h = 2).
    ratio: float

    def to_json(self) -> dict[str, Any]:
        return {"pair": [self.first, self.second], "ratio": self.ratio}


@attrs.frozen
class ConsistencyReport:
    """The diagnostic of one mixed edge: the numbers, the verdict and why."""

    ops: tuple[str, ...] = attrs.field(converter=to_tuple)
    alpha: tuple[float, ...] = attrs.field(converter=_floats)
    #: The loss each candidate has with the shared weights (the paper's L_i); without
    #: targets, the geometric loss (what L_i is under A3).
    losses: tuple[float, ...] = attrs.field(converter=_floats)
    supernet_loss: float | None
    #: ``1/2 |g_i - f|^2`` by the distance form: L_i under A3, L_i - L_alpha at stationarity.
    geometric: tuple[float, ...] = attrs.field(converter=_floats)
    #: Lemma 5's ``D_i`` (NaN where alpha_i is 1: no opposite face).
    D: tuple[float, ...] = attrs.field(converter=_floats)
    #: ``(1 - alpha_i)^2 D_i``: equal to ``geometric`` always, to L_i under A3.
    identity: tuple[float, ...] = attrs.field(converter=_floats)
    delta: tuple[tuple[float, ...], ...] = attrs.field(converter=_matrix)
    argmax: int
    shared_best: int
    #: ``condition6[i][j]``: ``L_i < L_j`` and ``D_i >= D_j`` (Theorem 7 then gives alpha_j < alpha_i).
    condition6: tuple[tuple[bool, ...], ...] = attrs.field(converter=_matrix)
    certified: bool
    #: Exact margins of the arg max against each candidate (NaN at the arg max itself).
    margins: tuple[float, ...] = attrs.field(converter=_floats)
    exact_ok: bool
    near_duplicates: tuple[NearDuplicate, ...] = attrs.field(converter=to_tuple)
    fragility: float
    equidistance_cv: float
    linearity_gap: float | None
    realizability_gap: float | None
    stationarity_gap: float | None
    identity_residual: float | None
    loss: str
    regime: str
    verdict: str
    reason: str
    warnings: tuple[str, ...] = attrs.field(converter=to_tuple)
    rank_by_alpha: tuple[int, ...] = attrs.field(converter=to_tuple)
    rank_by_shared: tuple[int, ...] = attrs.field(converter=to_tuple)
    kendall_tau: float

    @property
    def match(self) -> bool:
        """Whether arg max alpha is the shared-weight best."""
        return self.argmax == self.shared_best

    @property
    def exact(self) -> bool:
        return self.regime in (REGIME_EXACT_REALIZABLE, REGIME_EXACT_STATIONARY)

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON (NaN as null), for journals and ``--json`` outputs."""
        out = attrs.asdict(self, recurse=False)
        out["near_duplicates"] = [d.to_json() for d in self.near_duplicates]
        out["match"] = self.match
        return _json_safe(out)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def lemma5_distances(g: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """``D_i = 1/2 mean |g_i - sum_{k != i} alpha_k / (1 - alpha_i) g_k|^2`` (NaN at alpha_i = 1).

    Computed from the definition, apart from the distance form, so that the identity
    ``(1 - alpha_i)^2 D_i = 1/2 |g_i - f|^2`` is a check of two computations, not one.
    """
    h = g.shape[1]
    out = torch.full((h,), float("nan"), dtype=g.dtype, device=g.device)
    for i in range(h):
        rest = 1.0 - alpha[i]
        if rest <= 0:
            continue
        gamma = alpha.clone()
        gamma[i] = 0.0
        face = torch.einsum("nhm,h->nm", g, gamma / rest)
        out[i] = 0.5 * (g[:, i] - face).square().sum(dim=-1).mean()
    return out


def pairwise_distances(g: torch.Tensor) -> torch.Tensor:
    """``Delta_ij = mean |g_i - g_j|^2`` from the Gram matrix (clamped at zero)."""
    n = g.shape[0]
    flat = g.permute(1, 0, 2).reshape(g.shape[1], -1)
    gram = flat @ flat.T / n
    diag = gram.diagonal()
    return (diag[:, None] + diag[None, :] - 2 * gram).clamp_min(0.0)


def exact_margins(delta: torch.Tensor, alpha: torch.Tensor, m: int) -> torch.Tensor:
    """Exact margins (ours): ``M_j = 2 (L_j - L_m)`` under A3 or stationarity, from distances
    and alpha alone."""
    h = alpha.shape[0]
    out = torch.full((h,), float("nan"), dtype=delta.dtype)
    for j in range(h):
        if j == m:
            continue
        others = [k for k in range(h) if k not in (m, j)]
        rest = sum(
            (alpha[k] * (delta[m, k] - delta[j, k]) for k in others), torch.zeros((), dtype=delta.dtype)
        )
        out[j] = (alpha[m] - alpha[j]) * delta[m, j] - rest
    return out


def fragility(delta: torch.Tensor, *, draws: int = FRAGILITY_DRAWS, seed: int = 0) -> float:
    """P over ``alpha ~ Dirichlet(1)`` that arg max alpha is not the geometric best (fragility)."""
    gen = seeded_generator(seed)
    e = -torch.log(torch.rand((draws, delta.shape[0]), generator=gen, dtype=torch.float64).clamp_min(1e-300))
    a = e / e.sum(dim=-1, keepdim=True)  # normalised exponentials are Dirichlet(1)
    return float(((a @ delta.double()).argmin(dim=-1) != a.argmax(dim=-1)).double().mean())


def near_duplicates(
    delta: torch.Tensor, g: torch.Tensor, ops: Sequence[str], ratio: float
) -> tuple[NearDuplicate, ...]:
    """Pairs whose distance is below ``ratio`` of the typical one (median pair; for two
    candidates, their mean squared norm, since one distance has nothing to compare to)."""
    h = delta.shape[0]
    iu = torch.triu_indices(h, h, offset=1)
    off = delta[iu[0], iu[1]]
    mean_square = float(g.square().sum(dim=-1).mean(dim=0).mean())
    reference = float(off.median()) if h >= 3 else mean_square
    if reference <= 0:
        return ()
    out = []
    for i, j in zip(iu[0].tolist(), iu[1].tolist(), strict=True):
        r = float(delta[i, j]) / reference
        if r < ratio:
            out.append(NearDuplicate(ops[i], ops[j], r))
    return tuple(out)


def _candidate_losses(
    g: torch.Tensor, f: torch.Tensor, y: torch.Tensor, loss: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each candidate's loss, the supernet's, and ``d L / d alpha_k`` at linear ``f``."""
    if loss == "squared":
        t = squared_targets(y, g.shape[-1]).to(g.dtype)
        per = 0.5 * (t[:, None, :] - g).square().sum(dim=-1).mean(dim=0)
        residual = t - f
        return (
            per,
            0.5 * residual.square().sum(dim=-1).mean(),
            -torch.einsum("nm,nhm->h", residual, g) / g.shape[0],
        )
    labels = y.long()
    per = torch.stack([F.cross_entropy(g[:, i], labels) for i in range(g.shape[1])])
    p = torch.softmax(f, dim=-1) - F.one_hot(labels, f.shape[-1]).to(f.dtype)
    return per, F.cross_entropy(f, labels), torch.einsum("nm,nhm->h", p, g) / g.shape[0]


def consistency_report(
    outputs: torch.Tensor,
    alpha: torch.Tensor | Sequence[float],
    ops: Sequence[str],
    *,
    targets: torch.Tensor | None = None,
    supernet_output: torch.Tensor | None = None,
    loss: str = "squared",
    tie_tol: float = EXACT_TOL,
    near_duplicate_ratio: float = NEAR_DUPLICATE_RATIO,
    fragility_draws: int = FRAGILITY_DRAWS,
    seed: int = 0,
) -> ConsistencyReport:
    """The diagnostic of one mixed edge (module docstring).

    ``outputs`` is ``(n, h)`` or ``(n, h, m)``: candidate i's output with the shared
    weights on n inputs. ``targets`` (real ``(n,)``/``(n, m)``, or integer labels) are
    optional: without them realizability (A3) is assumed and the losses are geometric.
    ``supernet_output`` is the supernet's own output there (the linearity gap compares it
    with ``sum alpha_i g_i``); ``loss`` is "squared" or "cross_entropy" (then heuristic).
    Everything is computed in float64.
    """
    g = outputs.detach().double()
    if g.dim() == 2:
        g = g[:, :, None]
    if g.dim() != 3:
        raise ValueError(f"outputs must be (n, h) or (n, h, m), got shape {tuple(outputs.shape)}")
    a = torch.as_tensor(alpha, dtype=torch.float64).detach().double().flatten().cpu()
    g = g.cpu()
    n, h, _ = g.shape
    ops = tuple(ops)
    if a.shape[0] != h or len(ops) != h:
        raise ValueError(f"{h} candidates need {h} weights and names, got {a.shape[0]} and {len(ops)}")
    if h < 2:
        raise ValueError("a mixed edge needs at least two candidates")
    if loss not in ("squared", "cross_entropy"):
        raise ValueError(f"unknown loss {loss!r}")

    f_lin = torch.einsum("nhm,h->nm", g, a)
    f = f_lin if supernet_output is None else supernet_output.detach().double().cpu().reshape(n, -1)
    linearity_gap = None
    if supernet_output is not None:
        scale = f.square().sum(dim=-1).mean().sqrt()
        linearity_gap = float((f - f_lin).square().sum(dim=-1).mean().sqrt() / scale.clamp_min(1e-300))

    delta = pairwise_distances(g)
    geometric = 0.5 * (delta @ a) - 0.25 * (a @ delta @ a)
    D = lemma5_distances(g, a)
    identity = (1.0 - a).square() * D

    support = a > max(tie_tol, EXACT_TOL)
    supernet_loss = realizability_gap = stationarity_gap = identity_residual = None
    if targets is None:
        losses = geometric
        regime = REGIME_ASSUMED
    else:
        y = targets.detach().cpu()
        y = y.double() if y.is_floating_point() else y
        losses, l_alpha, grad = _candidate_losses(g, f, y, loss)
        supernet_loss = float(l_alpha)
        s = grad[support]
        spread = float(s.max() - s.min()) if s.numel() > 1 else 0.0
        stationarity_gap = spread / max(float(s.abs().mean()), 1e-300) if spread > 0 else 0.0
        if loss == "squared":
            t = squared_targets(y, g.shape[-1]).double()
            realizability_gap = float(l_alpha / max(float(0.5 * t.square().sum(dim=-1).mean()), 1e-300))
            excess = losses - l_alpha
            residual = (excess - geometric).abs() / excess.abs().clamp_min(1e-300)
            identity_residual = float(residual[support].max())
        linear = linearity_gap is None or linearity_gap <= LINEARITY_TOL
        if loss == "squared" and linear and realizability_gap is not None and realizability_gap <= EXACT_TOL:
            regime = REGIME_EXACT_REALIZABLE
        elif (
            loss == "squared"
            and linear
            and identity_residual is not None
            and identity_residual <= IDENTITY_TOL
        ):
            regime = REGIME_EXACT_STATIONARY
        else:
            regime = REGIME_HEURISTIC

    m = int(a.argmax())
    best = int(losses.argmin())
    d_max = float(torch.nan_to_num(D, nan=0.0).max())
    condition6 = [
        [
            bool(
                i != j
                and losses[i] < losses[j]
                and math.isfinite(float(D[i]))
                and math.isfinite(float(D[j]))
                and float(D[i]) >= float(D[j]) - tie_tol * d_max
            )
            for j in range(h)
        ]
        for i in range(h)
    ]
    # Theorem 7 holds under A3 (assumed without targets) or stationarity; a heuristic regime certifies nothing
    certified = regime != REGIME_HEURISTIC and all(condition6[best][j] for j in range(h) if j != best)
    margins = exact_margins(delta, a, m)
    exact_ok = bool(all(float(margins[j]) > 0 for j in range(h) if j != m))
    dups = near_duplicates(delta, g, ops, near_duplicate_ratio)
    iu = torch.triu_indices(h, h, offset=1)
    off = delta[iu[0], iu[1]]
    cv = float(off.std(unbiased=False) / off.mean()) if float(off.mean()) > 0 else float("nan")
    rank_alpha = sorted(range(h), key=lambda i: (-float(a[i]), i))
    rank_shared = sorted(range(h), key=lambda i: (float(losses[i]), i))
    tau = kendall([-float(x) for x in a], [float(x) for x in losses]) if h > 1 else float("nan")

    verdict, reason = _verdict(ops, a, losses, m, best, certified, exact_ok, regime, tie_tol)
    warnings = [
        f"near-duplicate candidates {d.first} ~ {d.second} (distance {d.ratio:.3g} of the typical pair): "
        "they split their weight, so arg max alpha is unreliable"
        for d in dups
    ]
    if regime == REGIME_HEURISTIC:
        why = []
        if loss != "squared":
            why.append(f"the loss is {loss}, not squared")
        if linearity_gap is not None and linearity_gap > LINEARITY_TOL:
            why.append(f"the output is not linear in this edge's weights (gap {linearity_gap:.2g})")
        if identity_residual is not None and identity_residual > IDENTITY_TOL:
            why.append(
                f"alpha is neither realizable nor stationary (identity residual {identity_residual:.2g})"
            )
        warnings.append("heuristic: " + "; ".join(why) + "; only the measured losses are facts")
    return ConsistencyReport(
        ops=ops,
        alpha=a.tolist(),
        losses=losses.tolist(),
        supernet_loss=supernet_loss,
        geometric=geometric.tolist(),
        D=D.tolist(),
        identity=identity.tolist(),
        delta=[[float(x) for x in row] for row in delta.tolist()],
        argmax=m,
        shared_best=best,
        condition6=condition6,
        certified=certified,
        margins=margins.tolist(),
        exact_ok=exact_ok,
        near_duplicates=dups,
        fragility=fragility(delta, draws=fragility_draws, seed=seed),
        equidistance_cv=cv,
        linearity_gap=linearity_gap,
        realizability_gap=realizability_gap,
        stationarity_gap=stationarity_gap,
        identity_residual=identity_residual,
        loss=loss,
        regime=regime,
        verdict=verdict,
        reason=reason,
        warnings=warnings,
        rank_by_alpha=rank_alpha,
        rank_by_shared=rank_shared,
        kendall_tau=tau,
    )


def _verdict(
    ops: tuple[str, ...],
    a: torch.Tensor,
    losses: torch.Tensor,
    m: int,
    best: int,
    certified: bool,
    exact_ok: bool,
    regime: str,
    tie_tol: float,
) -> tuple[str, str]:
    """The verdict and its reason, most specific first; every branch reads the losses.

    Near a vertex the geometric identity makes arg max the best only under A3; with
    measured losses that need not hold (an exponentiated-gradient search reaches vertices
    whatever the losses say), so the measured losses decide there as everywhere. Ties in
    alpha or in the losses are ambiguous only if the tied candidates include the best.
    """
    h = len(ops)
    top = float(a[m])
    tied_alpha = [i for i in range(h) if top - float(a[i]) <= tie_tol]
    low = float(losses[best])
    tied_loss = [i for i in range(h) if float(losses[i]) - low <= tie_tol * max(abs(low), 1e-300)]
    mismatch = (
        f"arg max picks {ops[m]} (alpha {top:.3g}) but {ops[best]} has the lowest shared-weight loss "
        f"({low:.4g} vs {float(losses[m]):.4g})"
    )
    if not set(tied_alpha) & set(tied_loss):
        vertex = " although alpha is (almost) that vertex" if 1.0 - top <= tie_tol else ""
        return INCONSISTENT, mismatch + vertex
    if len(tied_alpha) > 1:
        return (
            AMBIGUOUS,
            f"the largest weights ({', '.join(ops[i] for i in tied_alpha)}) are within {tie_tol:g}: "
            "arg max is a coin toss",
        )
    if len(tied_loss) > 1:
        return AMBIGUOUS, f"{', '.join(ops[i] for i in tied_loss)} tie for the lowest shared-weight loss"
    if 1.0 - top <= tie_tol:
        return CONSISTENT, (
            f"alpha is (almost) the vertex {ops[m]}, the shared best: the lowest measured shared-weight "
            f"loss ({low:.4g})"
        )
    if certified:
        return (
            CONSISTENT,
            f"arg max {ops[m]} is the shared best, certified by Theorem 7 (Condition 6 holds)",
        )
    if regime == REGIME_HEURISTIC or not exact_ok:
        return (
            CONSISTENT,
            f"arg max {ops[m]} is the shared best: the lowest measured shared-weight loss "
            "(no theorem applies)",
        )
    return CONSISTENT, (
        f"arg max {ops[m]} is the shared best; Condition 6 does not certify it (it is conservative), "
        "the exact margins are all positive"
    )
