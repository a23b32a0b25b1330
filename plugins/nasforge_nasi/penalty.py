"""NASI's penalised objective R(A) = Θ̃ - μ·max(0, Θ̃ - ν) (paper eqs. 13-14).

An exterior penalty replaces the trainability constraint Θ̃ < ν: below ν the trace is
maximised, above it the objective falls with slope 1 - μ. With μ = 1 it is min(Θ̃, ν)
(flat, so violating samples give no gradient); with μ > 1 it is a tent peaking at ν.
"""

from __future__ import annotations

import torch


def penalised_objective(trace: torch.Tensor, mu: float, nu: float) -> torch.Tensor:
    """R = trace - mu * relu(trace - nu), differentiable in ``trace``."""
    if mu < 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    return trace - mu * torch.relu(trace - nu)
