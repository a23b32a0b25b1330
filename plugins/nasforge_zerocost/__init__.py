"""Training-free (zero-cost) metrics: every proxy the papers behind nasforge compare, implemented once.

Each metric is one module and names the variant it implements and why; all of them read
from :class:`nasforge.tools.scoring.SharedPasses`, so scoring several on one network shares the
forward/backward passes. Measured correlations on NAS-Bench-201 are in ``RESULTS.md``.
"""
