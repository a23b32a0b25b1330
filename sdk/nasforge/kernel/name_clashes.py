"""Two plugins that register one name, and what the bare name then means.

Every component can be named with its owner, ``plugin:name`` (``zerocost:synflow``,
``trial:synflow``): that always means the one plugin's component. A bare name that two or
more plugins register is a :class:`NameClash`. Where one of them is first-party (shipped
with nasforge), the bare name keeps meaning that one, so that installing a package never
changes what an existing command or script runs; ``nasforge plugins`` warns of the clash
and exits 1. Where none is, the bare name is refused in one line that lists the qualified
names to choose from.
"""

from __future__ import annotations

import attrs

from nasforge.kernel.errors import UnknownNameError


def qualified_name(plugin: str, name: str) -> str:
    """A component's name with its owner: ``plugin:name``."""
    return f"{plugin}:{name}"


@attrs.frozen
class NameClash:
    """A bare name several plugins register (``owners`` in registration order)."""

    kind: str
    name: str
    owners: tuple[str, ...]
    #: The plugin the bare name means (the first-party one), or None: the bare name is refused.
    default: str | None

    @property
    def qualified(self) -> list[str]:
        return [qualified_name(owner, self.name) for owner in self.owners]

    def line(self) -> str:
        """The clash in one line, as ``nasforge plugins`` warns of it."""
        owners = " and ".join(f"'{o}'" for o in self.owners)
        head = f"{self.kind} '{self.name}' is registered by plugins {owners}"
        if self.default is None:
            return f"{head}; the bare name is refused: name one of {', '.join(self.qualified)}"
        others = ", ".join(q for o, q in zip(self.owners, self.qualified, strict=True) if o != self.default)
        return (
            f"{head}; kept the one from '{self.default}' (first-party) for the bare name; "
            f"{others} names the other"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "name": self.name,
            "qualified": self.qualified,
            "default": None if self.default is None else qualified_name(self.default, self.name),
        }


class AmbiguousNameError(UnknownNameError):
    """A bare name several plugins register, none of them first-party: the message lists
    the qualified names to choose from (one line)."""

    def __init__(self, word: str, clash: NameClash) -> None:
        super().__init__(word, clash.name, clash.qualified)
        self.args = (
            f"{word} '{clash.name}' is registered by {len(clash.owners)} plugins: "
            f"name one of {', '.join(clash.qualified)}",
        )


__all__ = ["AmbiguousNameError", "NameClash", "qualified_name"]
