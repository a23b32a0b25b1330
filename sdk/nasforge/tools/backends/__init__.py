"""torch.func backends: per-sample gradients, their norms and empirical NTKs, chunked, on any device.

Every training-free metric that needs per-sample information goes through here, so the
same code runs on CPU and CUDA (``device=``) and out-of-memory is handled in one place.
"""

from nasforge.kernel.device import resolve_device
from nasforge.tools.backends.chunking import is_out_of_memory, map_chunks, retry_on_oom
from nasforge.tools.backends.forward_patch import forwards_replaced
from nasforge.tools.backends.functional import (
    BN_MODES,
    OUTPUTS,
    PARAM_SETS,
    batch_norm_mode,
    layer_parameter_names,
    per_sample_head,
    prunable_layers,
    split_parameters,
)
from nasforge.tools.backends.jacobian import (
    can_share_pass,
    decomposed_jacobian,
    jacobian,
    joint_jacobians,
    per_sample_grads,
)
from nasforge.tools.backends.monotone import MONOTONE_ATTR, is_monotone
from nasforge.tools.backends.ntk import empirical_ntk, empirical_ntks, gram
from nasforge.tools.backends.sample_norms import (
    SampleNorms,
    can_share_norms,
    joint_sample_grad_norms,
    sample_grad_norms,
)
from nasforge.tools.backends.spec import METHODS, PRESETS, KernelSpec, kernel_preset, preset_name
from nasforge.tools.backends.spectrum import Spectrum, spectrum

__all__ = [
    "forwards_replaced",
    "BN_MODES",
    "METHODS",
    "MONOTONE_ATTR",
    "OUTPUTS",
    "PARAM_SETS",
    "PRESETS",
    "KernelSpec",
    "SampleNorms",
    "Spectrum",
    "batch_norm_mode",
    "can_share_norms",
    "can_share_pass",
    "decomposed_jacobian",
    "empirical_ntk",
    "empirical_ntks",
    "gram",
    "is_monotone",
    "is_out_of_memory",
    "jacobian",
    "joint_jacobians",
    "joint_sample_grad_norms",
    "kernel_preset",
    "layer_parameter_names",
    "map_chunks",
    "per_sample_grads",
    "per_sample_head",
    "preset_name",
    "prunable_layers",
    "resolve_device",
    "retry_on_oom",
    "sample_grad_norms",
    "spectrum",
    "split_parameters",
]
