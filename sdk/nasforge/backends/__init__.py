"""torch.func backends: per-sample gradients and empirical NTKs, chunked, on any device.

Every training-free metric that needs per-sample information goes through here, so the
same code runs on CPU and CUDA (``device=``) and out-of-memory is handled in one place.
"""

from nasforge.backends.chunking import is_out_of_memory, map_chunks, retry_on_oom
from nasforge.backends.device import resolve_device
from nasforge.backends.functional import (
    BN_MODES,
    OUTPUTS,
    PARAM_SETS,
    batch_norm_mode,
    per_sample_head,
    prunable_layers,
    split_parameters,
)
from nasforge.backends.jacobian import can_share_pass, jacobian, joint_jacobians, per_sample_grads
from nasforge.backends.ntk import empirical_ntk, empirical_ntks, gram
from nasforge.backends.spec import METHODS, KernelSpec
from nasforge.backends.spectrum import Spectrum, spectrum

__all__ = [
    "BN_MODES",
    "METHODS",
    "OUTPUTS",
    "PARAM_SETS",
    "KernelSpec",
    "Spectrum",
    "batch_norm_mode",
    "can_share_pass",
    "empirical_ntk",
    "empirical_ntks",
    "gram",
    "is_out_of_memory",
    "jacobian",
    "joint_jacobians",
    "map_chunks",
    "per_sample_grads",
    "per_sample_head",
    "prunable_layers",
    "resolve_device",
    "retry_on_oom",
    "spectrum",
    "split_parameters",
]
