"""Export a genotype's network to ONNX and prove it computes the same thing.

The parity check runs the PyTorch model and onnxruntime on the same random inputs and
compares outputs: an export that silently changes numbers is worse than no export (the
check itself lives in :mod:`nasforge.tools.export.parity`). An export that fails, whether the
check, the build options, the shape or the disk, leaves no file behind.

The file holds the network as built (its seeded initial weights, BatchNorm statistics at
their defaults), or a network trained from scratch (``nasforge train``) with the weights
it learnt, the metadata saying which. A freshly built network
has BatchNorm mean 0 and variance 1, which hide an exporter that folds BatchNorm wrongly,
so a second export, of a copy whose statistics are randomised (the *probe*), is checked
too and thrown away; the export is refused if either check fails.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import torch

from nasforge.kernel.errors import BuildOptionError, ExportError, first_line
from nasforge.kernel.files import PART_SUFFIX, atomic_path, part_prefix
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.tools.export.parity import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    ParityResult,
    check_parity,
    randomise_batchnorm,
)
from nasforge.tools.export.staging import output_directory, write_error

#: Largest example input accepted (elements): beyond this a typo, not a network input.
MAX_INPUT_ELEMENTS = 1 << 28


@attrs.frozen
class OnnxReport:
    """What an export produced and how closely onnxruntime agreed.

    Two checks ran when ``checked``: ``parity`` on the file itself (the network as built)
    and ``probe_parity`` on a throw-away export of a copy with randomised BatchNorm
    statistics. The figures (``max_abs_diff``, ``max_rel_error``, ``tolerance_used``) are
    the worse of the two, so one number answers "how close was it"; ``passed`` needs both.
    """

    path: Path
    input_shape: tuple[int, ...]
    parity: ParityResult | None  # the file itself; None when the check was skipped
    tolerance: float  # the absolute part of the bound (atol)
    rtol: float
    seconds: float
    #: The probe (randomised BatchNorm statistics); None when the check was skipped.
    probe_parity: ParityResult | None = None

    @property
    def checks(self) -> tuple[ParityResult, ...]:
        """The parity results that exist: the file's, then the probe's."""
        return tuple(r for r in (self.parity, self.probe_parity) if r is not None)

    @property
    def checked(self) -> bool:
        return self.parity is not None

    @property
    def max_abs_diff(self) -> float | None:
        return max((r.max_abs_diff for r in self.checks), default=None)

    @property
    def max_rel_error(self) -> float | None:
        return max((r.max_rel_error for r in self.checks), default=None)

    @property
    def tolerance_used(self) -> float | None:
        return max((r.tolerance_used for r in self.checks), default=None)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.checks)

    def verdict(self) -> str:
        """Which bound the check held to, in a sentence: the absolute tolerance alone, or
        only with its relative part (``rtol`` x the sample's largest |logit|)."""
        worst, used = self.max_abs_diff, self.tolerance_used
        if worst is None or used is None:
            return "not checked against onnxruntime"
        bound = f"atol {self.tolerance:g} + rtol {self.rtol:g} x the sample's largest |logit|"
        if not self.passed:
            return f"failed: max |torch - onnxruntime| {worst:.3g} is {used:.3g}x the allowed {bound}"
        which = (
            f"within atol {self.tolerance:g} alone"
            if worst <= self.tolerance
            else f"beyond atol {self.tolerance:g}, so the relative part held"
        )
        return (
            f"held: max |torch - onnxruntime| {worst:.3g} is {which}; it used {100 * used:.3g} % of {bound}"
        )


def export_onnx(
    g: Genotype,
    path: str | os.PathLike[str],
    space: SearchSpace,
    *,
    input_shape: Sequence[int] = (1, 3, 32, 32),
    build_options: dict[str, Any] | None = None,
    check: bool = True,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    opset: int = 17,
    seed: int = 0,
    dynamo: bool = False,
) -> OnnxReport:
    """Build ``g`` in eval mode, export with a dynamic batch axis, check with onnxruntime.

    ``dynamo=False`` uses the TorchScript exporter, about 20x faster than the torch.export
    path for these small convolutional networks; pass ``dynamo=True`` to use the newer one.
    The file holds the network as built from ``seed``. With ``check``, onnxruntime must
    agree with it, and also with a copy whose BatchNorm statistics are randomised,
    exported to a temporary file beside ``path`` and removed (mean 0, variance 1 would
    hide a BatchNorm-folding error; see :mod:`nasforge.tools.export.parity`). Outputs must agree
    within ``tolerance + rtol * |largest logit of the sample|``.

    The file is written under a temporary name and renamed only after both checks passed.
    Raises :class:`ExportError` when building, exporting, writing or the check fails.
    """
    path = Path(path)
    try:
        with output_directory(path.parent), atomic_path(path) as tmp:
            report = write_onnx(
                g,
                tmp,
                space,
                input_shape=input_shape,
                build_options=build_options,
                check=check,
                tolerance=tolerance,
                rtol=rtol,
                opset=opset,
                seed=seed,
                dynamo=dynamo,
            )
    except OSError as exc:
        raise write_error(path, exc) from exc
    return attrs.evolve(report, path=path)


def write_onnx(
    g: Genotype,
    path: str | os.PathLike[str],
    space: SearchSpace,
    *,
    input_shape: Sequence[int] = (1, 3, 32, 32),
    build_options: dict[str, Any] | None = None,
    check: bool = True,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    opset: int = 17,
    seed: int = 0,
    dynamo: bool = False,
    model: torch.nn.Module | None = None,
    weights: str | None = None,
    metadata: dict[str, str] | None = None,
) -> OnnxReport:
    """:func:`export_onnx` writing straight to ``path``, for callers that stage files themselves.

    ``path`` is left written even when a check fails (the caller's staging removes it);
    the probe's temporary file is always removed. Raises :class:`ExportError` for the
    user's errors; ``OSError`` for the disk's.

    ``model`` is ``g``'s network with weights of its own (trained), exported instead of
    one built from ``seed`` (a copy, in eval mode on the CPU: the caller's is not
    changed); ``weights`` then says what they are in the file's ``nasforge.weights``
    (default ``untrained (seed N)``), and ``metadata`` adds ``nasforge.*`` entries.
    """
    space.validate(g)
    shape = _checked_shape(input_shape)
    if model is None:
        model = seeded_build(lambda: _build(space, g, build_options), seed).eval()
    else:
        model = copy.deepcopy(model).cpu().eval()
    # Its own generator: an export must not move (or depend on) torch's global random state.
    example = torch.randn(shape, generator=seeded_generator(seed + 3))
    _run_example(model, example)
    path = Path(path)
    t0 = time.perf_counter()
    _export(model, example, path, space, g, opset=opset, dynamo=dynamo)
    _stamp_metadata(
        path,
        g,
        space,
        weights=weights or f"untrained (seed {seed})",
        parity=_parity_note(check, tolerance, rtol, seed + 2),
        extra=metadata,
    )
    if not check:
        return OnnxReport(path, shape, None, tolerance, rtol, time.perf_counter() - t0)
    parity = check_parity(model, path, shape, atol=tolerance, rtol=rtol, seed=seed)
    if not parity.passed:
        raise ExportError(f"ONNX parity check failed: {parity.describe()}")
    probe = copy.deepcopy(model)  # the file keeps the model as built; only the copy is changed
    _randomise_batchnorm(probe, shape, seed=seed + 2)
    with _scratch_file(path) as probe_path:
        _export(probe, example, probe_path, space, g, opset=opset, dynamo=dynamo)
        probe_parity = check_parity(probe, probe_path, shape, atol=tolerance, rtol=rtol, seed=seed)
    if not probe_parity.passed:
        raise ExportError(
            f"ONNX parity check failed with randomised BatchNorm statistics: {probe_parity.describe()}"
        )
    return OnnxReport(path, shape, parity, tolerance, rtol, time.perf_counter() - t0, probe_parity)


@contextlib.contextmanager
def _scratch_file(beside: Path) -> Iterator[Path]:
    """A temporary file in ``beside``'s directory, removed however the block ends.

    Named like a staged file of ``beside`` (``.NAME.XXXX.part``), so a disk error on it is
    reported against the file the user asked for (:func:`~nasforge.tools.export.staging.write_error`).
    """
    fd, name = tempfile.mkstemp(prefix=part_prefix(beside), suffix=PART_SUFFIX, dir=beside.parent)
    os.close(fd)
    scratch = Path(name)
    try:
        yield scratch
    finally:
        with contextlib.suppress(OSError):
            scratch.unlink()


def _export(
    model: torch.nn.Module,
    example: torch.Tensor,
    path: Path,
    space: SearchSpace,
    g: Genotype,
    *,
    opset: int,
    dynamo: bool,
) -> None:
    """:func:`_torch_export`, its failures one line (the disk's stay ``OSError``)."""
    try:
        _torch_export(model, example, path, opset=opset, dynamo=dynamo)
    except OSError:
        raise
    except Exception as exc:
        raise ExportError(f"ONNX export of {space.format(g)} failed: {first_line(exc)}") from exc


def _checked_shape(input_shape: Sequence[int]) -> tuple[int, ...]:
    """The example input shape, refused in one line when no network could take it."""
    shape = tuple(input_shape)
    if len(shape) < 2 or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in shape):
        raise ExportError(f"input shape {shape} must be at least (batch, channels), all positive integers")
    if math.prod(shape) > MAX_INPUT_ELEMENTS:
        raise ExportError(f"input shape {shape} is too large for an example input")
    return shape


