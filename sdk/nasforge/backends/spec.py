"""What kernel to build: the settings every Jacobian-based metric must agree on to share it."""

from __future__ import annotations

import attrs

from nasforge.backends.functional import BN_MODES, LOSSES, OUTPUTS, PARAM_SETS

METHODS = ("jacrev", "jvp")


@attrs.frozen
class KernelSpec:
    """Which empirical kernel Θ = J Jᵀ to form, and how.

    Frozen and hashable: the shared-pass scorer memoises kernels by spec, so metrics that
    ask for the same spec (NTK trace, condition number, lambda_min) pay for one.

    ``method`` "jacrev" materialises per-sample Jacobians (fast; memory chunk x params);
    "jvp" forms Θ column by column from vector-Jacobian then Jacobian-vector products
    (never holds a Jacobian; the choice for very large nets or small accelerators).
    """

    output: str = attrs.field(default="sum", validator=attrs.validators.in_(OUTPUTS))
    bn: str = attrs.field(default="sample", validator=attrs.validators.in_(BN_MODES))
    params: str = attrs.field(default="all", validator=attrs.validators.in_(PARAM_SETS))
    method: str = attrs.field(default="jacrev", validator=attrs.validators.in_(METHODS))
    loss: str = attrs.field(default="cross_entropy", validator=attrs.validators.in_(LOSSES))

    @property
    def needs_labels(self) -> bool:
        return self.output in ("target", "loss")

    def key(self) -> str:
        """A short stable string for cache keys and reports."""
        return f"{self.output}/{self.bn}/{self.params}/{self.method}/{self.loss}"
