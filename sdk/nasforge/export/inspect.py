"""Describe a nasforge file (genotype, ONNX model) or run directory, without plugins."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nasforge.errors import ExportError
from nasforge.export.genotype_file import load_genotype, read_metadata, read_op_names
from nasforge.export.path_probe import PathKind, probe_path


def inspect_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A JSON-able description; raises :class:`ExportError` for unknown or corrupt input."""
    path = Path(path)
    kind = probe_path(path)
    if kind is PathKind.DIRECTORY:
        return _inspect_run(path)
    if kind is PathKind.MISSING:
        raise ExportError(f"no such file: {path}")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if path.suffix == ".onnx":
        return _inspect_onnx(path)
    if path.suffix == ".safetensors" or len(head) == 8:
        meta = read_metadata(path)
        g = load_genotype(path)
        return {
            "kind": "genotype",
            "path": str(path),
            "space": g.space,
            "version": g.version,
            "choices": list(g.choices),
            "text": meta.get("text"),
            "op_names": read_op_names(meta, path),
        }
    raise ExportError(f"{path}: not a nasforge file")


def _inspect_onnx(path: Path) -> dict[str, Any]:
    import onnx

    try:
        model = onnx.load(str(path))
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ExportError(f"{path} is not a valid ONNX model ({str(exc).splitlines()[0]})") from exc
    params = sum(int(_numel(t.dims)) for t in model.graph.initializer)
    return {
        "kind": "onnx",
        "path": str(path),
        "opset": [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")],
        "inputs": [_value_info(v) for v in model.graph.input],
        "outputs": [_value_info(v) for v in model.graph.output],
        "parameters": params,
        "nodes": len(model.graph.node),
        "metadata": {p.key: p.value for p in model.metadata_props},
    }


def _inspect_run(path: Path) -> dict[str, Any]:
    """What a run searched for (objectives, constraints) and found: its best and, with
    several objectives, its Pareto front (recomputed from the trials, so an unfinished
    run shows its front so far; the texts come from the end record where there is one)."""
    from nasforge.errors import JournalError
    from nasforge.journal import JournalReader, journal_path
    from nasforge.objectives import goal_of_header

    reader = JournalReader(journal_path(path))
    info: dict[str, Any] = {
        "kind": "run",
        "path": str(path),
        "spec": reader.header.get("spec"),
        "environment": reader.header.get("environment"),
        "trials": len(reader.trials),
        "finished": reader.end is not None,
        "best": reader.end.get("best_text") if reader.end else None,
    }
    try:
        goal = goal_of_header(reader.header)
    except JournalError as exc:
        raise JournalError(f"{reader.path}: {exc}") from exc
    if goal is None:
        return info
    info["objectives"] = goal.objective_texts()
    info["constraints"] = goal.constraint_texts()
    reported = reader.header.get("reported")
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
