"""Choosing the device once, so backends run the same code on CPU and CUDA."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from nasforge.kernel.errors import NasforgeError, OptionError, show


class DeviceError(NasforgeError, ValueError):
    """A device string that names no usable device here (one line, before any work)."""


#: Device types nasforge runs on; others (xla, mps, ...) are refused rather than half-supported.
SUPPORTED_TYPES = ("cpu", "cuda")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None``/"auto" -> CUDA when available, else CPU; anything else as given (a CPU
    with an index, ``cpu:1``, is the one CPU device: torch places every CPU tensor there).

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
    if dev.type == "cpu":
        return torch.device("cpu")
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


@contextlib.contextmanager
def exact_float32() -> Iterator[None]:
    """Full float32 in CUDA convolutions and matrix products for the duration, then torch's
    settings as they were.

    Torch lets cuDNN convolutions run in TF32 by default (a 10-bit mantissa). Training
    shrugs that off, but a training-free score is one number read off one batch: on an H100
    the same network's fisher, GraSP, NTK and SNIP scores moved 1-7 % from the CPU's, and a
    chunked pass (after an out-of-memory retry) no longer matched the unchunked one. Scores
    are computed under this so that they mean the same on every device.
    """
    conv, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = conv
        torch.backends.cuda.matmul.allow_tf32 = matmul
