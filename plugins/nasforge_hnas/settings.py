"""Everything an ``hnas`` run is configured by, grouped as the algorithm is, and its flat form.

HNAS has three concerns: the BO loop over (μ, ν) (:class:`~nasforge_hnas.loop.LoopSettings`,
with its plane and GP), how pool members are scored (:class:`PoolSettings`, the cache key)
and how many are drawn (:class:`PoolDraw`). Python callers build those objects. The command
line (``-o key=value``) and the journal (``strategy_options``) speak flat JSON instead, and
old journals must still resume, so :data:`FLAT_OPTIONS` is the one translation between the
two forms, both ways; the defaults live in the settings classes only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs
from attrs import validators as v

from nasforge.option_types import MAX_COUNT, OptionError, check_option, first_line, show, suggest
from nasforge_hnas.gp import GPSettings
from nasforge_hnas.loop import LoopSettings
from nasforge_hnas.parameterisation import MuNuPlane
from nasforge_hnas.pool_settings import PoolSettings


@attrs.frozen
class PoolDraw:
    """How many random architectures the pool holds. Not part of the cache key: it changes
    which architectures are scored, never their scores."""

    #: Architectures drawn before the first BO step.
    size: int = attrs.field(default=500, validator=[v.instance_of(int), v.ge(1), v.le(MAX_COUNT)])
    #: Architectures added per BO step (the authors' code grows its pool; 0 keeps it fixed).
    growth: int = attrs.field(default=0, validator=[v.instance_of(int), v.ge(0), v.le(MAX_COUNT)])


@attrs.frozen
class HnasSettings:
    """The BO loop, the pool's scoring and size, and an optional score cache file."""

    loop: LoopSettings = attrs.field(factory=LoopSettings, validator=v.instance_of(LoopSettings))
    pool: PoolSettings = attrs.field(factory=PoolSettings, validator=v.instance_of(PoolSettings))
    draw: PoolDraw = attrs.field(factory=PoolDraw, validator=v.instance_of(PoolDraw))
    #: A JSON-lines file of pool scores, shared by runs with the same :class:`PoolSettings`.
    cache: str | None = attrs.field(default=None, converter=attrs.converters.optional(os.fspath))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> HnasSettings:
        """Settings from flat options; an unset option (or one set to null) keeps its default.

        Raises :class:`OptionError` naming the option for an unknown key, a value of the
        wrong JSON type, or one the settings' own validators refuse.
        """
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
    "metric": ("pool.metric", str),
    "kernel_output": ("pool.kernel_output", str),
    "kernel_bn": ("pool.kernel_bn", str),
    "batch_size": ("pool.batch_size", int),
    "data": ("pool.data", str),
    "input_shape": ("pool.input_shape", list[int] | None),
    "num_classes": ("pool.num_classes", int),
    "build": ("pool.build", dict[str, Any] | None),
    "init_seed": ("pool.init_seed", int),
    "device": ("pool.device", str),
    "cache": ("cache", str | os.PathLike[str] | None),
}

_GROUPS = ("loop", "loop.plane", "loop.gp", "pool", "draw", "")


def _option_of(message: str) -> str:
    """`` 'score'`` when a validator's message names the field that option sets (attrs names
    fields, ``'objective' must be in ...``, and the user typed ``score``), else ``""``."""
    for key, (path, _) in FLAT_OPTIONS.items():
        if message.startswith(f"'{path.rpartition('.')[2]}'"):
            return f" '{key}'"
    return ""
