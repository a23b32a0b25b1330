"""Export an ensemble: a manifest, one ONNX file per member, and optionally one fused graph.

One file per member because members have different graphs, a user may drop or add one,
and attacks or audits address single members; the optional fused file runs them all and
combines them (``ensemble.onnx``: input -> class probabilities) for a deployment that
wants one model. The manifest (``manifest.json``) says what a reader needs and nothing
less: each member's genotype, file and sha256, the combine rule and weights, the input
normalisation the members expect, the output, and how each file was checked.

Every file is checked against onnxruntime before anything appears: each member's logits
against its PyTorch network, the fused file's probabilities against the PyTorch ensemble
(the members' outputs combined by :func:`nasforge.kernel.ensemble.combine_logits`). The files are
staged under temporary names and renamed together (:func:`~nasforge.tools.export.staging.files_together`),
the manifest last, so a failed check or a full disk leaves no partial ensemble.

:func:`load_ensemble` verifies a directory before anyone runs it: the manifest parses and
has this format, every member file exists and matches its checksum; anything else is an
:class:`~nasforge.kernel.errors.ExportError` in one line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import torch
from torch import nn

from nasforge.kernel.ensemble import Ensemble
from nasforge.kernel.errors import BuildOptionError, ExportError, NasforgeError, first_line
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_factory import build_network
from nasforge.kernel.optional import require
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build, seeded_generator
from nasforge.tools.export.onnx_export import _checked_shape, _torch_export
from nasforge.tools.export.parity import DEFAULT_ATOL, DEFAULT_RTOL, ParityResult, check_parity, compare
from nasforge.tools.export.staging import files_together, output_directory, write_error

MANIFEST = "manifest.json"
FUSED = "ensemble.onnx"
FORMAT = "nasforge-ensemble-export"
VERSION = 1
#: Output name of the fused graph (members' files output ``logits``, as every export).
FUSED_OUTPUT = "probabilities"


def member_file(i: int) -> str:
    return f"member_{i:02d}.onnx"


@attrs.frozen
class Normalisation:
    """Per-channel ``(x - mean) / std`` the members expect on their input (applied by the caller)."""

    mean: tuple[float, ...] = attrs.field(converter=lambda v: tuple(float(x) for x in v))
    std: tuple[float, ...] = attrs.field(converter=lambda v: tuple(float(x) for x in v))

    def __attrs_post_init__(self) -> None:
        if len(self.mean) != len(self.std) or not self.mean or any(s <= 0 for s in self.std):
            raise ExportError(f"normalisation needs one mean and one positive std per channel, got {self}")

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        shape = (1, -1) + (1,) * (x.dim() - 2)
        mean = torch.tensor(self.mean, dtype=x.dtype).view(shape)
        std = torch.tensor(self.std, dtype=x.dtype).view(shape)
        return (x - mean) / std

    def to_json(self) -> dict[str, list[float]]:
        return {"mean": list(self.mean), "std": list(self.std)}


@attrs.frozen
class EnsembleExport:
    """What :func:`export_ensemble` wrote and how closely onnxruntime agreed with PyTorch."""

    directory: Path
    manifest: Path
    members: tuple[Path, ...]
    fused: Path | None
    member_parity: tuple[ParityResult, ...]
    fused_parity: ParityResult | None
    seconds: float

    @property
    def max_abs_diff(self) -> float | None:
        results = [*self.member_parity, *([self.fused_parity] if self.fused_parity else [])]
        return max((r.max_abs_diff for r in results), default=None)


@attrs.frozen
class _Writing:
    """How each file of one ensemble export is written and checked."""

    example: torch.Tensor
    shape: tuple[int, ...]
    opset: int
    check: bool
    tolerance: float
    rtol: float
    seed: int


def export_ensemble(
    ensemble: Ensemble,
    directory: str | os.PathLike[str],
    space: SearchSpace,
    *,
    models: Sequence[nn.Module] | None = None,
    input_shape: Sequence[int] = (1, 3, 32, 32),
    build_options: dict[str, Any] | None = None,
    normalisation: Normalisation | dict[str, Sequence[float]] | None = None,
    fuse: bool = False,
    check: bool = True,
    tolerance: float = DEFAULT_ATOL,
    rtol: float = DEFAULT_RTOL,
    opset: int = 17,
    seed: int = 0,
    texts: Sequence[str] | None = None,
) -> EnsembleExport:
    """Write ``ensemble`` to ``directory``: manifest, ``member_NN.onnx``, optionally ``ensemble.onnx``.

    ``models`` are the members' trained networks, in order; without them each member is
    built from its genotype with ``build_options`` and seed ``seed + i`` (untrained, as
    ``nasforge export`` does for one genotype). With ``check`` (default) every file must
    agree with PyTorch under onnxruntime within ``tolerance + rtol * |largest output|``.
    Raises :class:`ExportError` (one line) for a failed check, a member of another space,
    a network that cannot be built or take ``input_shape``, or a disk error.
    """
    t0 = time.perf_counter()
    directory = Path(directory)
    shape = _checked_shape(input_shape)
    norm = _normalisation(normalisation)
    for g in ensemble.members:
        try:
            space.validate(g)
        except NasforgeError as exc:
            raise ExportError(f"ensemble member is not a {space.name} genotype: {first_line(exc)}") from exc
    trained = models is not None
    nets = list(models) if models is not None else _build_members(ensemble, space, build_options, seed)
    if len(nets) != len(ensemble):
        raise ExportError(f"ensemble of {len(ensemble)} members given {len(nets)} networks")
    for net in nets:
        net.eval()
    example = torch.randn(shape, generator=seeded_generator(seed + 3))
    num_classes = _num_classes(nets[0], example)
    how = _Writing(example, shape, opset, check, tolerance, rtol, seed)
    targets = [directory / member_file(i) for i in range(len(nets))]
    if fuse:
        targets.append(directory / FUSED)
    targets.append(directory / MANIFEST)
    texts = list(texts) if texts is not None else [space.format(g) for g in ensemble.members]
    try:
        with output_directory(directory), files_together(*targets) as staged:
            members = [
                _write_member(ensemble, i, net, staged[i], space, texts[i], how, trained)
                for i, net in enumerate(nets)
            ]
            fused = _write_fused(ensemble, nets, staged[len(nets)], space, how) if fuse else (None, None)
            manifest = _manifest(ensemble, space, how, norm, num_classes)
            manifest.update(members=[entry for entry, _ in members], fused=fused[0])
            staged[-1].write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise write_error(directory / MANIFEST, exc) from exc
    return EnsembleExport(
        directory=directory,
        manifest=directory / MANIFEST,
        members=tuple(targets[: len(nets)]),
        fused=directory / FUSED if fuse else None,
        member_parity=tuple(parity for _, parity in members if parity is not None),
        fused_parity=fused[1],
        seconds=time.perf_counter() - t0,
    )


def _write_member(
    ensemble: Ensemble,
    i: int,
    net: nn.Module,
    tmp: Path,
    space: SearchSpace,
    text: str,
    how: _Writing,
    trained: bool,
) -> tuple[dict[str, Any], ParityResult | None]:
    """Member ``i``'s ONNX file (stamped and checked) and its manifest entry."""
    _export(net, how.example, tmp, opset=how.opset, what=f"member {i} ({text})")
    _stamp(
        tmp,
        {"nasforge.space": space.name, "nasforge.genotype": text, "nasforge.role": f"ensemble member {i}"},
    )
    parity = None
    if how.check:
        parity = check_parity(net, tmp, how.shape, atol=how.tolerance, rtol=how.rtol, seed=how.seed)
        if not parity.passed:
            raise ExportError(f"ONNX parity check of member {i} failed: {parity.describe()}")
    entry = {
        "file": member_file(i),
        "sha256": sha256_of(tmp),
        "genotype": text,
        "genotype_json": ensemble.members[i].to_json(),
        "weight": ensemble.weights[i],
        "weights": "trained" if trained else f"untrained (seed {how.seed + i})",
        "scores": dict(ensemble.scores[i]) if ensemble.scores else {},
        "parity_max_abs_diff": parity.max_abs_diff if parity is not None else None,
    }
    return entry, parity


