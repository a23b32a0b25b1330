"""Entry point ``zerocost``: registers the training-free metrics.

Components are imported inside the hooks: the command line loads this module to find
the plugins' commands, and must not pay for torch to print ``--help``.
"""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl


@hookimpl
def nasforge_register_metrics() -> list[type]:
    from nasforge_zerocost.catalogue import METRICS

    return list(METRICS)
