"""Flags that take no value show none in any command's ``--help`` (no ``--json <bool>``)."""

from __future__ import annotations

from nasforge.kernel.registry import load_registry
from nasforge.tools.cli import app


def _commands() -> list[str]:
    core = [info.name or info.callback.__name__ for info in app.registered_commands if info.callback]
    return sorted({*core, *load_registry().names("command")})


def test_no_help_labels_a_flag_bool(cli) -> None:
    helps = {"nasforge": cli("--help", ok=True).out}
    helps |= {name: cli(name, "--help", ok=True).out for name in _commands()}
    assert {"search", "train", "export", "insight"} <= helps.keys()
    labelled = [name for name, text in helps.items() if "<bool>" in text]
    assert labelled == []
    assert "--json" in helps["search"]
