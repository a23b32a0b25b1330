"""Algorithm 1 of NASI: T straight-through samples at α₀ = 0, one closed-form step.

Faithful to the paper's key facts (notes §4.2): θ₀ is drawn once and never trained, α
is never updated inside the loop (every G_t is taken at α₀ = 0, so every sample is a
uniformly random architecture), and there is no optimiser: α* = α₀ + Δ* with Δ* from
eq. 18, then the arg-max architecture. BatchNorm uses batch statistics and writes no
running statistics (A4), through the backends' ``batch_norm_mode``.
"""

from __future__ import annotations

import math
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


def calibrate_nu(
    supernet: nn.Module,
    relaxation: Relaxation,
    batches: BatchSource,
    config: NasiConfig,
    generator: torch.Generator,
) -> list[float]:
    """Eq. 40's sample: proxies of N uniformly random architectures (no α gradient)."""
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
            lambda inp, s=samples: relaxation.forward(supernet, inp, s), weights, x, y, loss=config.loss
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
) -> NasiRun:
    """Run Algorithm 1 on an initialised supernet; returns the derived architecture.

    ``on_step`` sees every sampled architecture as soon as its proxy exists (the
    one-shot runner journals them there)."""
    device = torch.device(config.device)
    supernet.to(device).train()
    weights = list(supernet.weight_parameters())  # type: ignore[operator]
    masks = [_on(m, device) for m in relaxation.masks()]
    with batch_norm_mode(supernet, "batch"):
        t0 = time.perf_counter()
        calibration: list[float] = []
        nu0, nu0_rule = config.nu0_rule()
        if nu0 is None:
            calibration = calibrate_nu(supernet, relaxation, batches, config, generator)
            nu0 = _positive(sum(calibration) / len(calibration))
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
                lambda inp, s=samples: relaxation.forward(supernet, inp, s),
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
        genotype = relaxation.sampled_genotype(best_sample[1])
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
