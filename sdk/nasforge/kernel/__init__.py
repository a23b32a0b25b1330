"""The kernel: the contracts and values a plugin author needs, and nothing else.

Genotypes, search spaces and the supernet contract, strategies, evaluators, metrics,
results and objectives, fidelities, the registry and its hooks, errors, and the
conformance kits that check a plugin keeps the contracts. It imports nothing from
``nasforge.run`` or ``nasforge.tools``, and importing one contract loads only what that
contract needs.
"""
