"""Simplex weight-sharing activation search and its arg-max diagnostic (Roberts et al.).

Roberts, Liang and Sala show that, for a layer whose candidate activations are mixed by a
point alpha of the simplex under shared weights, each candidate's loss with those weights
is ``(1 - alpha_i)^2 * D_i``; from that identity arg max alpha provably picks the
shared-weight best for two candidates, and under their Condition 6 for more. This plugin
supplies:

- ``act-mlp``: an MLP whose layers each pick an activation, with a supernet following the
  core's supernet contract (so every one-shot method searches it);
- ``simplex``: a one-shot strategy whose architecture parameters live on the simplex
  (softmax logits with Adam, GAEA-style exponentiated gradient, or Euclidean projection),
  first-order, second-order or single-level, on any contract supernet;
- the diagnostic (:mod:`nasforge_simplex.consistency`, :mod:`nasforge_simplex.edge_probe`)
  that says whether arg max recovers the shared-weight best, with the paper's condition,
  the exact pairwise margins and the near-duplicate warning.

Import the pieces from their modules; ``import nasforge_simplex`` builds nothing.
"""
