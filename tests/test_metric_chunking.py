"""The shared main pass split into chunks, and its out-of-memory split-and-retry.

There is no GPU here, so an out-of-memory error is simulated: a pass raises
``torch.cuda.OutOfMemoryError`` (what CUDA raises) once, and the retry must give the scores
of the unsplit pass. Samples must not interact for that to be exact, so the equality tests
use BatchNorm in eval mode; train-mode BN normalises each chunk with its own statistics
(as the zero-cost reference's ``split_data`` does), which is checked to be recorded, not hidden.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nasforge import MetricContext, get_registry
from nasforge.tools.scoring import SharedPasses
from nasforge_zerocost.catalogue import BY_NAME

CTX = MetricContext()
ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|skip_connect~2|"
#: every metric that reads the main pass (all of its taps between them)
NAMES = ("grad_norm", "snip", "grasp", "fisher", "fisher_channel", "jacob_cov", "naswot")


def net(*, train: bool) -> nn.Module:
    space = get_registry().space("nb201")
    torch.manual_seed(0)
    model = space.build(space.parse(ARCH), C=4, N=1, num_classes=10)
    if not train:
        # running statistics that are not the init's zeros/ones, so eval-mode BN is not trivial
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.1, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
    return model.train(train)


def batch(n: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, 3, 8, 8, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def scores(passes: SharedPasses) -> dict[str, float]:
    return {name: BY_NAME[name]().score_shared(passes) for name in NAMES}


def passes_for(model: nn.Module, **kwargs: object) -> SharedPasses:
    needs = frozenset().union(*(BY_NAME[n]().requirements for n in NAMES))
    return SharedPasses(model, batch(), CTX, needs=needs, **kwargs)  # type: ignore[arg-type]


def assert_close(got: dict[str, float], want: dict[str, float]) -> None:
    for name in NAMES:
        assert math.isfinite(want[name]), name
        assert got[name] == pytest.approx(want[name], rel=1e-5, abs=1e-9), name


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [1, 3, 4, 7])
def test_chunked_main_pass_equals_whole_batch(chunk: int) -> None:
    whole = passes_for(net(train=False))
    want = scores(whole)
    assert whole.main_chunk == 8 and whole.oom_retries == []
    chunked = passes_for(net(train=False), main_chunk=chunk)
    assert_close(scores(chunked), want)
    assert chunked.main_chunk == chunk and chunked.main_passes == 1


def _oom_once(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Make ``SharedPasses.<method>`` raise CUDA's out-of-memory error on its first call;
    returns the ids of the passes objects it was called on, in order."""
    calls: list[int] = []
    original = getattr(SharedPasses, method)

    def flaky(self: SharedPasses, *args: object) -> object:
        calls.append(id(self))
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(self, *args)

    monkeypatch.setattr(SharedPasses, method, flaky)
    return calls


def test_out_of_memory_halves_the_chunk_and_gives_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    want = scores(passes_for(net(train=False)))
    calls = _oom_once(monkeypatch, "_run_whole")
    passes = passes_for(net(train=False))
    assert_close(scores(passes), want)
    assert passes.oom_retries == [(8, 4)] and passes.main_chunk == 4
    # the retry went the chunked way: the whole pass ran once on these passes (fisher's own
    # train-mode pass of an eval-mode network is another passes object)
    assert calls.count(id(passes)) == 1 and calls[0] == id(passes)


def test_out_of_memory_inside_chunks_halves_again(monkeypatch: pytest.MonkeyPatch) -> None:
    want = scores(passes_for(net(train=False)))
    _oom_once(monkeypatch, "_run_chunked")
    passes = passes_for(net(train=False), main_chunk=4)
    assert_close(scores(passes), want)
    assert passes.oom_retries == [(4, 2)] and passes.main_chunk == 2


def test_other_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: SharedPasses, *args: object) -> object:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(SharedPasses, "_run_whole", broken)
    passes = passes_for(net(train=False))
    with pytest.raises(RuntimeError, match="shapes"):
        scores(passes)
    assert passes.oom_retries == []


def test_one_sample_that_does_not_fit_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def never_fits(self: SharedPasses, *args: object) -> object:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(SharedPasses, "_run_whole", never_fits)
    monkeypatch.setattr(SharedPasses, "_run_chunked", never_fits)
    passes = passes_for(net(train=False))
    with pytest.raises(torch.cuda.OutOfMemoryError):
        scores(passes)
    assert passes.oom_retries == [(8, 4), (4, 2), (2, 1)]


def test_train_mode_bn_chunks_use_their_own_statistics() -> None:
    """Split like the reference: finite scores, recorded as chunked, not the whole-batch ones."""
    want = scores(passes_for(net(train=True)))
    passes = passes_for(net(train=True), main_chunk=4)
    got = scores(passes)
    assert passes.main_chunk == 4
    assert all(math.isfinite(v) for v in got.values())
    assert got["grad_norm"] != pytest.approx(want["grad_norm"], rel=1e-4)


def test_model_on_another_device_is_a_clear_error() -> None:
    model = nn.Linear(3, 2, device="meta")
    with pytest.raises(ValueError, match="move the model"):
        SharedPasses(model, (torch.zeros(1, 3), torch.zeros(1, dtype=torch.long)), CTX)
