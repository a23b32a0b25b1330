"""How long an exported network takes to run: onnxruntime on this machine, on one thread.

A latency objective must measure what a user deploys, so a genotype's network goes
through the same exporter, opset and file as ``nasforge export`` (:func:`write_onnx`,
without the parity check, which does not change the bytes) and onnxruntime runs it.

The numbers are made to be compared, not to be fast:

* ``threads=1`` (onnxruntime's intra-op pool, and no inter-op parallelism) by default: a
  multi-threaded run measures the machine's idle cores as much as the network, and on a
  busy machine a single thread is disturbed least;
* batch size 1 by default (the latency a single request sees); the batch is the first
  entry of ``input_shape``;
* ``warmup`` runs first (allocation, lazy kernel selection, caches), then ``repeats``
  timed runs with :func:`time.perf_counter_ns`; the median is the figure and the
  inter-quartile range its spread, because the mean of a timing is dragged by the one run
  a neighbour's burst delayed, and the median is not.

The input is drawn from its own generator (never torch's global one). onnxruntime is the
optional extra ``onnx-check``, imported only here, when a measurement is asked for.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge.kernel.converters import to_tuple
from nasforge.kernel.errors import ExportError, first_line
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.option_types import in_range, typed
from nasforge.kernel.optional import require
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_generator
from nasforge.tools.export.onnx_export import _checked_shape, _torch_export, write_onnx

#: Defaults of a measurement: enough timed runs that the median of a 0.05-1 ms network is
#: stable to a few percent on a busy two-core machine, in well under a second.
DEFAULT_WARMUP = 10
DEFAULT_REPEATS = 50
DEFAULT_THREADS = 1
#: Most timed runs one measurement may make (a typo, not a protocol, beyond this).
MAX_REPEATS = 100_000
#: The ONNX opset ``nasforge export`` writes.
DEFAULT_OPSET = 17


@attrs.frozen
class LatencyMeasurement:
    """One network's latency on this machine: median and spread of ``repeats`` timed runs.

    ``cached`` says whether it came from a latency cache (not part of equality: the same
    numbers are the same measurement wherever they were read from).
    """

    median_ms: float = attrs.field(converter=float, validator=in_range(ge=0.0))
    iqr_ms: float = attrs.field(converter=float, validator=in_range(ge=0.0))
    min_ms: float = attrs.field(converter=float, validator=in_range(ge=0.0))
    repeats: int = attrs.field(validator=[typed, in_range(ge=1)])
    warmup: int = attrs.field(validator=[typed, in_range(ge=0)])
    threads: int = attrs.field(validator=[typed, in_range(ge=1)])
    input_shape: tuple[int, ...] = attrs.field(converter=to_tuple)
    onnxruntime: str = ""
    cached: bool = attrs.field(default=False, eq=False)

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data["input_shape"] = list(self.input_shape)
        del data["cached"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LatencyMeasurement:
        return cls(**{k: v for k, v in data.items() if k != "cached"})

    def describe(self) -> str:
        return (
            f"median {self.median_ms:.4f} ms (IQR {self.iqr_ms:.4f} ms, min {self.min_ms:.4f} ms) "
            f"over {self.repeats} runs, {self.threads} thread(s), input {tuple(self.input_shape)}"
        )


def _checked_counts(warmup: int, repeats: int, threads: int) -> None:
    for name, value, low in (("warmup", warmup, 0), ("repeats", repeats, 1), ("threads", threads, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ExportError(f"latency {name} must be an integer >= {low}, got {value!r}")
    if repeats > MAX_REPEATS:
        raise ExportError(f"latency repeats must be at most {MAX_REPEATS}, got {repeats}")


def onnxruntime_version() -> str:
    """The installed onnxruntime's version (a latency depends on it); the extra is required."""
    ort = require("onnxruntime", extra="onnx-check", feature="the ONNX latency measurement")
    return str(ort.__version__)


def _session(model: bytes, threads: int) -> Any:
    ort = require("onnxruntime", extra="onnx-check", feature="the ONNX latency measurement")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: a measurement is not the place for ORT's notes
    try:
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's exception types are not public
        raise ExportError(f"onnxruntime cannot load the model to time it ({first_line(exc)})") from exc


