"""DARTS cell space, evaluation and search networks, DARTS (1st/2nd order) and PR-DARTS.

The plugin registers through the ``nasforge`` entry point (``nasforge_darts.plugin``);
import the pieces from their modules, which keeps ``import nasforge_darts`` free of torch
module construction.
"""
