"""What runs a search: the ask/tell loop and the parts composed around it (journal and
replay, duplicates, fidelity accounting, stop rules, asynchronous scheduling, progress),
the one-shot runner, executors, training loops, and the spec and API that build a run.

It builds on :mod:`nasforge.kernel` only; nothing here imports :mod:`nasforge.tools`.
"""