def _write_fused(
    ensemble: Ensemble, nets: list[nn.Module], tmp: Path, space: SearchSpace, how: _Writing
) -> tuple[dict[str, Any], ParityResult | None]:
    """The fused graph's ONNX file (stamped and checked) and its manifest entry."""
    fused_model = ensemble.module(nets).eval()
    _export(fused_model, how.example, tmp, opset=how.opset, what="the fused ensemble", output=FUSED_OUTPUT)
    _stamp(tmp, {"nasforge.space": space.name, "nasforge.role": f"fused ensemble ({ensemble.combine})"})
    parity = None
    if how.check:
        parity = fused_check(fused_model, tmp, how.shape, atol=how.tolerance, rtol=how.rtol, seed=how.seed)
        if not parity.passed:
            raise ExportError(f"ONNX parity check of the fused ensemble failed: {parity.describe()}")
    entry = {
        "file": FUSED,
        "sha256": sha256_of(tmp),
        "output": FUSED_OUTPUT,
        "parity_max_abs_diff": parity.max_abs_diff if parity else None,
    }
    return entry, parity


def _manifest(
    ensemble: Ensemble, space: SearchSpace, how: _Writing, norm: Normalisation | None, num_classes: int
) -> dict[str, Any]:
    """The manifest, its members and fused graph still to be filled in (in this key order)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "space": {"name": space.name, "version": space.version},
        "method": ensemble.method,
        "combine": {"rule": ensemble.combine, "weights": list(ensemble.weights), "output": "probabilities"},
        "input": {
            "name": "input",
            "shape": [None, *how.shape[1:]],
            "dtype": "float32",
            "normalisation": None if norm is None else norm.to_json(),
        },
        "output": {"name": "logits", "num_classes": num_classes},
        "members": None,
        "fused": None,
        "objectives": dict(ensemble.objectives),
        "checked": bool(how.check),
        "tolerance": {"atol": how.tolerance, "rtol": how.rtol},
    }


def fused_check(
    model: nn.Module, path: Path, input_shape: Sequence[int], *, atol: float, rtol: float, seed: int = 0
) -> ParityResult:
    """The fused file's probabilities under onnxruntime against ``model``'s (a batch of two)."""
    x = torch.randn((2, *input_shape[1:]), generator=seeded_generator(seed + 1))
    with torch.no_grad():
        expected = model(x)
    got = run_onnx(path, x, output=FUSED_OUTPUT).to(expected.dtype)
    if got.shape != expected.shape:
        raise ExportError(
            f"the fused ONNX output shape {tuple(got.shape)} differs from PyTorch's {tuple(expected.shape)}"
        )
    return compare(expected, got, atol=atol, rtol=rtol)


def run_onnx(path: str | os.PathLike[str], x: torch.Tensor, *, output: str = "logits") -> torch.Tensor:
    """``output`` of the ONNX file at ``path`` on ``x`` under onnxruntime (CPU)."""
    ort = require("onnxruntime", extra="onnx-check", feature="running an exported ensemble")
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        (out,) = session.run([output], {"input": x.detach().cpu().float().numpy()})
    except Exception as exc:  # onnxruntime's exception types are not public
        raise ExportError(f"onnxruntime cannot run {Path(path).name} ({first_line(exc)})") from exc
    return torch.from_numpy(out)


def sha256_of(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- reading back -------------------------------------------------------------------------
@attrs.frozen
class LoadedEnsemble:
    """A verified ensemble export: its manifest, the ensemble, and its files' paths."""

    directory: Path
    manifest: dict[str, Any]
    ensemble: Ensemble
    members: tuple[Path, ...]
    fused: Path | None
    normalisation: Normalisation | None

    def predict(self, x: torch.Tensor, *, fused: bool = False, normalise: bool = True) -> torch.Tensor:
        """Class probabilities [N, C] under onnxruntime: the members' logits combined by the
        manifest's rule (or the fused file's output); ``normalise`` applies the manifest's
        input normalisation first (pass raw inputs)."""
        if normalise and self.normalisation is not None:
            x = self.normalisation.apply(x)
        if fused:
            if self.fused is None:
                raise ExportError(f"{self.directory} holds no fused ensemble (export with fuse=True)")
            return run_onnx(self.fused, x, output=FUSED_OUTPUT)
        return self.ensemble.combine_logits([run_onnx(p, x) for p in self.members])


