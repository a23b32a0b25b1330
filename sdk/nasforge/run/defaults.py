"""The one place the core names first-party components: what a user gets by naming none.

The core never imports a plugin; it only falls back to these names when the CLI or the
Python API is called without one. If the plugin that supplies a default is not installed,
:func:`default_component` says so in one line instead of failing deep inside a run.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from nasforge.kernel.errors import NasforgeError
from nasforge.run.advice import advised

#: Search space and tabular evaluator of a plain ``nasforge search``.
SPACE = "nb201"
#: Its ask/tell strategy: the first of these that is installed, with the module its optional
#: extra brings (None: nothing beyond nasforge), best first. Under the benchmark protocol on
#: the NAS-Bench-201 table (``benchmarks/optuna_vs_ours_nb201.py``: 20 seeds, three datasets,
#: 20 to 200 queries) Optuna's TPE was ahead of regularized evolution at every budget but
#: one (ImageNet16-120 at 50 queries); it needs ``pip install nasforge[optuna]``.
STRATEGIES: tuple[tuple[str, str | None], ...] = (("optuna-tpe", "optuna"), ("rea", None))
#: The strategy every installation has, what a plain search falls back to.
STRATEGY = "rea"
TABLE_EVALUATOR = "nb201-table"
#: Evaluator of an ask/tell search on a space the table evaluator cannot serve: it trains
#: each network briefly on :data:`TRAINING_DATASET` (works on any space with a ``build``).
TRAINING_EVALUATOR = "short-train"
#: The tabular benchmark's dataset column when none is named.
TABLE_DATASET = "cifar10"
#: Bundled training data (sklearn digits) for strategies and evaluators that train.
TRAINING_DATASET = "digits"
#: Size baselines that ``nasforge score``/``correlate`` always show beside a metric.
BASELINE_METRICS = ("params", "flops")
#: Architectures a correlation scores and looks up unless told otherwise.
CORRELATION_SAMPLE = 200
#: The training-free metric a pre-ranking (and a warm start) ranks by when none is named:
#: data-free, one forward on NAS-Bench-201 networks, and the strongest single proxy there
#: in the zero-cost literature (Abdelfattah et al., 2021).
RANKING_METRIC = "synflow"

_OPTION = {"space": "--space", "strategy": "--strategy", "evaluator": "--evaluator", "metric": "--metric"}


def default_evaluator(registry: Any, space: str) -> str:
    """The evaluator of an ask/tell search that names none: the tabular benchmark when it
    serves ``space`` (instant, real ground truth), else the evaluator that trains.

    Without this a plain ``nasforge search --space mlp-res`` was refused because the table
    only holds NB201 cells, although short-train could run it as it stands.
    """
    table = default_component(registry, "evaluator", TABLE_EVALUATOR)
    served: frozenset[str] = getattr(registry.get("evaluator", table), "spaces", frozenset())
    if not served or space in served:
        return table
    return default_component(registry, "evaluator", TRAINING_EVALUATOR)


def default_strategy(registry: Any) -> str:
    """The ask/tell strategy of a search that names none: the first of :data:`STRATEGIES`
    installed with its extra, else the one-line error :func:`default_component` gives."""
    for name, module in STRATEGIES:
        if registry.has("strategy", name) and (module is None or _importable(module)):
            return name
    return default_component(registry, "strategy", STRATEGY)


#: Journal header key: the components a run did not name and got as defaults.
DEFAULTS_KEY = "defaults"


def strategy_default_note(name: str) -> str:
    """``name`` as the default strategy, and why it was the one chosen (a summary's line)."""
    first, extra = STRATEGIES[0]
    if name == first:
        return f"{name} (the default: the {extra} extra is installed)"
    return f"{name} (the default; {first} when the {extra} extra is installed)"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent missing, or a module set to None to hide it
        return False


def default_component(registry: Any, kind: str, name: str) -> str:
    """``name`` if the registry has it, else a one-line error saying how to name another."""
    if registry.has(kind, name):
        return name
    option = _OPTION.get(kind, f"a {kind}")
    raise advised(
        NasforgeError,
        f"the default {kind} '{name}' is not installed (its plugin is missing or failed to load: "
        f"see {{advice}}); name one with {option}",
        python="nasforge.get_registry().plugins",
        cli="`nasforge plugins`",
    )
