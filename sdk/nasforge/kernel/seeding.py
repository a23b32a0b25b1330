"""Random draws from generators an evaluation owns, never from torch's global one.

``torch.manual_seed(s); space.build(g)`` is how the numbers of every figure were
produced, but the global generator is shared by all threads: two evaluations on two
threads interleave their draws (or reseed each other) and get different weights for the
same genotype. Module constructors and ``nn.init`` draw without a ``generator``
argument, so passing one explicitly is not possible without rewriting every layer.

:class:`LocalRandomness` instead routes, for the current thread only, every random
ATen operation that names no generator (``uniform_``, ``normal_``, ``bernoulli_``,
``randn``, ``randperm``, ... and dropout, which decomposes into ``bernoulli_`` on CPU)
to generators of its own, seeded from one seed. A fresh ``torch.Generator`` seeded with
``s`` yields the same stream as the default generator after ``torch.manual_seed(s)``,
and the draws happen in the same order with the same functions, so

    seeded_build(lambda: space.build(g), s)

gives bit-identical weights to ``torch.manual_seed(s); space.build(g)`` for any module,
including custom layers and parameters drawn with ``torch.randn`` in a constructor: there
is nothing to re-implement per layer type, and construction order does not matter.

Where global state remains (draws that still go to torch's default generators):

* the fused CUDA dropout kernel (``native_dropout``) takes no generator; it is replaced
  by an explicit Bernoulli mask from the local generator (same distribution, not the
  same numbers as the fused kernel, which CUDA runs never reproduced across threads);
* other seeded kernels without a generator argument (cuDNN/MIOpen RNNs with dropout,
  fused attention with ``dropout_p > 0``) draw from the device's default generator:
  networks using them in training mode are not reproducible across threads.

The dispatch mode costs about 10 microseconds per ATen call made inside it, so training
enters it around forward passes only (``train_epoch(..., randomness=...)``): backward
passes and optimiser steps draw nothing. It is confined to the ``with`` block and to the
thread that entered it (threads started inside the block do not inherit it). Under any
Python dispatch mode a few composite ATen functions take their "tensor subclass" path
(e.g. ``linalg.eigvalsh`` computes eigenvectors too), which can change a result's last
bits; builds and the forward passes of the usual layers are unaffected (tested), but
metrics are therefore scored outside it (they draw nothing; see ``MetricContext.seed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

T = TypeVar("T")

_aten = torch.ops.aten


class _Plan:
    """What to do with one ATen overload (decided once per overload, then cached)."""

    __slots__ = ("kind", "position", "target")

    def __init__(self, kind: str, position: int = -1, target: Any = None) -> None:
        self.kind = kind  # "pass" | "inject" | "redirect" | "dropout"
        self.position = position  # positional index of ``generator`` (for "inject")
        self.target = target  # the overload taking a generator (for "redirect")


_PASS = _Plan("pass")
_PLANS: dict[Any, _Plan] = {}


def _generator_twin(func: Any) -> Any | None:
    """The overload of ``func``'s packet with the same arguments plus ``generator``
    (``randn.default`` -> ``randn.generator``, ``randint.low`` -> ``randint.low_generator``)."""
    names = [a.name for a in func._schema.arguments]
    packet = func.overloadpacket
    for overload in packet.overloads():
        other = getattr(packet, overload)
        args = [a.name for a in other._schema.arguments]
        if "generator" in args and [n for n in args if n != "generator"] == names:
            return other
    return None


def _plan(func: Any) -> _Plan:
    plan = _PLANS.get(func)
    if plan is None:
        names = [a.name for a in func._schema.arguments]
        if "generator" in names:
            plan = _Plan("inject", position=names.index("generator"))
        elif torch.Tag.nondeterministic_seeded not in func.tags:
            plan = _PASS
        elif func is _aten.native_dropout.default:
            plan = _Plan("dropout")
        else:
            twin = _generator_twin(func)
            plan = _PASS if twin is None else _Plan("redirect", target=twin)
        _PLANS[func] = plan
    return plan


def _device_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.device:
    """Where the op draws: its first tensor argument's device, else its ``device=``."""
    for leaf in tree_leaves(args):
        if isinstance(leaf, torch.Tensor):
            return leaf.device
    device = kwargs.get("device")
    return torch.device(device) if device is not None else torch.device("cpu")


class LocalRandomness(TorchDispatchMode):
    """Within ``with LocalRandomness(seed):``, this thread's generator-less random draws
    come from generators seeded with ``seed`` (one per device, made on first use), as
    they would after ``torch.manual_seed(seed)`` on a quiet process.

    Draws that pass an explicit ``generator`` are left alone. Entering the same instance
    again continues its streams (build, then train, from one seed).
    """

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = int(seed)
        self._generators: dict[torch.device, torch.Generator] = {}

    def generator(self, device: torch.device | str = "cpu") -> torch.Generator:
        """This block's generator for ``device`` (e.g. to continue its stream explicitly)."""
        device = torch.device(device)
        if device.type != "cpu" and device.index is None:
            device = torch.device(device.type, torch.get_device_module(device.type).current_device())
        gen = self._generators.get(device)
        if gen is None:
            gen = torch.Generator(device=device).manual_seed(self.seed)
            self._generators[device] = gen
        return gen

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        plan = _plan(func)
        if plan.kind == "pass":
            return func(*args, **kwargs)
        device = _device_of(args, kwargs)
        if device.type == "meta":  # shapes only: nothing is drawn
            return func(*args, **kwargs)
        if plan.kind == "inject":
            if len(args) > plan.position:
                if args[plan.position] is None:
                    args = (*args[: plan.position], self.generator(device), *args[plan.position + 1 :])
            elif kwargs.get("generator") is None:
                kwargs = {**kwargs, "generator": self.generator(device)}
            return func(*args, **kwargs)
        if plan.kind == "redirect":
            return plan.target(*args, **{**kwargs, "generator": self.generator(device)})
        return self._dropout(*args, generator=self.generator(device), **kwargs)

    @staticmethod
    def _dropout(
        x: torch.Tensor, p: float, train: bool | None, *, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``native_dropout`` with a mask from ``generator``; the same arithmetic as
        ATen's CPU kernel (mask ~ Bernoulli(1 - p), output = x * mask * 1/(1 - p))."""
        if train is False:
            return x.clone(), torch.ones_like(x, dtype=torch.bool)
        keep = 1.0 - p
        mask = torch.empty_like(x).bernoulli_(keep, generator=generator)
        scale = 0.0 if keep == 0.0 else 1.0 / keep
        return x.mul(mask).mul_(scale), mask.bool()


def seeded_build(builder: Callable[[], T], seed: int) -> T:
    """``builder()`` with every initial weight drawn from ``seed`` alone.

    Bit-identical to ``torch.manual_seed(seed); builder()`` on a quiet process, but
    unaffected by (and not affecting) other threads' use of the global generator.
    """
    with LocalRandomness(seed):
        return builder()


def seeded_generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A fresh generator for ``device`` seeded with ``seed`` (for explicit draws)."""
    return torch.Generator(device=device).manual_seed(int(seed))


__all__ = ["LocalRandomness", "seeded_build", "seeded_generator"]
