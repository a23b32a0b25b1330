"""The one place the core names first-party components: what a user gets by naming none.

The core never imports a plugin; it only falls back to these names when the CLI or the
Python API is called without one. If the plugin that supplies a default is not installed,
:func:`default_component` says so in one line instead of failing deep inside a run.
"""

from __future__ import annotations

from typing import Any

from nasforge.errors import NasforgeError

#: Search space, ask/tell strategy and tabular evaluator of a plain ``nasforge search``.
SPACE = "nb201"
STRATEGY = "rea"
TABLE_EVALUATOR = "nb201-table"
#: The tabular benchmark's dataset column when none is named.
TABLE_DATASET = "cifar10"
#: Bundled training data (sklearn digits) for strategies and evaluators that train.
TRAINING_DATASET = "digits"
#: Size baselines that ``nasforge score``/``correlate`` always show beside a metric.
BASELINE_METRICS = ("params", "flops")

_OPTION = {"space": "--space", "strategy": "--strategy", "evaluator": "--evaluator", "metric": "--metric"}


def default_component(registry: Any, kind: str, name: str) -> str:
    """``name`` if the registry has it, else a one-line error saying how to name another."""
    if registry.has(kind, name):
        return name
    option = _OPTION.get(kind, f"a {kind}")
    raise NasforgeError(
        f"the default {kind} '{name}' is not installed (its plugin is missing or failed to load: "
        f"see `nasforge plugins`); name one with {option}"
    )
