"""Everything an ``hnas`` run is configured by, grouped as the algorithm is, and its flat form.

HNAS has three concerns: the BO loop over (μ, ν) (:class:`~nasforge_hnas.loop.LoopSettings`,
with its plane and GP), how pool members are scored (:class:`PoolSettings`, the cache key)
and how many are drawn (:class:`PoolDraw`). Python callers build those objects. The command
line (``-o key=value``) and the journal (``strategy_options``) speak flat JSON instead, and
old journals must still resume, so :data:`FLAT_OPTIONS` is the one translation between the
two forms, both ways; the defaults live in the settings classes only.

A named preset (``-o preset=thesis``, :data:`PRESETS`) is a set of flat options a run
starts from; options given beside it override it, and the settings keep its name so a
journal and a benchmark row say which preset produced them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs
from attrs import validators as v

from nasforge.kernel.errors import OptionError, show, suggest
from nasforge.kernel.option_types import MAX_COUNT, check_option, first_line
from nasforge_hnas.gp import GPSettings
from nasforge_hnas.loop import LoopSettings
from nasforge_hnas.parameterisation import MuNuPlane
from nasforge_hnas.pool_settings import HNAS_CODE_KERNEL, M_TRACE, PoolSettings


@attrs.frozen
class PoolDraw:
    """How many random architectures the pool holds. Not part of the cache key: it changes
    which architectures are scored, never their scores."""

    #: Architectures drawn before the first BO step.
    size: int = attrs.field(default=500, validator=[v.instance_of(int), v.ge(1), v.le(MAX_COUNT)])
    #: Architectures added per BO step (the authors' code grows its pool; 0 keeps it fixed).
    growth: int = attrs.field(default=0, validator=[v.instance_of(int), v.ge(0), v.le(MAX_COUNT)])
    #: Seed of the draws (None: the search's seed). A fixed seed gives every search the
    #: same pool, so several seeds' searches share one scoring of it.
    seed: int | None = attrs.field(default=None, validator=v.optional(v.instance_of(int)))


@attrs.frozen
class HnasSettings:
    """The BO loop, the pool's scoring and size, and an optional score cache file."""

    loop: LoopSettings = attrs.field(factory=LoopSettings, validator=v.instance_of(LoopSettings))
    pool: PoolSettings = attrs.field(factory=PoolSettings, validator=v.instance_of(PoolSettings))
    draw: PoolDraw = attrs.field(factory=PoolDraw, validator=v.instance_of(PoolDraw))
    #: A JSON-lines file of pool scores, shared by runs with the same :class:`PoolSettings`.
    cache: str | None = attrs.field(default=None, converter=attrs.converters.optional(os.fspath))
    #: The :data:`PRESETS` name these settings started from (a label; the fields decide).
    preset: str | None = attrs.field(default=None, validator=lambda _i, _a, value: _known_preset(value))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> HnasSettings:
        """Settings from flat options; an unset option (or one set to null) keeps its default.

        Raises :class:`OptionError` naming the option for an unknown key, a value of the
        wrong JSON type, or one the settings' own validators refuse.
        """
        options = _with_preset(options)
        given: dict[str, dict[str, Any]] = {group: {} for group in _GROUPS}
        for key, value in options.items():
            if key not in FLAT_OPTIONS:
                close = suggest(key, list(FLAT_OPTIONS))
                hint = f"; did you mean '{close}'?" if close else ""
                raise OptionError(
                    f"does not accept option {show(key)}{hint} (accepts: {', '.join(FLAT_OPTIONS)})"
                )
            path, hint_type = FLAT_OPTIONS[key]
            check_option(key, value, hint_type)
            if value is not None:
                group, _, field = path.rpartition(".")
                given[group][field] = value
        try:
            loop = LoopSettings(
                **given["loop"], plane=MuNuPlane(**given["loop.plane"]), gp=GPSettings(**given["loop.gp"])
            )
            return cls(
                loop=loop, pool=PoolSettings(**given["pool"]), draw=PoolDraw(**given["draw"]), **given[""]
            )
        except (TypeError, ValueError) as exc:  # the settings' own range checks
            message = first_line(exc)
            raise OptionError(f"bad hnas option{_option_of(message)}: {message}") from exc

    def label(self) -> str:
        """What produced a run, for journals and benchmark rows: the preset (or "defaults")
        and each option set beside it that changes one of the preset's values. A thesis run
        with another M (synflow, say) is then "thesis + metric=synflow", a variant of HNAS
        in its own row, never the thesis's HNAS."""
        base = self.preset or "defaults"
        mine = self.to_options()
        reference = HnasSettings.from_options({"preset": self.preset}).to_options()
        keys = PRESETS[self.preset] if self.preset is not None else ("metric",)
        changed = [f"{k}={mine[k]}" for k in keys if mine[k] != reference[k]]
        return " + ".join([base, *changed])

    def to_options(self) -> dict[str, Any]:
        """The flat options that rebuild these settings: what a journal records.

        Raises ValueError for settings the flat form cannot carry (a GP field other than
        ``restarts``), since a run journaled with them could not be resumed.
        """
        out: dict[str, Any] = {}
        for key, (path, _) in FLAT_OPTIONS.items():
            value: Any = self
            for part in path.split("."):
                value = getattr(value, part)
            out[key] = (
                list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, dict) else value
            )
        if HnasSettings.from_options(out) != self:
            raise ValueError(
                "these hnas settings have no flat form (only gp.restarts of the GP is an option)"
            )
        return out


