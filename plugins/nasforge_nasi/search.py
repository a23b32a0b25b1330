"""Algorithm 1 of NASI: T straight-through samples at α₀ = 0, one closed-form step.

Faithful to the paper's key facts (Algorithm 1): θ₀ is drawn once and never trained, α
is never updated inside the loop (every G_t is taken at α₀ = 0, so every sample is a
uniformly random architecture), and there is no optimiser: α* = α₀ + Δ* with Δ* from
eq. 18, then the arg-max architecture. BatchNorm uses batch statistics and writes no
running statistics (our choice; the paper does not say), through the backends' ``batch_norm_mode``.

Eq. 40's calibration draws its architectures and batches from a stream of its own
(:func:`calibration_generator`), never from the search's: the T samples and their batches
are then the same whatever ν₀ rule a run uses, so two rules compare on identical streams.
"""

from __future__ import annotations

import math
import random
import time
import warnings
from collections.abc import Callable

import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.tools.backends import batch_norm_mode
from nasforge_nasi.config import NasiConfig
from nasforge_nasi.constraint import AdaptiveConstraint, FixedConstraint
from nasforge_nasi.gumbel import straight_through_gumbel
from nasforge_nasi.normalised_sum import NormalisedSum
from nasforge_nasi.penalty import penalised_objective
from nasforge_nasi.proxy import trace_proxy
from nasforge_nasi.relaxation import Relaxation
from nasforge_nasi.run import NasiRun

BatchSource = Callable[[], tuple[torch.Tensor, torch.Tensor]]
#: Called after each step with (step, sampled architecture, Θ̃_t, ν_t, R_t, seconds).
StepCallback = Callable[[int, Genotype, float, float, float, float], None]


def calibration_generator(seed: int) -> torch.Generator:
    """The calibration's own generator, a function of the run's seed alone (not of torch's
    global state, and not sharing a draw with the search's generator)."""
    return torch.Generator().manual_seed(random.Random(f"nasi-eq40-calibration:{seed}").getrandbits(63))


def calibrate_nu(
    supernet: nn.Module,
    relaxation: Relaxation,
    batches: BatchSource,
    config: NasiConfig,
    generator: torch.Generator,
) -> list[float]:
    """Eq. 40's sample: proxies of N uniformly random architectures (no α gradient).

    ``batches`` and ``generator`` must be the calibration's own (:func:`run_nasi`)."""
    device = torch.device(config.device)
    weights = list(supernet.weight_parameters())  # type: ignore[operator]
    zeros = [torch.zeros(s, device=device) for s in relaxation.shapes]
    out = []
    for _ in range(config.calibration_samples):
        x, y = (t.to(device) for t in batches())
        with torch.no_grad():
            samples = [
                straight_through_gumbel(a, generator, tau=config.tau, mask=_on(m, device))
                for a, m in zip(zeros, relaxation.masks(), strict=True)
            ]
        value = trace_proxy(
            lambda inp, s=samples: relaxation.forward(supernet, inp, s),  # type: ignore[misc]  # s bound
            weights,
            x,
            y,
            loss=config.loss,
        )
        out.append(float(value))
    return out


