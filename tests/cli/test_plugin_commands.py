"""Plugins own their commands (issue 9): mounted through the command hook, gone with the plugin."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer

from nasforge import hookimpl
from nasforge.kernel.plugin_command import PluginCommand
from nasforge.kernel.registry import load_registry
from nasforge.tools.cli import app as core_app
from nasforge.tools.cli.plugin_commands import mount_plugin_commands


def _fresh_app() -> typer.Typer:
    """A copy of the core CLI without any plugin command mounted on it."""
    app = typer.Typer()
    for info in core_app.registered_commands:
        if info.callback is not None and info.callback.__module__.startswith("nasforge.tools.cli"):
            app.registered_commands.append(info)
    return app


def _command_names(app: typer.Typer) -> set[str]:
    return {info.name or info.callback.__name__ for info in app.registered_commands}


def test_the_insight_command_comes_from_the_insight_plugin(cli) -> None:
    registry = load_registry()
    assert registry.origin("command", "insight") == "insight"
    result = cli("insight", "--help", ok=True)
    assert "insight" in result.out.lower()


def test_without_the_insight_plugin_there_is_no_insight_command() -> None:
    without = load_registry(disabled=["insight"])  # the entry point is not loaded, as if uninstalled
    assert not without.has("command", "insight")
    app = _fresh_app()
    assert "insight" not in mount_plugin_commands(app, without)
    assert "insight" not in _command_names(app) and "search" in _command_names(app)


@pytest.mark.slow
def test_disabled_plugins_from_the_environment_in_a_fresh_process(tmp_path) -> None:
    env = {**os.environ, "NASFORGE_DISABLE_PLUGINS": "insight"}
    gone = subprocess.run(
        [sys.executable, "-m", "nasforge", "insight", "--help"], env=env, capture_output=True, text=True
    )
    assert gone.returncode == 2 and "No such command 'insight'" in gone.stderr
    env["NASFORGE_DISABLE_PLUGINS"] = ""
    there = subprocess.run(
        [sys.executable, "-m", "nasforge", "insight", "--help"], env=env, capture_output=True
    )
    assert there.returncode == 0


def test_a_plugin_whose_command_hook_raises_is_listed_failed_and_others_work(cli) -> None:
    class Broken:
        @hookimpl
        def nasforge_register_commands(self) -> list:
            raise ImportError("missing optional dependency")

    def hello() -> None:
        """Say hello."""
        print("hello from a plugin")

    class Hello:
        @hookimpl
        def nasforge_register_commands(self) -> list:
            return [PluginCommand("hello", hello)]

    registry = load_registry(extra_plugins=[Broken(), Hello()])
    broken = next(p for p in registry.plugins if "Broken" in p.module)
    assert not broken.ok and "missing optional dependency" in (broken.error or "")
    app = _fresh_app()
    mounted = mount_plugin_commands(app, registry)
    assert mounted == ["darts-compare", "darts-train", "hello", "insight"]
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["hello"])
    assert result.exit_code == 0 and "hello from a plugin" in result.output
    assert CliRunner().invoke(app, ["spaces", "--json"]).exit_code == 0


def test_a_plugin_command_cannot_replace_a_core_command() -> None:
    class Hijack:
        @hookimpl
        def nasforge_register_commands(self) -> list:
            return [PluginCommand("search", lambda: None)]

    registry = load_registry(entry_points=False, extra_plugins=[Hijack()])
    app = _fresh_app()
    assert mount_plugin_commands(app, registry) == []
    assert any("command 'search'" in c and "core command" in c for c in registry.conflicts)
