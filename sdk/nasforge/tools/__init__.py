"""Tools above the run: scoring sweeps and metric backends, export (safetensors, ONNX,
ensembles), reports and pages, the built-in components, and the ``nasforge`` CLI."""
