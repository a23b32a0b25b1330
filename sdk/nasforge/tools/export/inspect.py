"""Describe a nasforge file (genotype, ONNX model), ensemble export or run directory, without
plugins (unless a genotype file is to be read with a space)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nasforge.kernel.errors import ExportError
from nasforge.run.builtin_datasets.data_paths import is_link_loop
from nasforge.run.journal_file import FILENAME as JOURNAL
from nasforge.tools.export.bundle import ONNX_FILE
from nasforge.tools.export.ensemble_export import MANIFEST, load_ensemble
from nasforge.tools.export.genotype_file import (
    load_genotype,
    read_metadata,
    read_op_names,
    read_space_options,
)
from nasforge.tools.export.path_probe import PathKind, probe_path
from nasforge.tools.export.trained_export import read_weights_metadata

if TYPE_CHECKING:
    from nasforge.kernel.registry import Registry


def inspect_file(
    path: str | os.PathLike[str], *, space: str | None = None, registry: Registry | None = None
) -> dict[str, Any]:
    """A JSON-able description; raises :class:`ExportError` for unknown or corrupt input.

    ``space`` (a registered name, ``PATH.py:NAME`` or ``package.module:NAME``) reads a
    genotype file with that space, made with the options the file records: its text as the
    space writes it, for a file written without one or whose space's file has moved since.
    Everything else records what it is, and is refused with a space."""
    path = Path(path)
    if space is not None:
        return _inspect_with_space(path, space, registry)
    kind = probe_path(path)
    if kind is PathKind.DIRECTORY:
        if (path / MANIFEST).is_file() and not (path / JOURNAL).exists():
            return inspect_ensemble(path)
        if (path / ONNX_FILE).is_file() and not (path / JOURNAL).exists():
            return _inspect_export(path)
        return _inspect_run(path)
    if kind is PathKind.FILE and path.name == MANIFEST:
        return inspect_ensemble(path.parent)
    if kind is PathKind.MISSING:
        if is_link_loop(path):
            raise ExportError(
                f"{path}: a symbolic link loop (following its links leads back to where they started)"
            )
        raise ExportError(f"no such file: {path}")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if path.suffix == ".onnx":
        return _inspect_onnx(path)
    if path.suffix == ".safetensors" or len(head) == 8:
        weights = read_weights_metadata(path)
        if weights is not None:
            return _inspect_weights(path, weights)
        return _inspect_genotype(path)
    raise ExportError(f"{path}: not a nasforge file")


def _inspect_genotype(path: Path) -> dict[str, Any]:
    meta = read_metadata(path)
    g = load_genotype(path)
    info: dict[str, Any] = {
        "kind": "genotype",
        "path": str(path),
        "space": g.space,
        "version": g.version,
        "choices": list(g.choices),
        "text": meta.get("text"),
        "op_names": read_op_names(meta, path),
    }
    options = read_space_options(meta, path)
    if options:  # the space was made with options: export and train make it so again
        info["space_options"] = options
    if meta.get("space_source"):
        info["space_source"] = meta["space_source"]
    return info


def _inspect_with_space(path: Path, space: str, registry: Registry | None) -> dict[str, Any]:
    """A genotype file read with ``space`` (see :func:`inspect_file`)."""
    from nasforge.kernel.registry import get_registry
    from nasforge.run.advice import worded
    from nasforge.tools.export.genotype_source import space_of_file

    kind = probe_path(path)
    if kind is PathKind.MISSING:
        raise ExportError(f"no such file: {path}")
    if kind is not PathKind.FILE or path.suffix == ".onnx" or path.name == MANIFEST:
        raise worded(
            ExportError,
            f"{{space}} reads a genotype file; {path} is none (a run, an export or a model names "
            "its own space)",
            space=("space=", "--space"),
        )
    info = _inspect_genotype(path)  # any other file is refused here, in one line
    g = load_genotype(path)
    found = space_of_file(str(path), g, space, registry if registry is not None else get_registry())
    return {**info, "text": found.format(g), "read_with": space}


def _inspect_onnx(path: Path) -> dict[str, Any]:
    import onnx

    try:
        model = onnx.load(str(path))
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ExportError(f"{path} is not a valid ONNX model ({str(exc).splitlines()[0]})") from exc
    params = sum(int(_numel(t.dims)) for t in model.graph.initializer)
    metadata = {p.key: p.value for p in model.metadata_props}
    return {
        "kind": "onnx",
        "path": str(path),
        **_training_facts(metadata, prefix="nasforge."),
        "opset": [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")],
        "inputs": [_value_info(v) for v in model.graph.input],
        "outputs": [_value_info(v) for v in model.graph.output],
        "parameters": params,
        "nodes": len(model.graph.node),
        "metadata": metadata,
    }


def _training_facts(metadata: dict[str, str], *, prefix: str = "") -> dict[str, Any]:
    """Whether a model's weights are trained, on what, and how it did held out (from its
    metadata; a file written before training existed says ``untrained``)."""
    weights = metadata.get(f"{prefix}weights")
    if weights is None:
        return {}
    facts: dict[str, Any] = {"trained": weights.startswith("trained"), "weights": weights}
    if metadata.get(f"{prefix}trained_on"):
        facts["trained_on"] = metadata[f"{prefix}trained_on"]
    accuracy = metadata.get(f"{prefix}heldout_accuracy")
    if accuracy is not None:
        try:
            facts["heldout_accuracy"] = float(accuracy)
        except ValueError:
            facts["heldout_accuracy"] = accuracy
        facts["heldout"] = metadata.get(f"{prefix}heldout")
    return facts


def _inspect_weights(path: Path, meta: dict[str, str]) -> dict[str, Any]:
    """A trained network's weights file: its architecture, options and training."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as fh:
        count = sum(int(_numel(fh.get_slice(k).get_shape())) for k in fh.keys())  # noqa: SIM118
    return {
        "kind": "weights",
        "path": str(path),
        "space": meta.get("space"),
        "version": meta.get("version"),
        "text": meta.get("text"),
        **_training_facts(meta),
        "build_options": _json_or_text(meta.get("build_options")),
        "values": count,
    }


