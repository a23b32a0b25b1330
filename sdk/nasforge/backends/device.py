"""Choosing the device once, so backends run the same code on CPU and CUDA."""

from __future__ import annotations

import torch


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None``/"auto" -> CUDA when available, else CPU; anything else as given.

    An explicit device that is not available fails here, with a clear message, rather
    than deep inside a kernel.
    """
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device '{device}' requested but CUDA is not available")
    return dev
