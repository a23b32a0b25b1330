"""Candidate ensembles: from the fitted posterior by MC sampling or SVGD-RD (Algorithms 5.2,
5.3), or uniformly at random, the thesis's URS baseline (Fig. 5.3), which ignores the posterior."""

from __future__ import annotations

import torch

from nasforge_nesbs.decisions import Assignment
from nasforge_nesbs.mixture import initial_particles, project, relaxed_log_prob
from nasforge_nesbs.posterior import ArchPosterior
from nasforge_nesbs.svgd import svgd_rd

SAMPLERS = ("svgd-rd", "mc", "uniform")


def mc_ensemble(posterior: ArchPosterior, n: int, generator: torch.Generator) -> list[Assignment]:
    """n i.i.d. draws from p_alpha (duplicates allowed)."""
    return posterior.sample(n, generator)


def uniform_ensemble(posterior: ArchPosterior, n: int, generator: torch.Generator) -> list[Assignment]:
    """n uniform draws over the encoding (URS): the baseline that uses no posterior."""
    return [posterior.encoding.uniform(generator) for _ in range(n)]


def svgd_ensemble(
    posterior: ArchPosterior,
    n: int,
    generator: torch.Generator,
    *,
    delta: float = 0.0,
    steps: int = 1000,
    lr: float = 0.1,
    momentum: float = 0.9,
    bandwidth: float | None = None,
) -> list[Assignment]:
    """n particles moved by SVGD-RD on the relaxed posterior, each projected to an architecture."""
    x0 = initial_particles(posterior, n, generator)
    x = svgd_rd(
        lambda p: relaxed_log_prob(p, posterior),
        x0,
        delta=delta,
        steps=steps,
        lr=lr,
        momentum=momentum,
        bandwidth=bandwidth,
    )
    return project(x, posterior)
