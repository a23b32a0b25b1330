"""ONNX files for ``nasforge inspect``: truncated, flipped, structurally wrong, foreign."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.cases import onnx_case, py_onnx_case
from fuzz.properties import assert_case_ok, fuzz_settings
from fuzz.source import HypothesisSource
from fuzz.templates import Templates


@fuzz_settings(80, shrink=True)
@given(data=st.data())
def test_inspect_file_describes_or_refuses(templates: Templates, data: st.DataObject) -> None:
    """``inspect_file`` describes the model or raises an ExportError (never onnx's own errors)."""
    assert_case_ok(py_onnx_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(40)
@given(data=st.data())
def test_cli_inspect_onnx(templates: Templates, data: st.DataObject) -> None:
    """``nasforge inspect MODEL``: exit 0, or exit 2 with one line."""
    assert_case_ok(onnx_case(HypothesisSource(data), templates))
