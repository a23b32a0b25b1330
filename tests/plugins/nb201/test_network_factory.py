"""The sweep factory gives exactly the network a seeded fresh build gives, every time.

It reuses modules between genotypes and re-draws only the weights, so what must hold is
bit-identity with ``seeded_build(space.build)`` after any history: other genotypes, other
seeds, and every metric having run on the previous network (gradients, BN statistics,
eval-mode switches, hooks and BN removal all come and go on the reused modules).
"""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from nasforge import get_registry
from nasforge.kernel.errors import NasforgeError
from nasforge.kernel.network_factory import network_factory
from nasforge.tools.scoring import build_model, score_genotypes
from nasforge.tools.scoring.scorer import score_model
from nasforge_nb201.arch import OP_NAMES
from nasforge_nb201.factory import NB201NetworkFactory, _leaves

TINY = {"C": 4, "N": 1, "num_classes": 10}


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def space():
    return get_registry().space("nb201")


def genotypes(n: int) -> list:
    """Every op on every edge at least once, in an order that swaps ops in and out."""
    sp = space()
    out = [sp.genotype([OP_NAMES[(e + k) % len(OP_NAMES)] for e in range(6)]) for k in range(len(OP_NAMES))]
    step = 15625 // max(1, n - len(out))
    return out + list(itertools.islice(sp.enumerate(), 0, 15625, step))[: n - len(out)]


def assert_same_network(a: nn.Module, b: nn.Module) -> None:
    assert [n for n, _ in a.named_modules()] == [n for n, _ in b.named_modules()]
    assert [type(m) for m in a.modules()] == [type(m) for m in b.modules()]
    assert [m.training for m in a.modules()] == [m.training for m in b.modules()]
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        assert sa[k].dtype == sb[k].dtype and torch.equal(sa[k], sb[k]), k
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert p.grad is None and q.grad is None and p.requires_grad and q.requires_grad
    assert a.ops == b.ops and [c.ops for c in a.cells()] == [c.ops for c in b.cells()]


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, TINY, {"C": 8, "N": 2, "num_classes": 7, "in_channels": 1}])
def test_factory_network_equals_a_seeded_fresh_build(options):
    sp = space()
    factory = network_factory(sp, options)
    assert isinstance(factory, NB201NetworkFactory)
    for i, g in enumerate(genotypes(12 if options else 8)):
        seed = i % 3
        assert_same_network(factory.build(g, seed), build_model(sp, g, seed=seed, build=options).train())


@pytest.mark.slow
def test_scores_after_every_metric_equal_fresh_builds():
    """Run every per-network metric through the factory (the sweep's path) and through
    fresh builds: identical numbers, so no metric leaves state behind on reused modules."""
    reg = get_registry()
    names = [n for n in reg.names("metric") if not getattr(reg.get("metric", n).info, "population", False)]
    gs = genotypes(7)
    x = torch.randn(8, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    y = torch.arange(8) % 10
    table = score_genotypes(space(), gs, names, data=(x, y), batch_size=8, build=TINY, seed=2)
    from nasforge.tools.scoring.sweep import resolve_metrics

    metrics = resolve_metrics(names, registry=reg)
    from nasforge.kernel.metric import MetricContext

    ctx = MetricContext(device="cpu", num_classes=10, seed=2, chunk_size=64, loss="cross_entropy")
    for g, row in zip(gs, table.rows, strict=True):
        fresh = score_model(build_model(space(), g, seed=2, build=TINY).train(), (x, y), metrics, ctx=ctx)
        for name in names:
            a, b = row[name].value, fresh[name].value
            assert (a == b) or (a != a and b != b), (g, name, a, b)  # NaN == NaN here
    assert len(names) >= 15


@pytest.mark.slow
def test_factory_leaves_the_global_generator_alone():
    state = torch.random.get_rng_state()
    factory = space().network_factory(**TINY)
    for g in genotypes(6):
        factory.build(g, 5)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_bad_options_are_one_line_errors():
    with pytest.raises(NasforgeError) as err:
        network_factory(space(), {"C": 0})
    assert "\n" not in str(err.value) and "C" in str(err.value)
    with pytest.raises(NasforgeError) as err:  # as space.build says it
        network_factory(space(), {"width": 3})
    assert "width" in str(err.value) and "\n" not in str(err.value)


def test_a_module_it_cannot_reinitialise_is_refused():
    with pytest.raises(TypeError, match="LayerNorm"):
        _leaves(nn.Sequential(nn.Conv2d(1, 1, 1), nn.LayerNorm(3)))
    with pytest.raises(TypeError, match="GELU"):
        _leaves(nn.Sequential(nn.GELU()))
    assert [type(m) for m in _leaves(nn.Sequential(nn.ReLU(), nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1)))] == [
        nn.Conv2d,
        nn.BatchNorm2d,
    ]


def test_spaces_without_a_factory_get_the_seeded_rebuild():
    from nasforge.kernel.network_factory import SeededNetworkFactory

    darts = get_registry().space("darts")
    factory = network_factory(darts, {"C": 4, "layers": 3})
    assert isinstance(factory, SeededNetworkFactory)
    rng = __import__("random").Random(0)
    g = darts.sample(rng)
    a, b = factory.build(g, 1), build_model(darts, g, seed=1, build={"C": 4, "layers": 3})
    for p, q in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(p, q)


def test_sweeps_reuse_one_factory_for_equal_spaces():
    """A worker unpickles a new space object with every chunk: the factory cache keys on
    the space's state, so chunks share one factory (and a different space gets its own)."""
    import pickle

    from nasforge.tools.scoring.sweep import _factory

    sp = space()
    twin = pickle.loads(pickle.dumps(sp))
    assert twin is not sp
    assert _factory(twin, TINY) is _factory(sp, TINY)
    assert _factory(sp, {"C": 8, "N": 1}) is not _factory(sp, TINY)
    darts = get_registry().space("darts")
    assert not isinstance(_factory(darts, {"C": 4, "layers": 3}), NB201NetworkFactory)


def test_threads_get_their_own_factory():
    """A factory hands out one network object, so two threads' sweeps must not share it."""
    import threading

    from nasforge.tools.scoring.sweep import _factory

    sp = space()
    mine = _factory(sp, TINY)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(_factory(sp, TINY)))
    worker.start()
    worker.join()
    assert seen and seen[0] is not mine and _factory(sp, TINY) is mine
