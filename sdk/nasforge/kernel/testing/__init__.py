"""Conformance kit for plugin authors (and the toy space it uses).

Subclass the suites in :mod:`nasforge.kernel.testing.conformance` in your own test files and
provide the fixtures they ask for; see CONTRIBUTING.md.
"""

from nasforge.kernel.testing.toy import ToyEvaluator, ToyFidelityEvaluator, ToySpace

__all__ = ["ToyEvaluator", "ToyFidelityEvaluator", "ToySpace"]
