"""The ``onnx_latency_ms`` objective, for any evaluator of any space with ``build``.

A tabular benchmark records a latency per cell; every other space needs one measured:
the genotype's network is exported to ONNX exactly as ``nasforge export`` writes it and
timed with onnxruntime on this machine (:mod:`nasforge.tools.export.latency`: one thread,
batch 1, warm-up, median of repeats), and the number is cached per genotype, input shape,
settings, software and machine (:mod:`nasforge.tools.latency_cache`).

The design is a helper an evaluator holds, not a wrapping evaluator: an evaluator already
knows its space, its build options and its input shape, and a wrapper would have to
re-declare its datasets, ``trains``, options and protocol. An evaluator that offers the
objective (the core's ``short-train`` does, with ``latency="onnx"``)::

    self.latency = OnnxLatency(space, sample_shape=(1, 8, 8), build_options=build)
    ...
    return self.latency.add_to(result, g)  # objectives gain onnx_latency_ms

and declares :data:`OBJECTIVE` in its ``objectives`` so a multi-objective run knows that
lower is better (``--objective onnx_latency_ms:min``). A measurement that fails (a network
onnxruntime cannot run) records NaN, which ranks last and satisfies no constraint, with
the reason in the result's metadata; a missing onnxruntime is refused when the helper is
made, before any trial, in one line naming the extra.

Latency is measured after the evaluator's own work (training), on a machine that other
work may share: with several evaluations in flight at once (``--workers``), they disturb
each other's timings, so measure latency with one worker.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
import torch

from nasforge.kernel.errors import ExportError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import in_range, typed
from nasforge.kernel.optional import require
from nasforge.kernel.result import Objective, Result
from nasforge.kernel.search_space import BUILD, SearchSpace
from nasforge.tools.latency_cache import LatencyCache, LatencyKey, default_latency_cache_dir, host_fingerprint

if TYPE_CHECKING:
    from nasforge.tools.export.latency import LatencyMeasurement

#: The objective's name and direction: milliseconds, lower is better.
OBJECTIVE = Objective("onnx_latency_ms", higher_is_better=False)
#: Metadata a result gains beside the objective.
IQR_KEY = "onnx_latency_iqr_ms"
CACHED_KEY = "onnx_latency_cached"
ERROR_KEY = "onnx_latency_error"

#: An evaluator option's values: no latency (the default, so existing results do not
#: change), or the ONNX measurement.
LatencyMode = Literal["off", "onnx"]


@attrs.frozen
class LatencySettings:
    """How a latency is measured (all of it is part of the cache key).

    ``batch_size`` 1 is the latency one request sees; ``threads`` 1 keeps numbers
    comparable between machines and least disturbed by a busy one.
    """

    batch_size: int = attrs.field(default=1, validator=[typed, in_range(ge=1, le=65_536)])
    warmup: int = attrs.field(default=10, validator=[typed, in_range(ge=0, le=100_000)])
    repeats: int = attrs.field(default=50, validator=[typed, in_range(ge=1, le=100_000)])
    threads: int = attrs.field(default=1, validator=[typed, in_range(ge=1, le=1024)])
    opset: int = attrs.field(default=17, validator=[typed, in_range(ge=7, le=100)])


def _cache_of(cache: LatencyCache | str | os.PathLike[str] | bool | None) -> LatencyCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return LatencyCache(default_latency_cache_dir())
    if isinstance(cache, LatencyCache):
        return cache
    return LatencyCache(Path(cache))


class OnnxLatency:
    """Measures (or recalls) ``onnx_latency_ms`` for genotypes of one space, one network setup.

    ``sample_shape`` is one input without the batch (``(C, H, W)``); ``build_options`` go
    to ``space.build`` as an evaluator passes them. ``cache``: True for the user's cache
    (:func:`~nasforge.tools.latency_cache.default_latency_cache_dir`), a directory, a
    :class:`~nasforge.tools.latency_cache.LatencyCache`, or False/None for none.
    Raises :class:`~nasforge.kernel.errors.MissingDependencyError` without onnxruntime.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        sample_shape: Sequence[int],
        build_options: dict[str, Any] | None = None,
        settings: LatencySettings | None = None,
        cache: LatencyCache | str | os.PathLike[str] | bool | None = True,
    ) -> None:
        space.require({BUILD}, by=f"the {OBJECTIVE.name} objective")
        ort = require("onnxruntime", extra="onnx-check", feature=f"the {OBJECTIVE.name} objective")
        self.space = space
        self.settings = settings or LatencySettings()
        self.input_shape = (self.settings.batch_size, *(int(d) for d in sample_shape))
        self.build_options = dict(build_options or {})
        self.cache = _cache_of(cache)
        self.key = LatencyKey(
            space=space.name,
            space_version=str(getattr(space, "version", "")),
            build=LatencyKey.build_text(self.build_options),
            input_shape=self.input_shape,
            warmup=self.settings.warmup,
            repeats=self.settings.repeats,
            threads=self.settings.threads,
            opset=self.settings.opset,
            onnxruntime=str(ort.__version__),
            torch=str(torch.__version__),
        )

    def measure(self, g: Genotype) -> LatencyMeasurement:
        """The latency of ``g``'s network: from the cache, else measured (and cached).

        Raises :class:`~nasforge.kernel.errors.ExportError` when it cannot be exported or run.
        """
        from nasforge.tools.export.latency import LatencyMeasurement, measure_genotype_latency

        text = self.space.format(g)
        if self.cache is not None:
            hit = self.cache.get(self.key, text)
            if hit is not None:
                try:
                    return attrs.evolve(LatencyMeasurement.from_json(hit), cached=True)
                except (TypeError, ValueError):
                    pass  # a record of an older shape: measure again
        s = self.settings
        measured = measure_genotype_latency(
            g,
            self.space,
            input_shape=self.input_shape,
            build_options=self.build_options,
            warmup=s.warmup,
            repeats=s.repeats,
            threads=s.threads,
            opset=s.opset,
        )
        if self.cache is not None:
            self.cache.put(self.key, text, measured.to_json())
        return measured

    def add_to(self, result: Result, g: Genotype) -> Result:
        """``result`` with ``onnx_latency_ms`` among its objectives (NaN when it cannot be
        measured, the reason in its metadata); a failed result is returned as it is."""
        if result.failed:
            return result
        metadata = dict(result.metadata)
        try:
            m = self.measure(g)
        except ExportError as exc:
            value = math.nan
            metadata[ERROR_KEY] = str(exc)
        else:
            value = m.median_ms
            metadata.update({IQR_KEY: m.iqr_ms, CACHED_KEY: m.cached})
        return attrs.evolve(
            result, objectives={**result.objectives, OBJECTIVE.name: value}, metadata=metadata
        )

    def describe(self) -> dict[str, Any]:
        """For the journal header: how, where and with what the latencies were measured."""
        return {
            "objective": OBJECTIVE.name,
            "measure": "onnxruntime CPU, median of timed runs after warm-up",
            "input_shape": list(self.input_shape),
            **attrs.asdict(self.settings),
            "onnxruntime": self.key.onnxruntime,
            "host": host_fingerprint(),
            "cache": None if self.cache is None else str(self.cache.directory),
        }
