"""A stateless view of an ``nn.Module`` for torch.func transforms.

torch.func differentiates functions of explicit tensors, so every backend needs the same
three things: the parameters to differentiate (split from everything else), a forward
that does not write to BatchNorm running statistics (in-place buffer updates are illegal
under ``vmap``), and a per-sample head that turns logits into the scalar(s) whose
gradients define the kernel. They live here once, so the NTK, per-sample-gradient and
loss-gradient backends cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd

#: How BatchNorm normalises while per-sample quantities are taken, and what a row is.
#: "sample": each sample is forwarded alone and normalised by its own statistics
#: (the KNAS batch-size-1 pipeline; cheap: one vmapped backward).
#: "batch": the whole batch is forwarded together, the exact Jacobian of that coupled
#: function (TE-NAS; costs one backward per output row).
#: "decomposed": the batch forwarded together, one backward of the summed heads, and each
#: sample's row its share of that batch gradient, layer by layer (back-prop x activation:
#: the autograd-hacks per-sample gradient of the HNAS code). The rows sum to the batch
#: gradient; with BatchNorm in train mode they are not the exact Jacobian rows ("batch").
#: "eval": running statistics (at initialisation an affine identity).
BN_MODES = ("sample", "batch", "decomposed", "eval")
#: "all": every trainable parameter; "weights": Conv/Linear weights only (zero-cost code);
#: "layers": Conv/Linear weights and biases (the layers the HNAS code's hooks see);
#: "named_weight": every parameter whose name contains "weight" (TE-NAS's ``'weight' in
#: name``: Conv/Linear and BatchNorm affine weights, no biases).
PARAM_SETS = ("all", "weights", "layers", "named_weight")
#: What one sample contributes: "sum" of logits (TE-NAS), "target" logit (HNAS code),
#: "full" logit vector (the m*C x m*C NTK), or the per-sample "loss" (KNAS/NASI Gram).
OUTPUTS = ("sum", "target", "full", "loss")
LOSSES = ("cross_entropy", "mse")


def prunable_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Conv and Linear modules: the layers zero-cost proxies sum over."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, _ConvNd | nn.Linear)]


def layer_parameter_names(model: nn.Module, *, biases: bool) -> list[str]:
    """Full names of the Conv/Linear weights (and biases, where asked and present)."""
    names = []
    for n, m in prunable_layers(model):
        prefix = f"{n}." if n else ""
        names.append(f"{prefix}weight")
        if biases and isinstance(getattr(m, "bias", None), torch.Tensor):
            names.append(f"{prefix}bias")
    return names


def split_parameters(
    model: nn.Module, which: str = "all", device: torch.device | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(differentiated parameters, everything else incl. buffers), detached, on ``device``."""
    if which not in PARAM_SETS:
        raise ValueError(f"params must be one of {PARAM_SETS}, got {which!r}")
    chosen: set[str] | None = None
    if which in ("weights", "layers"):
        chosen = set(layer_parameter_names(model, biases=which == "layers"))
    live: dict[str, torch.Tensor] = {}
    fixed: dict[str, torch.Tensor] = {}
    for name, p in model.named_parameters():
        t = p.detach() if device is None else p.detach().to(device)
        wanted = "weight" in name if which == "named_weight" else chosen is None or name in chosen
        if p.requires_grad and wanted:
            live[name] = t
        else:
            fixed[name] = t
    for name, b in model.named_buffers():
        fixed[name] = b if device is None else b.to(device)
    if not live:
        raise ValueError("the model has no trainable parameters to differentiate")
    return live, fixed


@contextmanager
def batch_norm_mode(model: nn.Module, mode: str) -> Iterator[None]:
    """Temporarily make every BatchNorm follow ``mode`` (see :data:`BN_MODES`).

    "sample"/"batch"/"decomposed" detach the running statistics so BN always uses batch
    statistics and writes nothing (vmap forbids the write); "eval" switches BN to eval mode. The
    module is restored exactly on exit, so a caller's model is left as it was.
    """
    if mode not in BN_MODES:
        raise ValueError(f"bn must be one of {BN_MODES}, got {mode!r}")
    bns = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    saved = [(m.training, m.track_running_stats, m.running_mean, m.running_var) for m in bns]
    try:
        for m in bns:
            if mode == "eval":
                m.eval()
            else:
                m.track_running_stats = False
                m.running_mean = None
                m.running_var = None
        yield
    finally:
        for m, (training, track, mean, var) in zip(bns, saved, strict=True):
            m.train(training)
            m.track_running_stats = track
            m.running_mean = mean
            m.running_var = var


def per_sample_head(
    logits: torch.Tensor, target: torch.Tensor | None, output: str, loss: str = "cross_entropy"
) -> torch.Tensor:
    """Reduce one sample's logits ``(C,)`` to what its gradient is taken of.

    Written with shape-only operations so it works unchanged under ``vmap``.
    """
    if output == "sum":
        return logits.sum()
    if output == "full":
        return logits
    if target is None:
        raise ValueError(f"output '{output}' needs labels")
    onehot = (torch.arange(logits.shape[-1], device=logits.device) == target).to(logits.dtype)
    if output == "target":
        return (logits * onehot).sum()
    if output == "loss":
        if loss == "cross_entropy":
            return -(onehot * torch.log_softmax(logits, dim=-1)).sum()
        if loss == "mse":
            return F.mse_loss(logits, onehot)
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
