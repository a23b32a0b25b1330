"""Results leave nasforge as safetensors genotypes and ONNX models (an ensemble: a manifest
plus one ONNX per member and optionally a fused graph, :func:`export_ensemble`)."""

from typing import TYPE_CHECKING

from nasforge.kernel.lazy_package import lazy_package

if TYPE_CHECKING:  # the names with their types; at run time each loads on first use
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
else:
    lazy_package(__name__)

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
