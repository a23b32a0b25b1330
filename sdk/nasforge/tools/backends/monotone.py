"""A network's promise that its layers only add up: what lets synflow skip its backward.

SynFlow scores ``sum |theta * dR/dtheta|`` over Conv/Linear weights, with every
parameter made non-negative, BatchNorm removed and an all-ones input. When everything
between those layers is non-decreasing in its inputs (ReLU, pooling, sums, concatenation,
identity, multiplying by zero) and treats each example alone, every ``dR/dtheta`` is
non-negative, so the sum equals ``sum theta * dR/dtheta``: the derivative of R along the
weights themselves, ``d/dc R(c * theta)`` at c=1 (Euler). That is one forward pass of a
second, tangent example instead of a backward pass (see ``nasforge_zerocost.synflow``).

Nothing can check that promise from outside the forward code, so a network class makes it
explicitly by setting the class attribute named :data:`MONOTONE_ATTR` to True; any other
network is scored the general way.
"""

from __future__ import annotations

from torch import nn

#: Class attribute a network sets to True to promise the above (BN aside: it is removed).
MONOTONE_ATTR = "nasforge_monotone"


def is_monotone(model: nn.Module) -> bool:
    """Whether ``model``'s class promises monotone, example-wise layers (see the module doc)."""
    return getattr(type(model), MONOTONE_ATTR, False) is True


__all__ = ["MONOTONE_ATTR", "is_monotone"]