def _inspect_export(directory: Path) -> dict[str, Any]:
    """An export directory (``nasforge export`` / ``train --export``): its model's facts."""
    info = _inspect_onnx(directory / ONNX_FILE)
    files = sorted(p.name for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
    return {**info, "kind": "export", "path": str(directory), "files": files}


def _trained_result(run_dir: Path) -> dict[str, Any] | None:
    """What ``nasforge train RUN_DIR`` recorded in the run's directory, if it ran."""
    from nasforge.tools.winner.task import RESULT_FILE, RUN_SUBDIR

    try:
        record = json.loads((run_dir / RUN_SUBDIR / RESULT_FILE).read_text(encoding="utf-8"))
        held = record["heldout"]
        return {
            "genotype": record["genotype"],
            "data": record["data"]["name"],
            "epochs": record["epochs"],
            "heldout_accuracy": held["accuracy"],
            "heldout": f"{held['examples']} examples, {held['from']}",
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _json_or_text(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def inspect_ensemble(directory: Path) -> dict[str, Any]:
    """An ensemble export, verified first (manifest format, every file present and matching
    its checksum: :func:`~nasforge.tools.export.ensemble_export.load_ensemble`, so a damaged one
    is an :class:`ExportError` in one line): its members, combine rule, input normalisation
    and the parity each file passed when written."""
    loaded = load_ensemble(directory)
    manifest = loaded.manifest
    ens = loaded.ensemble
    entries = manifest["members"]
    fused = manifest.get("fused")
    input_ = manifest.get("input") or {}
    return {
        "kind": "ensemble",
        "path": str(directory),
        "verified": True,
        "space": (manifest.get("space") or {}).get("name"),
        "method": ens.method,
        "combine": ens.combine,
        "weights": list(ens.weights),
        "input_shape": input_.get("shape"),
        "normalisation": loaded.normalisation.to_json() if loaded.normalisation is not None else None,
        "num_classes": (manifest.get("output") or {}).get("num_classes"),
        "objectives": dict(ens.objectives),
        "checked": bool(manifest.get("checked")),
        "tolerance": manifest.get("tolerance"),
        "members": [
            {
                "member": i,
                "file": e.get("file"),
                "text": e.get("genotype"),
                "genotype": g.to_json(),
                "weight": ens.weights[i],
                "weights": e.get("weights"),
                "scores": dict(e.get("scores") or {}),
                "parity_max_abs_diff": e.get("parity_max_abs_diff"),
            }
            for i, (g, e) in enumerate(zip(ens.members, entries, strict=True))
        ],
        "fused": None
        if fused is None
        else {"file": fused.get("file"), "parity_max_abs_diff": fused.get("parity_max_abs_diff")},
    }


def _run_ensemble(end: dict[str, Any] | None, path: Path) -> dict[str, Any] | None:
    """The ensemble a one-shot run's end record holds, as ``inspect`` shows it."""
    from nasforge.kernel.ensemble import Ensemble
    from nasforge.kernel.errors import JournalError, NasforgeError

    data = (end or {}).get("ensemble")
    if data is None:
        return None
    try:
        ens = Ensemble.from_json(data)
    except NasforgeError as exc:
        raise JournalError(f"{path}: end record's ensemble: {exc}") from exc
    texts = data.get("texts") if isinstance(data.get("texts"), list) else []
    return {
        "method": ens.method,
        "combine": ens.combine,
        "objectives": dict(ens.objectives),
        "members": [
            {
                "member": i,
                "text": texts[i] if i < len(texts) else None,
                "genotype": g.to_json(),
                "weight": ens.weights[i],
                "scores": dict(ens.scores[i]) if ens.scores else {},
            }
            for i, g in enumerate(ens.members)
        ],
    }


def _fidelity_summary(trials: list[Any], end: dict[str, Any] | None) -> dict[str, Any]:
    """A multi-fidelity run's budget: trials per fidelity ("full" for the evaluator's full
    budget), trials a pruner stopped early, and the budget spent (the end record's); nothing
    for a run whose every trial ran at the full budget, so other runs read as before."""
    from nasforge.run.fidelity_spent import varies_budget, was_stopped

    if not varies_budget(trials):
        return {}
    counts: dict[str, int] = {}
    for t in sorted(trials, key=lambda t: (t.fidelity is None, t.fidelity or 0)):
        key = "full" if t.fidelity is None else str(t.fidelity)
        counts[key] = counts.get(key, 0) + 1
    out: dict[str, Any] = {
        "trials_by_fidelity": ", ".join(f"{n} at {k}" for k, n in counts.items()),
        "stopped_early": sum(1 for t in trials if was_stopped(t)),
    }
    if end and end.get("fidelity_spent") is not None:
        out["fidelity_spent"] = end["fidelity_spent"]
    return out


def ended_words(reader: Any, spec: dict[str, Any], path: Path) -> str:
    """Why the run in ``path`` ended (or that it has not), in a sentence: its budget, a stop
    rule, a strategy with nothing more to propose; an unended one names its resume."""
    n, end = len(reader.trials), reader.end
    trials = f"{n:,} trial{'s' if n != 1 else ''}"
    found = spec.get("budget")
    budget: dict[str, Any] = found if isinstance(found, dict) else {}
    most = budget.get("trials")
    if end is None:
        of = f" of {most:,}" if isinstance(most, int) else ""
        return f"not ended: {n:,}{of} trials journaled; nasforge resume {path} continues it"
    if reader.header.get("mode") == "one-shot":
        return "finished: the one-shot search ran to its end"
    if end.get("stopped"):
        return f"stopped early after {trials} by {end['stopped']}"
    if end.get("ended"):
        return f"ended after {trials}: {end['ended']}"
    if isinstance(most, int) and n >= most:
        return f"its trial budget was spent: {n:,} of {most:,} trials"
    for key, unit in (("seconds", "s"), ("simulated_seconds", "simulated s")):
        if budget.get(key) is not None:
            return f"its time budget ({budget[key]:g} {unit}) was spent after {trials}"
    return f"ended after {trials}, before its budget: the strategy proposed nothing new"


def _inspect_run(path: Path) -> dict[str, Any]:
    """What a run searched for (objectives, constraints) and found: its best and, with
    several objectives, its Pareto front (recomputed from the trials, so an unfinished
    run shows its front so far; the texts come from the end record where there is one)."""
    from nasforge.kernel.errors import JournalError
    from nasforge.run.defaults import DEFAULTS_KEY
    from nasforge.run.goal_checks import goal_of_header
    from nasforge.run.journal_file import JournalReader, journal_path
    from nasforge.run.plugin_faults import FAULTS_KEY, recorded_faults
    from nasforge.run.trial_failures import FAILURES_KEY, recorded_failures, trial_failures

    reader = JournalReader(journal_path(path))
    found = reader.header.get("spec")
    spec: dict[str, Any] = found if isinstance(found, dict) else {}
    defaults = reader.header.get(DEFAULTS_KEY)
    info: dict[str, Any] = {
        "kind": "run",
        "path": str(path),
        # which strategy searched, and whether it was the default (no --strategy given)
        "strategy": spec.get("strategy"),
        "strategy_default": isinstance(defaults, list) and "strategy" in defaults,
        "spec": reader.header.get("spec"),
        "environment": reader.header.get("environment"),
        "trials": len(reader.trials),
        "finished": reader.end is not None,
        "best": reader.end.get("best_text") if reader.end else None,
        # why a run ended before its budget (a stop rule or hook), else null
        "stopped": reader.end.get("stopped") if reader.end else None,
        "ended": ended_words(reader, spec, path),
    }
    failures = recorded_failures(reader.end) or trial_failures(reader.trials)
    if failures is not None:  # how many trials failed, and the first
        info[FAILURES_KEY] = failures.to_json()
    faults = recorded_faults(reader.end)
    if faults:  # plugins whose event hooks raised (the run went on without them)
        info[FAULTS_KEY] = [f.to_json() for f in faults]
    info.update(_fidelity_summary(reader.trials, reader.end))
    ensemble = _run_ensemble(reader.end, reader.path)
    if ensemble is not None:
        info["ensemble"] = ensemble
    trained = _trained_result(path)
    if trained is not None:
        info["trained"] = trained
    try:
        goal = goal_of_header(reader.header)
    except JournalError as exc:
        raise JournalError(f"{reader.path}: {exc}") from exc
    if goal is None:
        return info
    info["objectives"] = goal.objective_texts()
    info["constraints"] = goal.constraint_texts()
    reported = reader.header.get("reported")
    best = goal.best(reader.trials) if reader.trials else None
    if best is not None and goal.feasible(best.result):
        names = [o.name for o in goal.objectives] + ([reported] if isinstance(reported, str) else [])
        info["best_score"] = {
            n: best.result.objectives[n] for n in dict.fromkeys(names) if n in best.result.objectives
        }
        info["best_trial"] = best.index
    if goal.multi_objective:
        texts = {
            m.get("index"): m.get("text")
            for m in (reader.end or {}).get("front") or []
            if isinstance(m, dict)
        }
        names = [o.name for o in goal.objectives] + ([reported] if isinstance(reported, str) else [])
        info["front"] = [
            {
                "member": k,
                "trial": t.index,
                "text": texts.get(t.index),
                "genotype": t.genotype.to_json(),
                "objectives": {
                    n: t.result.objectives[n] for n in dict.fromkeys(names) if n in t.result.objectives
                },
            }
            for k, t in enumerate(goal.front(reader.trials))
        ]
    return info


def _numel(dims: Any) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _value_info(v: Any) -> dict[str, Any]:
    dims = [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    return {"name": v.name, "shape": dims}