def run_nasi(
    supernet: nn.Module,
    relaxation: Relaxation,
    batches: BatchSource,
    config: NasiConfig,
    generator: torch.Generator,
    on_step: StepCallback | None = None,
    *,
    calibration_batches: BatchSource | None = None,
) -> NasiRun:
    """Run Algorithm 1 on an initialised supernet; returns the derived architecture.

    ``on_step`` sees every sampled architecture as soon as its proxy exists (the
    one-shot runner journals them there). ``calibration_batches`` feed eq. 40 (when the
    ν₀ rule needs it); by default ``batches.fork`` makes them on the calibration's own
    generator, so the search's stream is the same with or without a calibration."""
    device = torch.device(config.device)
    supernet.to(device).train()
    weights = list(supernet.weight_parameters())  # type: ignore[operator]
    masks = [_on(m, device) for m in relaxation.masks()]
    with batch_norm_mode(supernet, "batch"):
        t0 = time.perf_counter()
        calibration: list[float] = []
        nu0, factor, nu0_rule = config.nu0_rule()
        if nu0 is None:
            own = calibration_generator(config.seed)
            source = calibration_batches if calibration_batches is not None else _fork(batches, own)
            calibration = calibrate_nu(supernet, relaxation, source, config, own)
            nu0 = factor * _positive(sum(calibration) / len(calibration))
        calibration_seconds = time.perf_counter() - t0
        constraint = FixedConstraint(nu0) if config.mode == "fix" else AdaptiveConstraint(nu0)
        alphas = [torch.zeros(s, device=device, requires_grad=True) for s in relaxation.shapes]
        acc = NormalisedSum(relaxation.size(), xi=config.xi)
        proxies: list[float] = []
        nus: list[float] = []
        norms: list[float] = []
        best_sample: tuple[float, list[torch.Tensor]] | None = None
        for step in range(config.steps):
            step_start = time.perf_counter()
            x, y = (t.to(device) for t in batches())
            samples = [
                straight_through_gumbel(a, generator, tau=config.tau, mask=m)
                for a, m in zip(alphas, masks, strict=True)
            ]
            trace = trace_proxy(
                lambda inp, s=samples: relaxation.forward(supernet, inp, s),  # type: ignore[misc]  # s bound
                weights,
                x,
                y,
                loss=config.loss,
                create_graph=True,
            )
            nu = constraint.value()
            objective = penalised_objective(trace, config.mu, nu)
            grads = torch.autograd.grad(objective, alphas, allow_unused=True)
            flat = torch.cat([_dense(g, a).reshape(-1) for g, a in zip(grads, alphas, strict=True)])
            norms.append(acc.add(flat))
            value = float(trace.detach())
            constraint.observe(value)
            proxies.append(value)
            nus.append(nu)
            r = float(objective.detach())
            if math.isfinite(r) and (best_sample is None or r > best_sample[0]):
                best_sample = (r, [s.detach() for s in samples])
            if on_step is not None:
                sampled = relaxation.sampled_genotype(samples)
                on_step(step, sampled, value, nu, r, time.perf_counter() - step_start)
        delta = acc.delta()
    alpha_star = _split(delta, relaxation.shapes)
    fallback = None
    if not bool(delta.abs().gt(0).any()):
        fallback = "every sampled gradient was zero: returned the sample with the largest R"
        warnings.warn(f"NASI: {fallback}", RuntimeWarning, stacklevel=2)
        assert best_sample is not None, "no finite objective in any step"
        genotype = relaxation.derive(best_sample[1])  # a one-hot sample is its own arg max
    else:
        genotype = relaxation.derive(alpha_star)
    return NasiRun(
        genotype=genotype,
        alpha_star=[a.tolist() for a in alpha_star],
        proxies=proxies,
        nus=nus,
        grad_norms=norms,
        nu0=nu0,
        nu0_rule=nu0_rule,
        calibration=calibration,
        fallback=fallback,
        seconds=time.perf_counter() - t0,
        calibration_seconds=calibration_seconds,
    )


def _fork(batches: BatchSource, generator: torch.Generator) -> BatchSource:
    """The same kind of batches as ``batches`` from ``generator`` (ProxyBatches.fork)."""
    fork = getattr(batches, "fork", None)
    if fork is None:
        raise ValueError(
            "eq. 40 calibration needs a batch source of its own: pass calibration_batches, "
            "or batches with a fork(generator) method (ProxyBatches)"
        )
    return fork(generator)


def _on(mask: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    return None if mask is None else mask.to(device)


def _dense(grad: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if grad is None else grad


def _split(flat: torch.Tensor, shapes: tuple[tuple[int, int], ...]) -> list[torch.Tensor]:
    out, start = [], 0
    for r, c in shapes:
        out.append(flat[start : start + r * c].reshape(r, c))
        start += r * c
    return out


def _positive(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"eq. 40 calibration gave nu = {value}; pass nu0 explicitly")
    return value
