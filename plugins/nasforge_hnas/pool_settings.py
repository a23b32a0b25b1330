"""How a pool is scored: every setting the numbers depend on, validated and hashable.

The thesis stresses that M and κ depend on the batch, the width and the initialisation
(Tables 7.9-7.11), so all candidates of one pool must share them; this class is that
contract, and its digest keys the score cache.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs
from attrs import validators as v

from nasforge.kernel.converters import to_dict
from nasforge.tools.backends import BN_MODES, OUTPUTS, PARAM_SETS, KernelSpec, kernel_preset


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in value)


def _positive_shape(_inst: Any, attr: attrs.Attribute, value: tuple[int, ...]) -> None:
    if not value or any(d < 1 for d in value):
        raise ValueError(f"{attr.name} must be non-empty positive sizes, got {value!r}")


#: The HNAS authors' code's kernel (``ntk_trace``/``condnum``: the true-class logit, one
#: train-mode batch backward, each sample's per-layer share, Conv/Linear parameters), as
#: the kernel fields of this class: the backends' ``hnas-code`` preset, which the zerocost
#: ``ntk_trace`` metric uses too.
HNAS_CODE_KERNEL: dict[str, str] = {
    "kernel_output": kernel_preset("hnas-code").output,
    "kernel_bn": kernel_preset("hnas-code").bn,
    "kernel_params": kernel_preset("hnas-code").params,
}

#: HNAS's own M_Trace = √(tr Θ/m) (thesis eq. 7.4), computed with κ from one NTK under the
#: pool's kernel settings; any other ``metric`` names a registered metric. ``ntk_trace`` is
#: the zerocost plugin's NTK-trace metric: the same quantity with that metric's own kernel
#: defaults, computed in a second NTK pass.
M_TRACE = "m_trace"


@attrs.frozen
class PoolSettings:
    """Scoring settings shared by every architecture of a pool."""

    #: :data:`M_TRACE` (M_Trace from the NTK) or any registered metric name.
    metric: str = attrs.field(default=M_TRACE, validator=v.min_len(1))
    #: NTK output per sample: "sum" of logits is label-free (data-agnostic mode);
    #: "target" is the HNAS code's true-class logit.
    kernel_output: str = attrs.field(default="sum", validator=v.in_(OUTPUTS))
    kernel_bn: str = attrs.field(default="sample", validator=v.in_(BN_MODES))
    #: Parameters the NTK differentiates: "all" (the thesis's exact NTK) or the HNAS code's
    #: "layers" (Conv/Linear weights and biases); :data:`HNAS_CODE_KERNEL` sets all three.
    kernel_params: str = attrs.field(default="all", validator=v.in_(PARAM_SETS))
    batch_size: int = attrs.field(default=64, validator=[v.instance_of(int), v.ge(2)])
    #: "gaussian" (data-agnostic: N(0, I) inputs, uniform labels) or a dataset name.
    data: str = attrs.field(default="gaussian", validator=v.min_len(1))
    #: Input shape of Gaussian batches (ignored for named datasets).
    input_shape: tuple[int, ...] = attrs.field(
        default=(3, 32, 32), converter=_shape, validator=_positive_shape
    )
    num_classes: int = attrs.field(default=10, validator=[v.instance_of(int), v.ge(1)])
    #: Options of ``space.build`` (e.g. {"C": 8, "N": 1}); same for every candidate.
    build: dict[str, Any] = attrs.field(factory=dict, converter=to_dict)
    #: Seed of the batch and of every network's initialisation (not the search seed).
    init_seed: int = attrs.field(default=0, validator=v.instance_of(int))
    device: str = attrs.field(default="cpu", validator=v.instance_of(str))

    @property
    def kernel(self) -> KernelSpec:
        """The NTK of M_Trace and κ (ValueError for a combination KernelSpec refuses)."""
        return KernelSpec(output=self.kernel_output, bn=self.kernel_bn, params=self.kernel_params)

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = list(self.input_shape)
        return data

    def digest(self, space: str) -> str:
        """Cache key: the space plus every setting the scores depend on (not the device)."""
        data = {k: val for k, val in self.to_json().items() if k != "device"}
        text = json.dumps({"space": space, **data}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
