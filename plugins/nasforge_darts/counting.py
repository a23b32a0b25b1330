"""Parameter and mult-add counts under the convention the DARTS-family papers use.

Parameters: every trainable tensor except the auxiliary tower's (it is dropped after
training). Mult-adds: convolution and linear layers only, one multiply-add per weight use
at the given input size; BN, ReLU, pooling and additions are free. Under this convention
the released PR-DARTS cell gives 543M on ImageNet, the paper's figure.
"""

from __future__ import annotations

import torch
from torch import nn


def count_parameters(model: nn.Module, *, exclude: tuple[str, ...] = ("auxiliary",)) -> int:
    """Trainable parameters whose qualified name contains none of ``exclude``."""
    return sum(
        p.numel()
        for name, p in model.named_parameters()
        if p.requires_grad and not any(part in name for part in exclude)
    )


def count_mult_adds(model: nn.Module, input_shape: tuple[int, ...]) -> int:
    """Mult-adds of one inference forward pass of a single sample of ``input_shape``.

    Counted by forward hooks on ``Conv2d`` and ``Linear``, so any network works, with the
    model in eval mode (no auxiliary tower, no drop-path); its mode is restored after.
    """
    total = 0

    def conv_hook(module: nn.Conv2d, _inp: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
        nonlocal total
        kh, kw = module.kernel_size
        per_output = (module.in_channels // module.groups) * kh * kw
        total += out[0].numel() * per_output

    def linear_hook(module: nn.Linear, inp: tuple[torch.Tensor, ...], _out: torch.Tensor) -> None:
        nonlocal total
        rows = inp[0][0].numel() // module.in_features
        total += rows * module.in_features * module.out_features

    handles = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            handles.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            handles.append(m.register_forward_hook(linear_hook))
    was_training = model.training
    model.eval()
    try:
        param = next(model.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
        with torch.no_grad():
            model(torch.zeros((1, *input_shape), device=device))
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    return total