def _build(space: SearchSpace, g: Genotype, options: dict[str, Any] | None) -> torch.nn.Module:
    """The network; options the space rejects are the user's error (one line), not a crash."""
    try:
        return build_network(space, g, options)
    except BuildOptionError as exc:
        raise ExportError(str(exc)) from exc


def _run_example(model: torch.nn.Module, example: torch.Tensor) -> None:
    """One forward pass, so an input the network cannot take is the user's error in one line."""
    try:
        with torch.no_grad():
            model(example)
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise ExportError(
            f"the network does not accept input shape {tuple(example.shape)}: {first_line(exc)}"
        ) from exc


def _randomise_batchnorm(model: torch.nn.Module, shape: tuple[int, ...], *, seed: int) -> None:
    """:func:`randomise_batchnorm` runs the network: an input it cannot take is the user's error."""
    try:
        randomise_batchnorm(model, shape, seed=seed)
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise ExportError(f"the network does not accept input shape {shape}: {first_line(exc)}") from exc


def _torch_export(
    model: torch.nn.Module, example: torch.Tensor, path: Path, *, opset: int, dynamo: bool
) -> None:
    """Export with a dynamic batch axis.

    The TorchScript exporter is deprecated but about 20x faster here; we choose it
    knowingly (and silence its warning), and fall back to torch.export when a future
    torch no longer has it.
    """
    names: dict[str, Any] = {"input_names": ["input"], "output_names": ["logits"], "opset_version": opset}
    if not dynamo:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.filterwarnings("ignore", message="Constant folding", category=UserWarning)
                torch.onnx.export(
                    model,
                    (example,),
                    str(path),
                    dynamo=False,
                    dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                    **names,
                )
            return
        except (TypeError, NotImplementedError, AttributeError):
            pass  # legacy exporter gone: use torch.export below
    batch = torch.export.Dim("batch", min=1)
    torch.onnx.export(model, (example,), str(path), dynamo=True, dynamic_shapes=({0: batch},), **names)


