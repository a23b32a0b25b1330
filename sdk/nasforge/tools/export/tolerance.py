"""The default tolerances of the ONNX parity check, apart from the check itself so the
command line can show them in ``--help`` without importing torch."""

from __future__ import annotations

#: float32 rounding over a deep network measured ~4e-7 of the largest logit on 200
#: NAS-Bench-201 cells; a real export error (BatchNorm folding, a wrong weight) is ~1.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4
