"""What kernel to build: the settings every Jacobian-based metric must agree on to share it."""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.tools.backends.functional import BN_MODES, LOSSES, OUTPUTS, PARAM_SETS

METHODS = ("jacrev", "jvp")


def _decomposable(inst: KernelSpec, _attr: attrs.Attribute, _value: Any) -> None:
    # The per-layer decomposition exists for layers that act on each sample alone
    # (Conv/Linear), one scalar per sample; anything else has no per-sample share.
    if inst.bn != "decomposed":
        return
    if inst.params not in ("weights", "layers"):
        raise ValueError(f"bn 'decomposed' takes params 'weights' or 'layers', got {inst.params!r}")
    if inst.output == "full":
        raise ValueError("bn 'decomposed' takes a scalar output per sample, not 'full'")


@attrs.frozen
class KernelSpec:
    """Which empirical kernel Θ = J Jᵀ to form, and how.

    Frozen and hashable: the shared-pass scorer memoises kernels by spec, so metrics that
    ask for the same spec (NTK trace, condition number, lambda_min) pay for one.

    ``method`` "jacrev" materialises per-sample Jacobians (fast; memory chunk x params);
    "jvp" forms Θ column by column from vector-Jacobian then Jacobian-vector products
    (never holds a Jacobian; the choice for very large nets or small accelerators). A
    ``bn="decomposed"`` kernel has one way to be computed (one backward, then per-layer
    shares), so its ``method`` changes nothing.

    The papers' kernels are named in :data:`PRESETS` (:func:`kernel_preset`).
    """

    output: str = attrs.field(default="sum", validator=attrs.validators.in_(OUTPUTS))
    bn: str = attrs.field(default="sample", validator=attrs.validators.in_(BN_MODES))
    params: str = attrs.field(default="all", validator=[attrs.validators.in_(PARAM_SETS), _decomposable])
    method: str = attrs.field(default="jacrev", validator=attrs.validators.in_(METHODS))
    loss: str = attrs.field(default="cross_entropy", validator=attrs.validators.in_(LOSSES))

    @property
    def needs_labels(self) -> bool:
        return self.output in ("target", "loss")

    def key(self) -> str:
        """A short stable string for cache keys and reports."""
        return f"{self.output}/{self.bn}/{self.params}/{self.method}/{self.loss}"


#: The published kernels, by the paper whose code defines them:
#:
#: - ``tenas``: TE-NAS (``lib/procedures/ntk.py``): the gradient of the sum of one
#:   sample's logits through the train-mode batch forwarded together (exact rows of the
#:   coupled function), over the parameters whose name contains "weight".
#: - ``hnas-code``: the HNAS authors' code (``ntk_trace``/``condnum``), not the thesis's
#:   exact per-sample NTK: the true-class logit, summed over the batch and back-propagated
#:   once in train mode; each sample's row its per-layer share of that gradient
#:   (autograd-hacks), over Conv/Linear weights and biases.
#: - ``per-sample``: no paper's; each sample forwarded alone (per-sample BatchNorm), sum of
#:   logits, every trainable parameter. Label-free and the cheapest (one vmapped backward,
#:   shared with KNAS's loss Gram); nasforge's NTK default before the presets existed.
PRESETS: dict[str, KernelSpec] = {
    "tenas": KernelSpec(output="sum", bn="batch", params="named_weight"),
    "hnas-code": KernelSpec(output="target", bn="decomposed", params="layers"),
    "per-sample": KernelSpec(output="sum", bn="sample", params="all"),
}


def kernel_preset(name: str) -> KernelSpec:
    """The kernel of preset ``name`` (:data:`PRESETS`); an unknown name is one line."""
    if name not in PRESETS:
        raise ValueError(f"unknown kernel preset {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]


def preset_name(spec: KernelSpec) -> str | None:
    """The preset ``spec`` is (its ``method`` aside), or None."""
    for name, preset in PRESETS.items():
        if attrs.evolve(spec, method=preset.method, loss=preset.loss) == preset:
            return name
    return None
