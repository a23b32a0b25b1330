"""The discrete description of one architecture.

A :class:`Genotype` is deliberately space-agnostic: a space name, a space version and a
flat tuple of choices (operation names or integer indices). Keeping it flat and hashable
lets strategies deduplicate, journals serialise and safetensors store any space's
genotypes the same way; the space that owns it gives it its canonical string form
(``SearchSpace.format``/``parse``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from nasforge.kernel.errors import InvalidGenotypeError, show

if TYPE_CHECKING:  # torch loads when a genotype becomes tensors, not with the contracts
    import torch

Choice = str | int

TENSOR_KEY = "choices"
KIND_KEY = "choice_is_name"


class GenotypeTypeError(InvalidGenotypeError, TypeError):
    """A genotype's field of the wrong type: the library's error, and still a TypeError."""


class GenotypeJsonError(InvalidGenotypeError):
    """A genotype's JSON form that is malformed (not what :meth:`Genotype.to_json` writes)."""


def _check_choices(_inst: Any, _attr: attrs.Attribute, value: tuple) -> None:
    for c in value:
        if isinstance(c, bool) or not isinstance(c, str | int):
            raise GenotypeTypeError(f"genotype choices must be str or int, got {show(c)}")


def _as_choices(value: Any) -> tuple[Any, ...]:
    """The choices as a tuple, from any ordered sequence (a list, a tuple, a generator)."""
    if isinstance(value, str | bytes | Mapping | set | frozenset) or not isinstance(value, Iterable):
        raise GenotypeTypeError(f"genotype choices must be a list, got {show(value)}")
    return tuple(value)


def _text(_inst: Any, attr: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str):
        raise GenotypeTypeError(f"Genotype.{attr.name} must be a string, got {show(value)}")


def _decode(code: Any, kind: Any, names: list[str]) -> Choice:
    """One choice from its code and kind flag (1: an index into ``names``, 0: the integer itself)."""
    if isinstance(code, bool) or not isinstance(code, int) or kind not in (0, 1):
        raise InvalidGenotypeError(f"genotype choice {code!r} of kind {kind!r} is not a flat integer code")
    if not kind:
        return code
    if not 0 <= code < len(names):
        raise InvalidGenotypeError(f"name code {code} out of range for {len(names)} names")
    return names[code]


def _nonempty(_inst: Any, attr: attrs.Attribute, value: str) -> None:
    if not value:
        raise InvalidGenotypeError(f"Genotype.{attr.name} must not be empty")


@attrs.frozen(order=False)
class Genotype:
    """One point of a search space: immutable, hashable, comparable."""

    space: str = attrs.field(validator=[_text, _nonempty])
    version: str = attrs.field(validator=[_text, _nonempty])
    choices: tuple[Choice, ...] = attrs.field(converter=_as_choices, validator=_check_choices)

    def to_tensors(self) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
        """Lossless tensor form for safetensors: integer codes plus a name vocabulary.

        Names are coded by their index in the sorted vocabulary, which travels in the
        metadata; a parallel flag tensor tells names from plain integers.
        """
        import torch

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
        """Inverse of :meth:`to_tensors`; raises :class:`InvalidGenotypeError` on inconsistent input.

        Every caller gets the same guard, not only the file loader: a name code of -1 would
        otherwise index the vocabulary from the end (Python's negative index) and decode
        silently as the last name. The error is a ``ValueError`` too, and says it in one line.
        """
        try:
            codes = tensors[TENSOR_KEY].tolist()
            kinds = tensors[KIND_KEY].tolist()
            names = json.loads(meta["names"])
            space, version = meta["space"], meta["version"]
        except KeyError as exc:
            raise InvalidGenotypeError(f"not a nasforge genotype: missing {exc}") from exc
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InvalidGenotypeError(f"genotype names metadata is not JSON ({exc})") from exc
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidGenotypeError("genotype names metadata is not a list of strings")
        if not isinstance(codes, list) or not isinstance(kinds, list) or len(codes) != len(kinds):
            raise InvalidGenotypeError("genotype tensors disagree in length")
        choices = tuple(_decode(c, k, names) for c, k in zip(codes, kinds, strict=True))
        return cls(space=space, version=version, choices=choices)

    def to_json(self) -> dict[str, Any]:
        return {"space": self.space, "version": self.version, "choices": list(self.choices)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Genotype:
        """The genotype of a JSON object ``{space, version, choices}``; anything else (a
        journal edited by hand, a request) is a :class:`GenotypeJsonError` in one line."""
        if not isinstance(data, dict):
            raise GenotypeJsonError(f"a genotype is a JSON object, got {show(data)}")
        missing = [k for k in ("space", "version", "choices") if k not in data]
        if missing:
            keys = "the key" if len(missing) == 1 else "the keys"
            raise GenotypeJsonError(f"genotype {show(data)} lacks {keys} {', '.join(map(repr, missing))}")
        try:
            return cls(space=data["space"], version=data["version"], choices=data["choices"])
        except InvalidGenotypeError as exc:
            raise GenotypeJsonError(str(exc)) from exc
