"""Entry point ``zerocost``: registers the training-free metrics."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge_zerocost.catalogue import METRICS


@hookimpl
def nasforge_register_metrics() -> list[type]:
    return list(METRICS)
