"""Results leave nasforge as safetensors genotypes and ONNX models (an ensemble: a manifest
plus one ONNX per member and optionally a fused graph, :func:`export_ensemble`)."""

from nasforge.tools.export.bundle import ExportBundle, export_bundle
from nasforge.tools.export.ensemble_export import (
    EnsembleExport,
    LoadedEnsemble,
    export_ensemble,
    load_ensemble,
)
from nasforge.tools.export.genotype_file import export_genotype, load_genotype
from nasforge.tools.export.genotype_source import resolve_genotype, run_build_options
from nasforge.tools.export.inspect import inspect_file
from nasforge.tools.export.onnx_export import OnnxReport, export_onnx

__all__ = [
    "EnsembleExport",
    "ExportBundle",
    "LoadedEnsemble",
    "OnnxReport",
    "export_bundle",
    "export_ensemble",
    "export_genotype",
    "export_onnx",
    "inspect_file",
    "load_ensemble",
    "load_genotype",
    "resolve_genotype",
    "run_build_options",
]
