"""The metrics this plugin provides, by name."""

from __future__ import annotations

from nasforge.metric import Metric
from nasforge.registry import Registry, get_registry
from nasforge_zerocost.ensemble import RankEnsemble
from nasforge_zerocost.fisher import Fisher
from nasforge_zerocost.gradient import GradNorm, Grasp, Snip
from nasforge_zerocost.jacob_cov import JacobCov
from nasforge_zerocost.knas import Knas
from nasforge_zerocost.naswot import Naswot
from nasforge_zerocost.ntk import NTKCondition, NTKLambdaMin, NTKTrace
from nasforge_zerocost.size import Flops, Params
from nasforge_zerocost.synflow import Synflow

METRICS: tuple[type[Metric], ...] = (
    Params,
    Flops,
    GradNorm,
    Snip,
    Grasp,
    Fisher,
    Synflow,
    JacobCov,
    Naswot,
    NTKTrace,
    NTKCondition,
    NTKLambdaMin,
    Knas,
    RankEnsemble,
)
BY_NAME: dict[str, type[Metric]] = {m.info.name: m for m in METRICS}


def make_metric(name: str, *, registry: Registry | None = None) -> Metric:
    """An instance of a metric by name: this plugin's first, then one of ``registry`` (the
    process-wide default if None)."""
    if name in BY_NAME:
        return BY_NAME[name]()
    return (registry if registry is not None else get_registry()).get("metric", name)()
