"""Results leave nasforge as safetensors genotypes and ONNX models."""

from nasforge.export.bundle import ExportBundle, export_bundle
from nasforge.export.genotype_file import export_genotype, load_genotype
from nasforge.export.genotype_source import resolve_genotype
from nasforge.export.inspect import inspect_file
from nasforge.export.onnx_export import OnnxReport, export_onnx

__all__ = [
    "ExportBundle",
    "OnnxReport",
    "export_bundle",
    "export_genotype",
    "export_onnx",
    "inspect_file",
    "load_genotype",
    "resolve_genotype",
]
