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
from functools import partial
from typing import Any

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from nasforge.kernel.decisions import decisions_of, genotype_of, values_of
from nasforge.kernel.errors import CapabilityError, InvalidGenotypeError
from nasforge.kernel.genotype import Genotype
from nasforge.kernel.network_stack import stacking
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
from nasforge.kernel.testing.context_checks import require_buildable

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
        name, version = getattr(space, "name", None), getattr(space, "version", None)
        assert isinstance(name, str) and name, f"a space's name must be a non-empty string, got {name!r}"
        assert isinstance(version, str) and version, (
            f"a space's version must be a non-empty string, got {version!r}"
        )
        unknown = set(space.capabilities) - KNOWN_CAPABILITIES
        assert not unknown, (
            f"capabilities {sorted(unknown)} are unknown (known: {sorted(KNOWN_CAPABILITIES)})"
        )
        assert SAMPLE in space.capabilities, (
            f"every space samples; capabilities: {sorted(space.capabilities)}"
        )
        bad = [op for op in space.op_names if not isinstance(op, str)]
        assert not bad, f"op_names must be strings, got {bad!r}"

    def test_builds_from_a_run_context(self, space: SearchSpace) -> None:
        """A run builds its space through its hook (``cls(**options)`` plus the context
        fields it declares, or its own ``from_context``): each field it declares is one a
        run context holds, and its constructor takes what is passed."""
        require_buildable("space", type(space))

    def test_sample_is_valid_and_seeded(self, space: SearchSpace) -> None:
        a, b = samples(space), samples(space)
        assert a == b, "sample(rng) must depend only on the rng"
        for g in a:
            assert (g.space, g.version) == (space.name, space.version), (
                f"sampled {g} names space {g.space!r} version {g.version!r}, "
                f"not {space.name!r} {space.version!r}"
            )
            space.validate(g)
            hash(g)

    def test_text_round_trip(self, space: SearchSpace) -> None:
        for g in samples(space):
            text = space.format(g)
            assert isinstance(text, str), f"format({g}) returned a {type(text).__name__}, not a string"
            again = space.parse(text)
            assert again == g, f"format then parse changed {g} into {again} (text {text!r})"

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
            back = Genotype.from_tensors(tensors, meta)
            assert back == g, f"tensor round trip changed {g} into {back}"
            path = tmp_path / f"g{i}.safetensors"
            save_file(tensors, str(path), metadata=meta)
            read = Genotype.from_tensors(load_file(str(path)), safe_open_metadata(path))
            assert read == g, f"safetensors round trip changed {g} into {read}"

    def test_mutate(self, space: SearchSpace) -> None:
        if MUTATE not in space.capabilities:
            return self._refuses(space, lambda: space.mutate(samples(space, 1)[0], random.Random(0)))
        rng = random.Random(1)
        for g in samples(space):
            child = space.mutate(g, rng)
            space.validate(child)
            assert child != g, f"mutate must change the genotype; {g} came back unchanged"

    def test_neighbours(self, space: SearchSpace) -> None:
        if NEIGHBOURS not in space.capabilities:
            return self._refuses(space, lambda: space.neighbours(samples(space, 1)[0]))
        for g in samples(space, 3):
            ns = space.neighbours(g)
            assert ns, f"a genotype needs at least one neighbour; {g} has none"
            assert g not in ns, f"{g} is among its own neighbours"
            assert len(set(ns)) == len(ns), (
                f"neighbours must be unique: {len(ns) - len(set(ns))} repeats for {g}"
            )
            assert ns == space.neighbours(g), f"neighbours must be deterministic; {g}'s differ between calls"
            for n in ns:
                space.validate(n)

    def test_encode_decode(self, space: SearchSpace) -> None:
        if ENCODE not in space.capabilities:
            return self._refuses(space, lambda: space.encode(samples(space, 1)[0]))
        lengths = set()
        for g in samples(space):
            x = space.encode(g)
            assert x.dtype.is_floating_point and x.dim() == 1, (
                f"encode({g}) must be a 1-d float tensor, got {x.dtype} of shape {tuple(x.shape)}"
            )
            lengths.add(x.numel())
            back = space.decode(x)
            assert back == g, f"decode(encode({g})) gave {back}"
        assert len(lengths) == 1, f"encodings must have a fixed length, got lengths {sorted(lengths)}"

    def test_enumerate(self, space: SearchSpace) -> None:
        if ENUMERATE not in space.capabilities:
            return self._refuses(space, lambda: next(iter(space.enumerate())))
        size = space.size
        assert size is not None and size > 0, f"an enumerable space has a size > 0, got {size!r}"
        walked = list(itertools.islice(space.enumerate(), self.max_enumerate))
        seen = set(walked)
        assert len(seen) == len(walked), f"enumerate() repeats {len(walked) - len(seen)} genotypes"
        if size > self.max_enumerate:  # too large to walk: check the prefix only
            assert len(walked) == self.max_enumerate, (
                f"size {size}, but enumerate() ended after {len(walked)} genotypes"
            )
            return
        assert len(seen) == size, f"size {size}, but enumerate() gives {len(seen)} genotypes"
        for g in samples(space):
            assert g in seen, f"sampled {g} is not among the enumerated genotypes"

    def test_decisions(self, space: SearchSpace) -> None:
        """One independent decision per choice: every genotype reads as values and back,
        every combination of values is a genotype, and they number the space's size (or,
        where some decisions exist only given others, make exactly ``size`` genotypes)."""
        if DECISIONS not in space.capabilities:
            return self._refuses(space, lambda: space.decisions())
        found = decisions_of(space)
        for g in samples(space):
            values = values_of(space, g)
            outside = {d.name: values[d.name] for d in found if values[d.name] not in d.choices}
            assert not outside, f"{g} reads as values outside their decisions' choices: {outside}"
            back = genotype_of(space, values)
            assert back == g, f"{g} read as values and back gave {back}"
        rng = random.Random(2)
        for _ in range(N_SAMPLES):  # any combination, the rarest included
            space.validate(genotype_of(space, {d.name: rng.choice(d.choices) for d in found}))
        if space.size is not None:
            combinations = math.prod(len(d.choices) for d in found)
            assert combinations >= space.size, (
                f"the decisions make {combinations} genotypes, the size says {space.size}"
            )
            if space.size < combinations <= self.max_enumerate:  # conditional: many combinations, one net
                made = {
                    genotype_of(space, dict(zip([d.name for d in found], combo, strict=True)))
                    for combo in itertools.product(*(d.choices for d in found))
                }
                assert len(made) == space.size, (
                    f"the decisions' {combinations} combinations make {len(made)} distinct genotypes, "
                    f"the size says {space.size}"
                )
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
        assert out.shape[0] == input_shape[0], (
            f"the network maps a batch of {input_shape[0]} to an output of shape {tuple(out.shape)}"
        )
        assert torch.isfinite(out).all(), f"the network of {g} gives non-finite outputs"

    def test_stack_runs_each_network(
        self, space: SearchSpace, build_kwargs: dict[str, Any], input_shape: tuple[int, ...]
    ) -> None:
        """A stack of networks (batched scoring) gives each network's own outputs, from
        each network's own weights, in float64; a sub-stack is a view of the same weights."""
        if STACK not in space.capabilities:
            return None  # an optional method: nothing to check
        gs = samples(space, 3, seed=1)
        stack = stacking(space).network_stack(len(gs), dtype=torch.float64, **build_kwargs)
        arena = torch.zeros(stack.nbytes, dtype=torch.uint8)
        nets = [seeded_build(partial(space.build, g, **build_kwargs), i).train() for i, g in enumerate(gs)]
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
