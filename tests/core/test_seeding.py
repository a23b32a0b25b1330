"""Local randomness: seeded builds equal the old global-seeded ones bit for bit, and an
evaluation's result depends on its inputs only, whatever other threads do meanwhile."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator

import pytest
import torch
import torch.nn.functional as F

from nasforge.kernel.seeding import LocalRandomness, seeded_build, seeded_generator
from nasforge.run.training import CosineSchedule, evaluate, iterate_batches, set_lr, train_epoch
from nasforge.tools.short_train import ShortTrainEvaluator
from nasforge_darts.space import DartsSpace
from nasforge_nb201 import NB201Space

NB201 = NB201Space()
DARTS = DartsSpace()

#: (name, builder of a network from the seed-independent genotype), covering both spaces'
#: evaluation networks and their supernets (whose alphas come from ``torch.randn``).
BUILDERS: dict[str, Callable[[], torch.nn.Module]] = {
    "nb201": lambda: NB201.build(NB201.sample(random.Random(1)), C=8, N=2),
    "nb201-supernet": lambda: NB201.supernet(C=4, N=1),
    "darts": lambda: DARTS.build(DARTS.sample(random.Random(1)), C=8, layers=5, auxiliary=True),
    "darts-supernet": lambda: DARTS.supernet(C=4, layers=3),
}


def _state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items()}


def _assert_identical(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    different = [k for k in a if not torch.equal(a[k], b[k])]
    assert not different, f"differ: {different[:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("seed", [0, 7])
def test_seeded_build_is_bit_identical_to_manual_seed(name: str, seed: int) -> None:
    build = BUILDERS[name]
    torch.manual_seed(seed)
    old = _state(build())
    new = _state(seeded_build(build, seed))
    _assert_identical(old, new)
    assert any(v.is_floating_point() and v.std() > 0 for v in new.values())  # something was drawn
    other = _state(seeded_build(build, seed + 1))
    assert any(not torch.equal(new[k], other[k]) for k in new)


def test_seeded_build_leaves_the_global_generator_alone() -> None:
    torch.manual_seed(123)
    before = torch.get_rng_state()
    seeded_build(BUILDERS["darts-supernet"], 0)
    assert torch.equal(torch.get_rng_state(), before)


@pytest.fixture
def noisy_neighbour() -> Iterator[None]:
    """Another thread that reseeds and draws from the global generator all the time."""
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            torch.manual_seed(i)
            torch.randn(64)
            torch.empty(32).uniform_()
            i += 1

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.mark.slow
def test_builds_on_threads_ignore_other_threads(noisy_neighbour: None) -> None:
    reference = _state(seeded_build(BUILDERS["nb201"], 3))
    results: list[dict[str, torch.Tensor]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(3):
                results.append(_state(seeded_build(BUILDERS["nb201"], 3)))
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 6
    for r in results:
        _assert_identical(reference, r)


def test_the_mode_is_confined_to_its_thread() -> None:
    seen: list[torch.Tensor] = []

    def draw() -> None:
        torch.manual_seed(5)
        seen.append(torch.rand(4))

    with LocalRandomness(0):
        t = threading.Thread(target=draw)
        t.start()
        t.join()
    torch.manual_seed(5)
    assert torch.equal(seen[0], torch.rand(4))


DRAWS: dict[str, Callable[[], torch.Tensor]] = {
    "rand": lambda: torch.rand(5),
    "randn": lambda: torch.randn(2, 3, dtype=torch.float64),
    "randint": lambda: torch.randint(10, (6,)),
    "randint-low": lambda: torch.randint(3, 10, (6,)),
    "randperm": lambda: torch.randperm(9),
    "rand_like": lambda: torch.rand_like(torch.zeros(4)),
    "randn_like": lambda: torch.randn_like(torch.zeros(4)),
    "normal": lambda: torch.normal(torch.zeros(4), 2.0),
    "bernoulli": lambda: torch.bernoulli(torch.full((8,), 0.3)),
    "multinomial": lambda: torch.multinomial(torch.ones(6), 3),
    "random_": lambda: torch.empty(5).random_(0, 100),
    "exponential_": lambda: torch.empty(5).exponential_(),
    "dropout2d": lambda: F.dropout2d(torch.ones(2, 6, 3, 3), 0.5),
    "orthogonal_": lambda: torch.nn.init.orthogonal_(torch.empty(4, 4)),
    "trunc_normal_": lambda: torch.nn.init.trunc_normal_(torch.empty(6)),
    "kaiming_normal_": lambda: torch.nn.init.kaiming_normal_(torch.empty(3, 4)),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_every_kind_of_draw_follows_the_local_stream(name: str) -> None:
    torch.manual_seed(6)
    old = DRAWS[name]()
    torch.manual_seed(99)  # the global state must not matter
    with LocalRandomness(6):
        new = DRAWS[name]()
    assert torch.equal(old, new)


def test_dropout_draws_from_the_local_stream_exactly() -> None:
    x = torch.ones(4, 50)
    torch.manual_seed(9)
    old = (F.dropout(x, 0.3), torch.rand(3))
    with LocalRandomness(9):
        new = (F.dropout(x, 0.3), torch.rand(3))
    assert torch.equal(old[0], new[0]) and torch.equal(old[1], new[1])
    assert (new[0] == 0).any() and (new[0] != 0).any()


def test_native_dropout_uses_a_mask_from_the_local_generator() -> None:
    x = torch.randn(1000, generator=seeded_generator(0))
    with LocalRandomness(2):
        out, mask = torch.native_dropout(x, 0.25, True)
        same, kept = torch.native_dropout(x, 0.25, False)
    expected = torch.empty_like(x).bernoulli_(0.75, generator=seeded_generator(2))
    assert mask.dtype == torch.bool and torch.equal(mask, expected.bool())
    assert torch.allclose(out, x * expected / 0.75)
    assert torch.equal(same, x) and bool(kept.all())


def test_explicit_generators_are_respected_and_streams_continue() -> None:
    mode = LocalRandomness(4)
    mine = seeded_generator(11)
    with mode:
        a = torch.rand(3)
        b = torch.rand(3, generator=mine)
    with mode:  # entering again continues the stream
        c = torch.rand(3)
    whole = torch.rand(6, generator=seeded_generator(4))
    assert torch.equal(torch.cat([a, c]), whole)
    assert torch.equal(b, torch.rand(3, generator=seeded_generator(11)))
    assert mode.generator("cpu") is mode.generator(torch.device("cpu"))


# --- the short-train evaluator ------------------------------------------------------------


def _legacy_short_train(ev: ShortTrainEvaluator, g) -> float:  # noqa: ANN001 - a Genotype
    """What the evaluator computed before it owned its randomness (global generator)."""
    torch.manual_seed(ev.seed)
    model = ev.space.build(g, **ev.build_options)
    opt = ev.optimiser.build(model.parameters())
    schedule = CosineSchedule(ev.optimiser.lr, 0.0, ev.epochs)
    gen = torch.Generator().manual_seed(ev.seed)
    for epoch in range(ev.epochs):
        set_lr(opt, schedule(epoch))
        train_epoch(model, iterate_batches(ev.train.x, ev.train.y, ev.batch_size, generator=gen), opt)
    return 100.0 * evaluate(model, ev.valid.x, ev.valid.y)[1]


@pytest.fixture(scope="module")
def nb201_eval() -> tuple[ShortTrainEvaluator, object]:
    ev = ShortTrainEvaluator(NB201, epochs=1, seed=2, valid_fraction=0.7, build={"C": 4, "N": 1})
    return ev, NB201.parse(
        "|nor_conv_3x3~0|+|nor_conv_3x3~0|skip_connect~1|+|nor_conv_1x1~0|avg_pool_3x3~1|nor_conv_3x3~2|"
    )


@pytest.fixture(scope="module")
def darts_eval() -> tuple[ShortTrainEvaluator, object]:
    """Drop-path on: training draws random masks after the build."""
    ev = ShortTrainEvaluator(
        DARTS, epochs=1, seed=1, valid_fraction=0.85, build={"C": 2, "layers": 3, "drop_path": 0.3}
    )
    return ev, DARTS.sample(random.Random(5))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["nb201_eval", "darts_eval"])
def test_short_train_gives_the_figures_of_the_global_seeded_code(case: str, request) -> None:  # noqa: ANN001
    ev, g = request.getfixturevalue(case)
    assert ev.evaluate(g).objectives["valid_accuracy"] == _legacy_short_train(ev, g)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["nb201_eval", "darts_eval"])
def test_concurrent_short_train_equals_one_evaluation_alone(
    case: str, request, noisy_neighbour: None
) -> None:  # noqa: ANN001
    ev, g = request.getfixturevalue(case)
    alone = ev.evaluate(g)
    assert not alone.failed
    results: dict[int, float] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = ev.evaluate(g).objectives["valid_accuracy"]
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {0: alone.objectives["valid_accuracy"], 1: alone.objectives["valid_accuracy"]}
