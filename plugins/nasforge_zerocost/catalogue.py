"""The metrics this plugin provides, by name."""

from __future__ import annotations

from nasforge.kernel.metric import Metric
from nasforge.kernel.registry import Registry, get_registry
from nasforge_zerocost.ensemble import RankEnsemble, VoteEnsemble
from nasforge_zerocost.fisher import Fisher, FisherChannel
from nasforge_zerocost.gradient import GradNorm, Grasp, Snip
from nasforge_zerocost.jacob_cov import JacobCov
from nasforge_zerocost.knas import Knas, NasiProxy
from nasforge_zerocost.naswot import Naswot
from nasforge_zerocost.ntk import (
    NTKCondition,
    NTKConditionPerSample,
    NTKLambdaMin,
    NTKTrace,
    NTKTracePerSample,
)
from nasforge_zerocost.size import Flops, Params
from nasforge_zerocost.synflow import Synflow

METRICS: tuple[type[Metric], ...] = (
    Params,
    Flops,
    GradNorm,
    Snip,
    Grasp,
    Fisher,
    FisherChannel,
    Synflow,
    JacobCov,
    Naswot,
    NTKTrace,
    NTKTracePerSample,
    NTKCondition,
    NTKConditionPerSample,
    NTKLambdaMin,
    Knas,
    NasiProxy,
    RankEnsemble,
    VoteEnsemble,
)
BY_NAME: dict[str, type[Metric]] = {m.info.name: m for m in METRICS}


def make_metric(name: str, *, registry: Registry | None = None) -> Metric:
    """An instance of a metric by name: this plugin's first, then one of ``registry`` (the
    process-wide default if None)."""
    if name in BY_NAME:
        return BY_NAME[name]()
    return (registry if registry is not None else get_registry()).get("metric", name)()
