"""Fuzzing suite: every parser and loader the CLI reaches, fed generated input.

A package (not loose modules) so that the benchmark ``benchmarks/fuzz_cli.py`` can import
the same generators and harness as the tests: one definition of "a fuzzed input" and of
"a failure", whether 250 inputs run in CI or 10,000 by hand.
"""
