"""The test suite a space's supernet runs to show it follows the supernet contract.

Usage, in the plugin's own tests::

    from nasforge.kernel.testing.supernet_conformance import SupernetConformance

    class TestMySupernet(SupernetConformance):
        @pytest.fixture
        def space(self):
            return MySpace()

        @pytest.fixture
        def supernet_options(self):
            return {"C": 4, "num_classes": 4, "in_channels": 3}

Passing it is what lets DARTS, PR-DARTS and NASI (and every later one-shot method) run on
the space: they use nothing but the members checked here.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
import torch
from torch import nn

from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import SearchSpace
from nasforge.kernel.seeding import seeded_build
from nasforge.kernel.supernet import Supernet, as_supernet
from nasforge.kernel.supernet_topology import KeptEdge, TopKInputs

N_SAMPLES = 6
#: Genotypes on which a supernet under one-hot weights is compared with ``build(g)``.
N_ONE_HOT = 20


class SupernetConformance:
    """Provide ``space`` (with the 'supernet' capability); optionally ``supernet_options``
    and ``input_shape`` (one example's shape, default (3, 8, 8))."""

    @pytest.fixture
    def space(self) -> SearchSpace:
        raise NotImplementedError("provide a `space` fixture whose supernet() follows the contract")

    @pytest.fixture
    def supernet_options(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (3, 8, 8)

    @pytest.fixture
    def supernet(self, space: SearchSpace, supernet_options: dict[str, Any]) -> Supernet:
        torch.set_num_threads(1)
        module = seeded_build(lambda: space.supernet(**supernet_options), 0)
        return as_supernet(module, by="the supernet conformance suite")

    @pytest.fixture
    def x(self, input_shape: tuple[int, ...]) -> torch.Tensor:
        return torch.randn(2, *input_shape, generator=torch.Generator().manual_seed(1))

    @pytest.fixture
    def genotypes(self, space: SearchSpace) -> list[Genotype]:
        rng = random.Random(0)
        return [space.sample(rng) for _ in range(N_SAMPLES)]

    # --- structure ----------------------------------------------------------------------
    def test_is_a_module_following_the_protocol(self, supernet: Supernet) -> None:
        assert isinstance(supernet, nn.Module) and isinstance(supernet, Supernet), (
            f"a supernet is an nn.Module following the Supernet protocol, got {type(supernet).__name__}"
        )

    def test_parameters_are_split_into_arch_and_weights(self, supernet: Supernet) -> None:
        arch = supernet.arch_parameters()
        weights = supernet.weight_parameters()
        shapes, cells = [tuple(a.shape) for a in arch], [cell.shape for cell in supernet.topology]
        assert shapes == cells, f"architecture tensors of shapes {shapes}, cells of shapes {cells}"
        frozen = [i for i, a in enumerate(arch) if not a.requires_grad]
        assert not frozen, f"architecture tensors {frozen} do not require gradients"
        every = {id(p) for p in supernet.parameters()}  # type: ignore[attr-defined]
        arch_ids, weight_ids = {id(a) for a in arch}, {id(w) for w in weights}
        assert not arch_ids & weight_ids, "a parameter is both architecture and weight"
        assert arch_ids | weight_ids == every, "every parameter is an architecture tensor or a weight"

    # --- forward ------------------------------------------------------------------------
    def test_default_weights_are_the_softmax_of_the_alphas(self, supernet: Supernet, x: torch.Tensor) -> None:
        supernet.eval()
        with torch.no_grad():
            default = supernet(x)  # type: ignore[operator]
            explicit = supernet(x, [torch.softmax(a, dim=-1) for a in supernet.arch_parameters()])  # type: ignore[operator]
        assert default.shape[0] == x.shape[0] and torch.isfinite(default).all(), (
            f"a batch of {x.shape[0]} gave output of shape {tuple(default.shape)} (finite: "
            f"{bool(torch.isfinite(default).all())})"
        )
        torch.testing.assert_close(default, explicit)

    def test_all_zero_weights_still_give_logits(self, supernet: Supernet, x: torch.Tensor) -> None:
        zeros = [torch.zeros(cell.shape) for cell in supernet.topology]
        with torch.no_grad():
            out = supernet(x, zeros)  # type: ignore[operator]
        assert out.shape[0] == x.shape[0] and torch.isfinite(out).all(), (
            f"all-zero weights: a batch of {x.shape[0]} gave output of shape {tuple(out.shape)} "
            f"(finite: {bool(torch.isfinite(out).all())})"
        )

    def test_sparse_runs_only_weighted_ops_dense_reaches_every_op(
        self, supernet: Supernet, x: torch.Tensor, genotypes: list[Genotype]
    ) -> None:
        supernet.eval()
        hard = supernet.one_hot_weights(genotypes[0])
        with torch.no_grad():
            reference = supernet(x, hard)  # type: ignore[operator]
        grads = {}
        for sparse in (False, True):
            ws = [w.clone().requires_grad_(True) for w in hard]
            out = supernet(x, ws, sparse=sparse)  # type: ignore[operator]
            torch.testing.assert_close(out.detach(), reference)
            out.square().sum().backward()
            grads[sparse] = [w.grad if w.grad is not None else torch.zeros_like(w) for w in ws]
        off = [w == 0 for w in hard]
        assert all(torch.all(g[m] == 0) for g, m in zip(grads[True], off, strict=True)), (
            "sparse=True must not compute (or differentiate) ops weighted zero"
        )
        reached = [
            g[m & _nonzero_columns(cell, m.shape)]
            for g, m, cell in zip(grads[False], off, supernet.topology, strict=True)
        ]
        assert any(bool((r != 0).any()) for r in reached), (
            "with sparse=False and weights that need gradients every op must run"
        )

    # --- discrete views -----------------------------------------------------------------
    def test_kept_edges_round_trip_and_obey_the_rule(
        self, supernet: Supernet, genotypes: list[Genotype]
    ) -> None:
        for g in genotypes:
            kept = supernet.kept_edges(g)
            assert len(kept) == len(supernet.topology), (
                f"kept_edges({g}) gives {len(kept)} cells, the topology has {len(supernet.topology)}"
            )
            for cell, edges in zip(supernet.topology, kept, strict=True):
                odd = [e for e in edges if not isinstance(e, KeptEdge)]
                assert not odd, f"kept_edges({g}) holds non-KeptEdge items {odd!r}"
                cell.check_kept(edges)
            back = supernet.genotype_of(kept)
            assert back == g, f"genotype_of(kept_edges({g})) gave {back}"

    def test_derive_reads_back_the_one_hot_weights(
        self, supernet: Supernet, genotypes: list[Genotype]
    ) -> None:
        for g in genotypes:
            weights = supernet.one_hot_weights(g)
            assert not any(w.requires_grad for w in weights), f"one_hot_weights({g}) require gradients"
            shapes, cells = [tuple(w.shape) for w in weights], [cell.shape for cell in supernet.topology]
            assert shapes == cells, f"one_hot_weights({g}) of shapes {shapes}, cells of shapes {cells}"
            kept = supernet.kept_edges(g)
            if any(
                _reads_a_source_twice(cell.rule, edges)
                for cell, edges in zip(supernet.topology, kept, strict=True)
            ):
                continue  # distinct-source derivation cannot give it back
            if any(cell.cut_off_outputs(edges) for cell, edges in zip(supernet.topology, kept, strict=True)):
                continue  # derivation repairs a cell whose output no input reaches
            derived = supernet.kept_edges(supernet.derive(weights))
            for edges, again in zip(kept, derived, strict=True):
                assert Counter(edges) == Counter(again), (
                    f"derive(one_hot_weights({g})) must keep its edges: {edges} vs {again}"
                )

    def test_one_hot_supernet_is_the_built_network(
        self, space: SearchSpace, supernet: Supernet, supernet_options: dict[str, Any], x: torch.Tensor
    ) -> None:
        """Where the supernet hands out a genotype's network with its weights (``inherit``):
        that is ``build(g)`` with the same options, and the supernet under ``one_hot_weights(g)``
        computes its logits (to 1e-6), for ``N_ONE_HOT`` sampled genotypes."""
        inherit = getattr(supernet, "inherit", None)
        if inherit is None:
            pytest.skip("the supernet hands out no network of its own (no inherit)")
        rng = random.Random(7)
        supernet.eval()
        for _ in range(N_ONE_HOT):
            g = space.sample(rng)
            net = inherit(g).eval()
            built = space.build(g, **supernet_options).eval()
            missing, unexpected = built.load_state_dict(net.state_dict(), strict=False)
            assert not missing and not unexpected, (
                f"inherit({g}) is no build(g): it lacks {missing} and has {unexpected} besides"
            )
            with torch.no_grad():
                expected = supernet(x, supernet.one_hot_weights(g))  # type: ignore[operator]
                got = built(x)
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)

    def test_derive_never_keeps_an_excluded_op(self, supernet: Supernet) -> None:
        cell = supernet.topology[0]
        if len(cell.ops.nonzero) < 2:
            pytest.skip("the first cell has a single op a kept edge may hold: nothing to exclude")
        banned = cell.ops.nonzero[0]
        scores = [torch.zeros(c.shape) for c in supernet.topology]
        scores[0][:, cell.ops.column(banned)] = 1.0  # the strongest op everywhere ...
        scores[0][:, cell.ops.column(cell.ops.nonzero[1])] = 0.5  # (a connected cell: no repair)
        kept = supernet.kept_edges(supernet.derive(scores, exclude={banned}))
        kept_banned = [e for e in kept[0] if e.op == banned]  # ... and still never kept
        assert not kept_banned, f"derive(exclude={{{banned!r}}}) kept {kept_banned}"


def _nonzero_columns(cell: Any, shape: torch.Size) -> torch.Tensor:
    mask = torch.ones(shape, dtype=torch.bool)
    if cell.ops.zero is not None:
        mask[:, cell.ops.column(cell.ops.zero)] = False
    return mask


def _reads_a_source_twice(rule: Any, edges: tuple[KeptEdge, ...]) -> bool:
    if not isinstance(rule, TopKInputs):
        return False
    pairs = [(e.source, e.target) for e in edges]
    return len(set(pairs)) != len(pairs)