def load_ensemble(directory: str | os.PathLike[str]) -> LoadedEnsemble:
    """Read and verify an ensemble export (manifest format, files present, checksums)."""
    directory = Path(directory)
    path = directory / MANIFEST
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from exc
    try:
        manifest = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ExportError(f"{path} is not valid JSON ({first_line(exc)})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ExportError(f"{path} is not a {FORMAT} manifest")
    if manifest.get("version") != VERSION:
        raise ExportError(
            f"{path}: manifest version {manifest.get('version')!r} is not supported (reads {VERSION})"
        )
    try:
        entries = manifest["members"]
        combine = manifest["combine"]
        ensemble = Ensemble(
            members=[Genotype.from_json(e["genotype_json"]) for e in entries],
            weights=combine["weights"],
            combine=combine["rule"],
            scores=[e.get("scores") or {} for e in entries] if all(e.get("scores") for e in entries) else (),
            objectives=manifest.get("objectives") or {},
            method=manifest.get("method"),
        )
        files = [_inside(directory, e["file"]) for e in entries]
        sums = [e["sha256"] for e in entries]
        fused_entry = manifest.get("fused")
        norm_data = (manifest.get("input") or {}).get("normalisation")
        norm = None if norm_data is None else Normalisation(norm_data["mean"], norm_data["std"])
    except ExportError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ExportError(f"{path} is malformed: {first_line(exc)}") from exc
    fused = None
    if fused_entry is not None:
        try:
            fused = _inside(directory, fused_entry["file"])
            sums.append(fused_entry["sha256"])
        except (KeyError, TypeError) as exc:
            raise ExportError(f"{path} is malformed: fused entry {first_line(exc)}") from exc
    for file, expected in zip([*files, *([fused] if fused else [])], sums, strict=True):
        if not file.is_file():
            raise ExportError(f"{file.name} listed in {path} is missing")
        actual = sha256_of(file)
        if actual != expected:
            raise ExportError(
                f"{file.name} does not match its checksum in {path} (expected {str(expected)[:12]}..., "
                f"file has {actual[:12]}...): the file was changed or corrupted"
            )
    return LoadedEnsemble(directory, manifest, ensemble, tuple(files), fused, norm)


# --- helpers ------------------------------------------------------------------------------
def _build_members(
    ensemble: Ensemble, space: SearchSpace, options: dict[str, Any] | None, seed: int
) -> list[nn.Module]:
    nets = []
    for i, g in enumerate(ensemble.members):
        try:
            nets.append(seeded_build(functools.partial(build_network, space, g, options), seed + i))
        except BuildOptionError as exc:
            raise ExportError(str(exc)) from exc
    return nets


def _num_classes(net: nn.Module, example: torch.Tensor) -> int:
    try:
        with torch.no_grad():
            out = net(example)
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise ExportError(
            f"the network does not accept input shape {tuple(example.shape)}: {first_line(exc)}"
        ) from exc
    out = out[0] if isinstance(out, tuple | list) else out
    return int(out.shape[-1])


def _export(
    model: nn.Module, example: torch.Tensor, path: Path, *, opset: int, what: str, output: str = "logits"
) -> None:
    try:
        if output == "logits":
            _torch_export(model, example, path, opset=opset, dynamo=False)
        else:
            _export_named(model, example, path, opset=opset, output=output)
    except OSError:
        raise
    except Exception as exc:
        raise ExportError(f"ONNX export of {what} failed: {first_line(exc)}") from exc


def _export_named(model: nn.Module, example: torch.Tensor, path: Path, *, opset: int, output: str) -> None:
    """The TorchScript exporter with a dynamic batch axis and ``output`` as the output's name."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message="Constant folding", category=UserWarning)
        torch.onnx.export(
            model,
            (example,),
            str(path),
            dynamo=False,
            input_names=["input"],
            output_names=[output],
            opset_version=opset,
            dynamic_axes={"input": {0: "batch"}, output: {0: "batch"}},
        )


def _stamp(path: Path, props: dict[str, str]) -> None:
    import onnx

    model = onnx.load(str(path))
    for key, value in props.items():
        prop = model.metadata_props.add()
        prop.key, prop.value = key, value
    onnx.save(model, str(path))


def _normalisation(value: Normalisation | dict[str, Sequence[float]] | None) -> Normalisation | None:
    if value is None or isinstance(value, Normalisation):
        return value
    try:
        return Normalisation(value["mean"], value["std"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ExportError(
            f"normalisation must be {{'mean': [...], 'std': [...]}}: {first_line(exc)}"
        ) from exc


def _inside(directory: Path, name: Any) -> Path:
    """A file the manifest names, refused when it would leave the export's directory."""
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise ExportError(f"manifest in {directory} names a file outside it: {name!r}")
    return directory / name
