"""The conformance kit of a SearchSpace: validity, determinism, lossless round trips.

Usage, in the plugin's own tests (pytest collects the inherited ``test_*`` methods)::

    class TestMySpace(SearchSpaceConformance):
        @pytest.fixture
        def space(self):
            return MySpace()
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from nasforge.kernel.decisions import decisions_of, genotype_of, values_of
from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.search_space import (
    BUILD,
    DECISIONS,
    ENCODE,
    ENUMERATE,
    MUTATE,
    NEIGHBOURS,
    SAMPLE,
    STACK,
    SUPERNET,
    SearchSpace,
)
from nasforge.kernel.seeding import seeded_build, seeded_generator

N_SAMPLES = 8
KNOWN_CAPABILITIES = {SAMPLE, MUTATE, NEIGHBOURS, ENCODE, ENUMERATE, BUILD, SUPERNET, DECISIONS, STACK}


def samples(space: SearchSpace, n: int = N_SAMPLES, seed: int = 0) -> list[Genotype]:
    """``n`` genotypes the space samples from ``seed`` (what every kit checks on)."""
    rng = random.Random(seed)
    return [space.sample(rng) for _ in range(n)]


def safe_open_metadata(path: Any) -> dict[str, str]:
    with safe_open(str(path), framework="pt") as f:
        return dict(f.metadata() or {})


class SearchSpaceConformance:
    """Provide a ``space`` fixture; override ``build_kwargs``/``input_shape`` if needed."""

    #: Largest space for which the kit walks ``enumerate()`` completely.
    max_enumerate = 20_000

    @pytest.fixture
    def space(self) -> SearchSpace:
        raise NotImplementedError("provide a `space` fixture returning your SearchSpace")

    @pytest.fixture
    def build_kwargs(self) -> dict[str, Any]:
        return {}

    @pytest.fixture
    def input_shape(self) -> tuple[int, ...]:
        return (2, 3, 32, 32)

    @staticmethod
    def _refuses(space: SearchSpace, call: Any) -> None:
        """An undeclared capability must fail loudly with CapabilityError, not half-work."""
        with pytest.raises(CapabilityError):
            call()

    def test_identity(self, space: SearchSpace) -> None:
        assert isinstance(space.name, str) and space.name
        assert isinstance(space.version, str) and space.version
        assert space.capabilities <= KNOWN_CAPABILITIES, space.capabilities - KNOWN_CAPABILITIES
        assert SAMPLE in space.capabilities
        assert all(isinstance(op, str) for op in space.op_names)

    def test_sample_is_valid_and_seeded(self, space: SearchSpace) -> None:
        a, b = samples(space), samples(space)
        assert a == b, "sample(rng) must depend only on the rng"
        for g in a:
            assert (g.space, g.version) == (space.name, space.version)
            space.validate(g)
            hash(g)

    def test_text_round_trip(self, space: SearchSpace) -> None:
        for g in samples(space):
            text = space.format(g)
            assert isinstance(text, str)
            assert space.parse(text) == g

    def test_parse_rejects_garbage(self, space: SearchSpace) -> None:
        for bad in ("", "definitely not a genotype", "|||+|||"):
            with pytest.raises(InvalidGenotypeError):
                space.parse(bad)

    def test_validate_rejects_foreign(self, space: SearchSpace) -> None:
        g = samples(space, 1)[0]
        with pytest.raises(InvalidGenotypeError):
            space.validate(Genotype(space=space.name + "-other", version=space.version, choices=g.choices))
        with pytest.raises(InvalidGenotypeError):
            space.validate(Genotype(space=space.name, version=space.version + "x", choices=g.choices))

    def test_tensor_and_safetensors_round_trip(self, space: SearchSpace, tmp_path: Any) -> None:
        for i, g in enumerate(samples(space)):
            tensors, meta = g.to_tensors()
            assert Genotype.from_tensors(tensors, meta) == g
            path = tmp_path / f"g{i}.safetensors"
            save_file(tensors, str(path), metadata=meta)
            assert Genotype.from_tensors(load_file(str(path)), safe_open_metadata(path)) == g

    def test_mutate(self, space: SearchSpace) -> None:
        if MUTATE not in space.capabilities:
            return self._refuses(space, lambda: space.mutate(samples(space, 1)[0], random.Random(0)))
        rng = random.Random(1)
        for g in samples(space):
            child = space.mutate(g, rng)
            space.validate(child)
            assert child != g, "mutate must change the genotype"

    def test_neighbours(self, space: SearchSpace) -> None:
        if NEIGHBOURS not in space.capabilities:
            return self._refuses(space, lambda: space.neighbours(samples(space, 1)[0]))
        for g in samples(space, 3):
            ns = space.neighbours(g)
            assert ns, "a genotype needs at least one neighbour"
            assert g not in ns
            assert len(set(ns)) == len(ns), "neighbours must be unique"
            assert ns == space.neighbours(g), "neighbours must be deterministic"
            for n in ns:
                space.validate(n)

    def test_encode_decode(self, space: SearchSpace) -> None:
        if ENCODE not in space.capabilities:
            return self._refuses(space, lambda: space.encode(samples(space, 1)[0]))
        lengths = set()
        for g in samples(space):
            x = space.encode(g)
            assert x.dtype.is_floating_point and x.dim() == 1
            lengths.add(x.numel())
            assert space.decode(x) == g
        assert len(lengths) == 1, "encodings must have a fixed length"

    def test_enumerate(self, space: SearchSpace) -> None:
        if ENUMERATE not in space.capabilities:
            return self._refuses(space, lambda: next(iter(space.enumerate())))
        size = space.size
        assert size is not None and size > 0
        walked = list(itertools.islice(space.enumerate(), self.max_enumerate))
        seen = set(walked)
        assert len(seen) == len(walked), "enumerate() must not repeat genotypes"
        if size > self.max_enumerate:  # too large to walk: check the prefix only
            assert len(walked) == self.max_enumerate
            return
        assert len(seen) == size
        for g in samples(space):
            assert g in seen

    def test_decisions(self, space: SearchSpace) -> None:
        """One independent decision per choice: every genotype reads as values and back,
        every combination of values is a genotype, and they number the space's size."""
        if DECISIONS not in space.capabilities:
            return self._refuses(space, lambda: space.decisions())
        found = decisions_of(space)
        for g in samples(space):
            values = values_of(space, g)
            assert all(values[d.name] in d.choices for d in found)
            assert genotype_of(space, values) == g
        rng = random.Random(2)
        for _ in range(N_SAMPLES):  # any combination, the rarest included
            space.validate(genotype_of(space, {d.name: rng.choice(d.choices) for d in found}))
        if space.size is not None:
            assert math.prod(len(d.choices) for d in found) == space.size
        first = {d.name: d.choices[0] for d in found}
        missing = {k: v for k, v in first.items() if k != found[0].name}
        for bad in ({**first, found[0].name: object()}, missing, {**first, "no such decision": 0}):
            with pytest.raises(InvalidGenotypeError):
                genotype_of(space, bad)

    def test_build_forward(
        self, space: SearchSpace, build_kwargs: dict[str, Any], input_shape: tuple[int, ...]
    ) -> None:
        if BUILD not in space.capabilities:
            return self._refuses(space, lambda: space.build(samples(space, 1)[0]))
        g = samples(space, 1)[0]
        model = seeded_build(lambda: space.build(g, **build_kwargs), 0)
        with torch.no_grad():
            out = model.eval()(torch.randn(*input_shape, generator=seeded_generator(0)))
        if isinstance(out, tuple | list):
            out = out[0]
        assert out.shape[0] == input_shape[0]
        assert torch.isfinite(out).all()

    def test_stack_runs_each_network(
        self, space: SearchSpace, build_kwargs: dict[str, Any], input_shape: tuple[int, ...]
    ) -> None:
        """A stack of networks (batched scoring) gives each network's own outputs, from
        each network's own weights, in float64; a sub-stack is a view of the same weights."""
        if STACK not in space.capabilities:
            return self._refuses(space, lambda: space.network_stack(2, **build_kwargs))
        gs = samples(space, 3, seed=1)
        stack = space.network_stack(len(gs), dtype=torch.float64, **build_kwargs)
        arena = torch.zeros(stack.nbytes, dtype=torch.uint8)
        nets = [seeded_build(lambda g=g: space.build(g, **build_kwargs), i).train() for i, g in enumerate(gs)]
        for i, (g, net) in enumerate(zip(gs, nets, strict=True)):
            stack.pack(i, g, net, arena)
        x = torch.randn(*input_shape, generator=seeded_generator(0), dtype=torch.float64)
        module = stack.module(arena)
        stack.arrange(module, gs)
        with torch.no_grad():
            out = module(x[:, None].expand(x.shape[0], len(gs), *x.shape[1:]))
            tail = stack.module(arena, 1, 2)
            stack.arrange(tail, gs[1:])
            part = tail(x[:, None].expand(x.shape[0], 2, *x.shape[1:]))
            for k, net in enumerate(nets):
                torch.testing.assert_close(out[:, k], net.double()(x), rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(part, out[:, 1:], rtol=1e-9, atol=1e-12)
