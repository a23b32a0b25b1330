"""The discrete description of one architecture.

A :class:`Genotype` is deliberately space-agnostic: a space name, a space version and a
flat tuple of choices (operation names or integer indices). Keeping it flat and hashable
lets strategies deduplicate, journals serialise and safetensors store any space's
genotypes the same way; the space that owns it gives it its canonical string form
(``SearchSpace.format``/``parse``).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import torch

Choice = str | int

TENSOR_KEY = "choices"
KIND_KEY = "choice_is_name"


def _check_choices(_inst: Any, _attr: attrs.Attribute, value: tuple) -> None:
    for c in value:
        if isinstance(c, bool) or not isinstance(c, str | int):
            raise TypeError(f"genotype choices must be str or int, got {c!r}")


def _nonempty(_inst: Any, attr: attrs.Attribute, value: str) -> None:
    if not value:
        raise ValueError(f"Genotype.{attr.name} must not be empty")


@attrs.frozen(order=False)
class Genotype:
    """One point of a search space: immutable, hashable, comparable."""

    space: str = attrs.field(validator=[attrs.validators.instance_of(str), _nonempty])
    version: str = attrs.field(validator=[attrs.validators.instance_of(str), _nonempty])
    choices: tuple[Choice, ...] = attrs.field(converter=tuple, validator=_check_choices)

    def to_tensors(self) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
        """Lossless tensor form for safetensors: integer codes plus a name vocabulary.

        Names are coded by their index in the sorted vocabulary, which travels in the
        metadata; a parallel flag tensor tells names from plain integers.
        """
        names = sorted({c for c in self.choices if isinstance(c, str)})
        index = {n: i for i, n in enumerate(names)}
        codes = [index[c] if isinstance(c, str) else c for c in self.choices]
        kinds = [isinstance(c, str) for c in self.choices]
        tensors = {
            TENSOR_KEY: torch.tensor(codes, dtype=torch.int64).reshape(len(codes)),
            KIND_KEY: torch.tensor(kinds, dtype=torch.uint8).reshape(len(kinds)),
        }
        meta = {"space": self.space, "version": self.version, "names": json.dumps(names)}
        return tensors, meta

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> Genotype:
        """Inverse of :meth:`to_tensors`; raises ``ValueError`` on inconsistent input."""
        try:
            codes = tensors[TENSOR_KEY].tolist()
            kinds = tensors[KIND_KEY].tolist()
            names = json.loads(meta["names"])
            space, version = meta["space"], meta["version"]
        except (KeyError, json.JSONDecodeError) as exc:
            raise ValueError(f"not a nasforge genotype: missing {exc}") from exc
        if len(codes) != len(kinds):
            raise ValueError("genotype tensors disagree in length")
        try:
            choices = tuple(names[c] if k else int(c) for c, k in zip(codes, kinds, strict=True))
        except IndexError as exc:
            raise ValueError("genotype names out of range") from exc
        return cls(space=space, version=version, choices=choices)

    def to_json(self) -> dict[str, Any]:
        return {"space": self.space, "version": self.version, "choices": list(self.choices)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Genotype:
        return cls(space=data["space"], version=data["version"], choices=tuple(data["choices"]))
