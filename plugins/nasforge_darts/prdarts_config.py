"""PR-DARTS settings and its two presets, each value tagged with where it comes from.

``paper`` follows the paper's text (and our choices where the text is silent or
ambiguous); ``official-code`` follows salesforce/PR-DARTS where it differs. Tags:
[S] paper, [C] official code, [D] DARTS, [R] our choice where the paper is silent.
"""

from __future__ import annotations

from typing import Any

import attrs

from nasforge.kernel.errors import OptionError, show
from nasforge.kernel.option_types import MAX_COUNT, as_float, in_range, one_of, typed
from nasforge_darts.bilevel_config import BilevelConfig
from nasforge_darts.edge_select import MODES
from nasforge_darts.regularisers import PATH_AGGREGATORS

GROUPINGS = ("paper", "official-code")
DERIVATIONS = ("probability", "edge_softmax")


@attrs.frozen(kw_only=True)
class PRDartsConfig(BilevelConfig):
    """Gates, regularisers, temperature and derivation of PR-DARTS (defaults: ``paper``)."""

    preset: str = attrs.field(default="paper", validator=typed)
    # gates [S]: stretch (a, b) and the linear per-epoch temperature tau_max -> tau_min
    stretch_a: float = attrs.field(default=-0.1, converter=as_float, validator=in_range(lt=0))
    stretch_b: float = attrs.field(default=1.1, converter=as_float, validator=in_range(gt=1))
    tau_max: float = attrs.field(default=10.0, converter=as_float, validator=in_range(gt=0))
    tau_min: float = attrs.field(default=0.1, converter=as_float, validator=in_range(gt=0))
    # regulariser weights [S]: lambda1 skip > lambda2 non-skip; lambda3 path
    lambda_skip: float = attrs.field(default=0.01, converter=as_float, validator=in_range(ge=0))
    lambda_nonskip: float = attrs.field(default=0.005, converter=as_float, validator=in_range(ge=0))
    lambda_path: float = attrs.field(default=0.005, converter=as_float, validator=in_range(ge=0))
    #: 'paper': {skip}, {everything else} [S]; 'official-code': {skip}, {none+convs}, {pools} [C]
    groups: str = attrs.field(default="paper", validator=one_of(GROUPINGS))
    #: 'mean': zeta = 1/|E| [R: eq. 8's 2/(h(h-1)) does not match the 14-edge cell];
    #: 'paper': zeta = 2/(h(h-1)) as printed
    zeta: str = attrs.field(default="mean", validator=one_of(("mean", "paper")))
    #: each group's mean over the cell types is penalised only above this [C: 0.2]; the
    #: code averages normal and reduce first, then hinges (``regulariser``)
    hinge: float = attrs.field(default=0.0, converter=as_float, validator=in_range(ge=0))
    #: regularisers over the ops sampled this step only [C]
    masked: bool = attrs.field(default=False, validator=typed)
    path_aggregate: str = attrs.field(default="mean", validator=one_of(PATH_AGGREGATORS))
    edge_select: str = attrs.field(default="uniform2", validator=one_of(MODES))
    ops_per_edge: int = attrs.field(default=2, validator=[typed, in_range(ge=1, le=MAX_COUNT)])
    op_dropout: float = attrs.field(default=0.4, converter=as_float, validator=in_range(ge=0, lt=1))
    #: rank by P(g != 0) [S, R] or by the per-edge softmax of beta [C]
    derive: str = attrs.field(default="probability", validator=one_of(DERIVATIONS))
    distinct_sources: bool = attrs.field(default=True, validator=typed)
    #: 1: weights constant in the architecture step [C; the paper does not say, its 0.17
    #: GPU-day cost implies first order]; 2: DARTS's one-step unroll
    #: [D], the regularisers added to the unrolled validation loss (they depend on beta only)
    order: int = attrs.field(default=1, validator=one_of((1, 2)))
    #: finite-difference step of the second-order Hessian-vector product: ``eps / |grad|`` [D]
    unrolled_eps: float = attrs.field(default=0.01, converter=as_float, validator=in_range(gt=0))

    @tau_min.validator
    def _tau_order(self, _attr: attrs.Attribute, value: float) -> None:
        if value > self.tau_max:
            raise OptionError(f"option 'tau_min' ({value}) must not exceed tau_max ({self.tau_max})")


PRESETS: dict[str, dict[str, Any]] = {
    "paper": {
        "epochs": 200,  # [S]
        "batch_size": 128,  # [S]
        "darts_layers": 8,  # [S] "following DARTS"
        "w_weight_decay": 3e-4,  # [D] (the paper's appendix is unavailable)
        "w_nesterov": False,
        "tau_max": 10.0,  # [S] 10 -> 0.1 linear
        "groups": "paper",
        "hinge": 0.0,
        "masked": False,
        "edge_select": "uniform2",  # [S] "randomly select only two operations"
        "derive": "probability",  # [S] rank by activation probability
        "distinct_sources": True,  # [R] DARTS's distinct-source rule; PR-DARTS is silent
        "arch_first": True,  # [D]
    },
    "official-code": {
        "epochs": 200,
        "batch_size": 250,  # [C]
        "darts_layers": 6,  # [C] N = 2 per stage
        "w_weight_decay": 5e-4,  # [C]
        "w_nesterov": True,  # [C]
        "tau_max": 1.0,  # [C] tau_max default
        "groups": "official-code",
        "hinge": 0.2,  # [C]
        "masked": True,  # [C]
        "edge_select": "topk_st",  # [C] op dropout 0.4, top-2, straight-through
        "derive": "edge_softmax",  # [C] genotype() ranks by softmax(beta) per edge
        "distinct_sources": False,  # [C] a node may read one source twice
        "arch_first": False,  # [C] weights first, then beta
    },
}


def prdarts_config(preset: str = "paper", **overrides: Any) -> PRDartsConfig:
    """The preset's config with ``overrides`` applied on top."""
    if not isinstance(preset, str) or preset not in PRESETS:
        raise OptionError(f"unknown PR-DARTS preset {show(preset)}; known: {', '.join(sorted(PRESETS))}")
    return PRDartsConfig(preset=preset, **{**PRESETS[preset], **overrides})