def _parity_note(check: bool, atol: float, rtol: float, bn_seed: int) -> str:
    """The ``nasforge.parity`` metadata: which checks a file that exists has passed.

    Stamped before the checks run, so that they check the final bytes; a file that fails
    them is removed, so the note is true of every file that survives.
    """
    if not check:
        return "not checked"
    return (
        f"onnxruntime agrees with PyTorch within atol {atol:g} + rtol {rtol:g} x |logits| on this "
        f"network, and on a copy with randomised BatchNorm statistics (seed {bn_seed})"
    )


def _stamp_metadata(
    path: Path,
    g: Genotype,
    space: SearchSpace,
    *,
    weights: str,
    parity: str,
    extra: dict[str, str] | None = None,
) -> None:
    """What the file holds: its genotype, what its weights are (as built from a seed, or
    trained, and on what), its checks, and ``extra`` entries (``nasforge.`` prefixed)."""
    import onnx

    model = onnx.load(str(path))
    props = {
        "nasforge.space": space.name,
        "nasforge.version": space.version,
        "nasforge.genotype": space.format(g),
        "nasforge.weights": weights,
        "nasforge.parity": parity,
    }
    props.update({k if k.startswith("nasforge.") else f"nasforge.{k}": v for k, v in (extra or {}).items()})
    for key, value in props.items():
        prop = model.metadata_props.add()
        prop.key, prop.value = key, value
    onnx.save(model, str(path))
