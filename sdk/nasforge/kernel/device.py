"""Choosing the device once, so backends run the same code on CPU and CUDA."""

from __future__ import annotations

from typing import Any

import torch

from nasforge.kernel.errors import NasforgeError, OptionError, show


class DeviceError(NasforgeError, ValueError):
    """A device string that names no usable device here (one line, before any work)."""


#: Device types nasforge runs on; others (xla, mps, ...) are refused rather than half-supported.
SUPPORTED_TYPES = ("cpu", "cuda")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None``/"auto" -> CUDA when available, else CPU; anything else as given.

    An explicit device that is malformed, unsupported or not available fails here, with a
    clear message (:class:`DeviceError`), rather than deep inside a kernel.
    """
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise DeviceError(f"'{device}' is not a device (use cpu, cuda or cuda:N)") from exc
    if dev.type not in SUPPORTED_TYPES:
        raise DeviceError(f"device '{device}' is not supported (use cpu, cuda or cuda:N)")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"device '{device}' requested but CUDA is not available")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise DeviceError(
                f"device '{device}' requested but there are {torch.cuda.device_count()} CUDA devices"
            )
    return dev


def device_name(_instance: Any, _attribute: Any, value: str) -> None:
    """An attrs validator: ``value`` names a device (cpu, cuda, cuda:N); whether it is
    here is :func:`resolve_device`'s question, when a method starts, so that settings can
    be written on any machine."""
    try:
        torch.device(value)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise OptionError(f"option 'device' expects cpu, cuda or cuda:N, got {show(value)}") from exc
