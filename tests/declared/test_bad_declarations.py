"""A declaration that cannot make a space is refused in one line naming the label."""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from nasforge import Chooser, DeclarationError, DeclaredSpace, declared_space
from tests.declared.families import OneStage


def space_of(body: Callable[[Chooser], Any]) -> DeclaredSpace:
    @declared_space("bad")
    def Bad(c: Chooser) -> nn.Module:  # noqa: N802 - a space is a class
        return body(c)

    return Bad()


def linear_after(c: Chooser, make: Callable[[Chooser], Any]) -> nn.Module:
    return nn.Sequential(nn.Linear(4, 4), make(c))


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (
            lambda c: linear_after(c, lambda c: nn.ReLU() if c.choice("k", []) else nn.ReLU()),
            "'k' has no candidates",
        ),
        (lambda c: nn.Linear(c.width("w", [4]), c.width("w", [8])), "label 'w' is used twice"),
        (
            lambda c: c.layer("op", {"a": nn.ReLU(), "b": 3}),
            "layer choice 'op': candidate 'b' is 3, not a module",
        ),
        (lambda c: c.layer("op", {"a": nn.ReLU, "b": lambda: 3}), "candidate 'b' made 3, not an nn.Module"),
        (lambda c: nn.Linear(4, c.width("w", [True, 8])), "width choice 'w'.*positive integers, got True"),
        (lambda c: nn.Linear(4, c.width("w", [8.0, 16])), "width choice 'w'.*positive integers, got 8.0"),
        (lambda c: nn.Linear(4, c.choice("w", [8, 8])), "'w' names candidate '8' twice"),
        (lambda c: nn.Linear(4, c.choice("a b", [8])), "label 'a b' must be a name"),
        (lambda c: nn.Linear(4, c.choice("k", [nn.ReLU, nn.Tanh])), "'k': candidate .* has no name"),
        (lambda c: c.repeat("r", [0, 1], lambda c: nn.ReLU()), "repeat 'r': depths must be"),
        (lambda c: 3, "its declaration made 3, not an nn.Module"),
        (lambda c: 1 / 0, "its declaration failed: ZeroDivisionError"),
    ],
)
def test_bad_declarations_are_refused_naming_the_label(body: Callable[[Chooser], Any], match: str) -> None:
    with pytest.raises(DeclarationError, match=match) as info:
        space_of(body).declaration  # noqa: B018 - reading it is the check
    assert "\n" not in str(info.value)


def test_candidates_whose_shapes_differ_are_refused_by_the_supernet_naming_both() -> None:
    space = space_of(
        lambda c: c.layer("op", {"narrow": lambda: nn.Linear(4, 8), "wide": lambda: nn.Linear(4, 16)})
    )
    space.build(space.sample(random.Random(0)))  # each network on its own is fine
    supernet = space.supernet()
    with pytest.raises(
        DeclarationError, match=r"'op': candidates 'narrow' and 'wide' .* \(N, 8\) and \(N, 16\)"
    ):
        supernet(torch.randn(2, 4))


def test_a_choice_made_only_for_some_values_of_another_is_refused_by_name() -> None:
    def body(c: Chooser) -> nn.Module:
        k = c.choice("k", [1, 2])
        return nn.Linear(4, c.width("w", [4, 8]) if k == 2 else 4)

    space = space_of(body)
    g = space.parse("k=2")
    with pytest.raises(DeclarationError, match="choice 'w' was not made"):
        space.build(g)


def test_options_a_declaration_does_not_take_are_refused_as_python_refuses_them() -> None:
    space = space_of(lambda c: nn.Linear(4, c.width("w", [4, 8])))
    with pytest.raises(TypeError, match="unexpected keyword argument 'C' \\(space 'bad' takes no options\\)"):
        space.build(space.sample(random.Random(0)), C=8)
    options = list(inspect.signature(OneStage.build).parameters)
    assert options == ["self", "g", "in_channels", "num_classes"], "build's signature names the options"