def _onnx_bytes(model: torch.nn.Module | bytes | str | os.PathLike[str], shape: tuple[int, ...]) -> bytes:
    """The ONNX model as bytes; a module is exported exactly as ``nasforge export`` does."""
    if isinstance(model, bytes | bytearray):
        return bytes(model)
    if isinstance(model, torch.nn.Module):
        example = torch.randn(shape, generator=seeded_generator(0))
        with tempfile.TemporaryDirectory(prefix="nasforge-latency-") as tmp:
            path = Path(tmp) / "model.onnx"
            training = model.training
            try:
                _torch_export(model.eval(), example, path, opset=DEFAULT_OPSET, dynamo=False)
            except Exception as exc:
                raise ExportError(f"ONNX export for timing failed: {first_line(exc)}") from exc
            finally:
                model.train(training)  # the caller's module is timed in eval mode, and left as it was
            return path.read_bytes()
    try:
        return Path(model).read_bytes()
    except OSError as exc:
        raise ExportError(f"cannot read the ONNX model {model}: {exc.strerror or exc}") from exc


def measure_onnx_latency(
    model: torch.nn.Module | bytes | str | os.PathLike[str],
    input_shape: Sequence[int],
    *,
    warmup: int = DEFAULT_WARMUP,
    repeats: int = DEFAULT_REPEATS,
    threads: int = DEFAULT_THREADS,
    seed: int = 0,
) -> LatencyMeasurement:
    """Time ``model`` (ONNX bytes, an ONNX file, or a module to export) with onnxruntime.

    ``input_shape`` is the whole input, batch first (``(1, C, H, W)``: one request).
    ``warmup`` untimed runs, then ``repeats`` timed runs of one ``session.run`` each; the
    median and inter-quartile range of those (see the module docstring for why).
    Raises :class:`ExportError` when the model cannot be exported, loaded or run, and
    :class:`~nasforge.kernel.errors.MissingDependencyError` without onnxruntime.
    """
    _checked_counts(warmup, repeats, threads)
    shape = _checked_shape(input_shape)
    version = onnxruntime_version()  # the extra first: its absence is the one line to see
    session = _session(_onnx_bytes(model, shape), threads)
    feed = {session.get_inputs()[0].name: torch.rand(shape, generator=seeded_generator(seed)).numpy()}
    timings: list[int] = []
    try:
        for _ in range(warmup):
            session.run(None, feed)
        for _ in range(repeats):
            start = time.perf_counter_ns()
            session.run(None, feed)
            timings.append(time.perf_counter_ns() - start)
    except Exception as exc:  # onnxruntime's exception types are not public
        raise ExportError(f"onnxruntime cannot run the model on input {shape} ({first_line(exc)})") from exc
    ms = [t / 1e6 for t in timings]
    quartiles = statistics.quantiles(ms, n=4, method="inclusive") if len(ms) > 1 else [ms[0]] * 3
    return LatencyMeasurement(
        median_ms=statistics.median(ms),
        iqr_ms=quartiles[2] - quartiles[0],
        min_ms=min(ms),
        repeats=repeats,
        warmup=warmup,
        threads=threads,
        input_shape=shape,
        onnxruntime=version,
    )


def measure_genotype_latency(
    g: Genotype,
    space: SearchSpace,
    *,
    input_shape: Sequence[int],
    build_options: dict[str, Any] | None = None,
    warmup: int = DEFAULT_WARMUP,
    repeats: int = DEFAULT_REPEATS,
    threads: int = DEFAULT_THREADS,
    opset: int = DEFAULT_OPSET,
) -> LatencyMeasurement:
    """Export ``g``'s network as ``nasforge export`` writes it (to a temporary file), and time it.

    ``input_shape`` is batch first, as in :func:`measure_onnx_latency`. The weights are
    the network as built from seed 0: latency is a property of the architecture and the
    input shape, not of the weights' values. Raises :class:`ExportError` (build options
    the space rejects, an input the network cannot take, an export or a run that fails).
    """
    _checked_counts(warmup, repeats, threads)
    onnxruntime_version()  # refuse at once without the extra, before building anything
    with tempfile.TemporaryDirectory(prefix="nasforge-latency-") as tmp:
        path = Path(tmp) / "model.onnx"
        try:
            write_onnx(
                g, path, space, input_shape=input_shape, build_options=build_options, check=False, opset=opset
            )
        except OSError as exc:
            raise ExportError(f"cannot write the model to time it: {exc.strerror or exc}") from exc
        model = path.read_bytes()
    return measure_onnx_latency(model, input_shape, warmup=warmup, repeats=repeats, threads=threads)
