"""Genotype files (safetensors): corrupt, truncated, foreign, negative op codes, non-JSON
metadata; read by the library and given to ``inspect``, ``export`` and ``score``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.cases import py_genotype_file_case, safetensors_case
from fuzz.properties import assert_case_ok, fuzz_settings
from fuzz.source import HypothesisSource
from fuzz.templates import Templates


@fuzz_settings(150, shrink=True)
@given(data=st.data())
def test_load_genotype_decodes_or_refuses(templates: Templates, data: st.DataObject) -> None:
    """``load_genotype``/``inspect_file`` return, or raise an ExportError; an op code
    outside the file's vocabulary (e.g. -1) is refused, never decoded as another op."""
    assert_case_ok(py_genotype_file_case(HypothesisSource(data), templates))


@pytest.mark.slow
@fuzz_settings(60)
@given(data=st.data())
def test_cli_genotype_files(templates: Templates, data: st.DataObject) -> None:
    """``inspect``, ``export`` and ``score`` of a damaged genotype file."""
    assert_case_ok(safetensors_case(HypothesisSource(data), templates))