#: Each flat option: the settings field it sets (a path from :class:`HnasSettings`) and
#: the JSON type its value must have. Names are the journal's, so they never change.
FLAT_OPTIONS: dict[str, tuple[str, Any]] = {
    "steps": ("loop.steps", int),
    "score": ("loop.objective", str),
    "penalty": ("loop.penalty", str),
    "acquisition": ("loop.acquisition", str),
    "xi": ("loop.xi", float),
    "init_log10_mu": ("loop.init_log10_mu", float | None),
    "plane": ("loop.plane.mode", str),
    "log10_mu_bounds": ("loop.plane.log10_mu", list[float] | None),
    "nu_scale": ("loop.plane.scale", float),
    "gp_restarts": ("loop.gp.restarts", int),
    "pool_size": ("draw.size", int),
    "pool_growth": ("draw.growth", int),
    "pool_seed": ("draw.seed", int | None),
    "metric": ("pool.metric", str),
    "kernel_output": ("pool.kernel_output", str),
    "kernel_bn": ("pool.kernel_bn", str),
    "kernel_params": ("pool.kernel_params", str),
    "batch_size": ("pool.batch_size", int),
    "data": ("pool.data", str),
    "input_shape": ("pool.input_shape", list[int] | None),
    "num_classes": ("pool.num_classes", int),
    "build": ("pool.build", dict[str, Any] | None),
    "init_seed": ("pool.init_seed", int),
    "device": ("pool.device", str),
    "cache": ("cache", str | os.PathLike[str] | None),
    "preset": ("preset", str | None),
}

#: Named starting points of the flat options. ``thesis``: the HNAS authors' NAS-Bench-201
#: code, where the thesis (ch. 7) does not state them: K = 20 BO steps, 5 initial probes at
#: log₁₀μ = -2 then EI (ξ = 0); the code's (μ, ν) plane (√ν = s·5000, log₁₀μ ∈ [-4, 0]);
#: F = |x|; M_Trace and κ from the code's kernel (true-class logit, per-layer shares of one
#: train-mode batch backward, Conv/Linear parameters; the backends' ``hnas-code`` preset)
#: on a batch of 64; a pool of 2,000 uniform draws (with replacement) grown by 2,000 per BO
#: step, already-selected architectures excluded. The metric network and its data (the
#: code: NB201 at C = 16 on a CIFAR-10 batch) are the caller's (``build``, ``data``).
PRESETS: dict[str, dict[str, Any]] = {
    "thesis": {
        "steps": 20,
        "score": "non-realizable",
        "penalty": "abs",
        "acquisition": "ei",
        "xi": 0.0,
        "init_log10_mu": -2.0,
        "plane": "paper",
        "log10_mu_bounds": [-4.0, 0.0],
        "nu_scale": 5e3,
        "pool_size": 2000,
        "pool_growth": 2000,
        "metric": M_TRACE,
        **HNAS_CODE_KERNEL,
        "batch_size": 64,
    },
}

_GROUPS = ("loop", "loop.plane", "loop.gp", "pool", "draw", "")


def _known_preset(name: str | None) -> None:
    if name is not None and name not in PRESETS:
        raise ValueError(f"'preset' must be one of {list(PRESETS)} or None, got {name!r}")


def _with_preset(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` over the preset they name (if any); a null option keeps the preset's value."""
    name = options.get("preset")
    if name is None:
        return dict(options)
    check_option("preset", name, str)
    if name not in PRESETS:
        close = suggest(name, list(PRESETS))
        hint = f"; did you mean '{close}'?" if close else ""
        raise OptionError(f"unknown hnas preset {show(name)}{hint} (known: {', '.join(PRESETS)})")
    return {**PRESETS[name], **{k: val for k, val in options.items() if val is not None}}


def _option_of(message: str) -> str:
    """`` 'score'`` when a validator's message names the field that option sets (attrs names
    fields, ``'objective' must be in ...``, and the user typed ``score``), else ``""``."""
    for key, (path, _) in FLAT_OPTIONS.items():
        if message.startswith(f"'{path.rpartition('.')[2]}'"):
            return f" '{key}'"
    return ""
