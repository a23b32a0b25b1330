"""What a run was made with: recorded in every journal header for reproducibility."""

from __future__ import annotations

import platform
import sys
from typing import Any

import torch


def describe_environment(device: str = "cpu") -> dict[str, Any]:
    from nasforge import __version__

    return {
        "nasforge": __version__,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "device": device,
        "cuda_available": torch.cuda.is_available(),
    }
