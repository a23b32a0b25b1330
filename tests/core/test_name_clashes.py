"""Names with an owner: ``plugin:name`` always means that plugin's component, and a bare
name two plugins register is a clash ``nasforge plugins`` reports (stderr, exit 1, and
``--json``'s ``clashes``). The first-party component keeps the bare name; a clash of two
third-party plugins refuses it in one line listing the qualified names."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from torch import nn

from nasforge import Metric, MetricInfo, hookimpl
from nasforge.kernel.metric import Batch, MetricContext
from nasforge.kernel.name_clashes import AmbiguousNameError
from nasforge.kernel.registry import load_registry
from tests.cli_run import one_line


class ParameterSynflow(Metric):
    """Not synaptic flow: a network's parameter count, under the name synflow."""

    name: ClassVar[str] = "synflow"
    info = MetricInfo(name="synflow", needs_labels=False, needs_data=False, description="parameters")

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        return float(sum(p.numel() for p in model.parameters()))


class Trial:
    """A third-party package whose metric reuses the first-party name ``synflow``."""

    __name__ = "trial"

    @hookimpl
    def nasforge_register_metrics(self) -> list[type]:
        return [ParameterSynflow]


class Width(Metric):
    name: ClassVar[str] = "width"
    info = MetricInfo(name="width", needs_labels=False, needs_data=False)

    def score(self, model: nn.Module, batch: Batch, *, ctx: MetricContext) -> float:
        return 1.0


class Alpha:
    __name__ = "alpha"

    @hookimpl
    def nasforge_register_metrics(self) -> list[type]:
        return [Width]


class Beta:
    __name__ = "beta"

    @hookimpl
    def nasforge_register_metrics(self) -> list[type]:
        return [Width]


def _score(cli: Any, metric: str) -> float:
    run = cli("score", "--space", "nb201", "-m", metric, "--sample", "2", "--json", ok=True)
    (row, *_) = run.json()["rows"]
    return float(row["scores"]["synflow"]["value"])


def test_each_qualified_name_uses_its_own_and_the_bare_name_the_first_party_one(
    monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    registry = load_registry(extra_plugins=[Trial()])
    assert registry.get("metric", "trial:synflow") is ParameterSynflow
    first_party = registry.get("metric", "zerocost:synflow")
    assert first_party is not ParameterSynflow and registry.get("metric", "synflow") is first_party
    assert registry.origin("metric", "trial:synflow") == "trial"
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    theirs, ours, bare = _score(cli, "trial:synflow"), _score(cli, "zerocost:synflow"), _score(cli, "synflow")
    assert theirs < 1e7 < ours, "a parameter count against synaptic flow (the cache keeps them apart)"
    assert bare == ours, "the docs: a bare name keeps meaning the first-party component"

    listing = cli("plugins")
    assert listing.code == 1
    line = one_line(listing.err)
    assert "metric 'synflow' is registered by plugins 'zerocost' and 'trial'" in line
    assert "trial:synflow" in line
    document = cli("plugins", "--json")
    assert document.code == 1
    assert document.json()["clashes"] == [
        {
            "kind": "metric",
            "name": "synflow",
            "qualified": ["zerocost:synflow", "trial:synflow"],
            "default": "zerocost:synflow",
        }
    ]


def test_a_clash_of_two_third_party_plugins_refuses_the_bare_name(
    monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    registry = load_registry(extra_plugins=[Alpha(), Beta()])
    with pytest.raises(AmbiguousNameError, match=r"name one of alpha:width, beta:width$"):
        registry.get("metric", "width")
    assert registry.get("metric", "beta:width") is Width and not registry.has("metric", "width")
    assert {"alpha:width", "beta:width"} <= set(registry.names("metric")) and "width" not in registry.names(
        "metric"
    )
    monkeypatch.setattr("nasforge.tools.cli.get_registry", lambda: registry)
    cli("score", "--space", "nb201", "-m", "width", "--sample", "2").assert_one_line_error(
        "metric 'width' is registered by 2 plugins: name one of alpha:width, beta:width"
    )
    assert cli("score", "--space", "nb201", "-m", "beta:width", "--sample", "2").code == 0


def test_an_installation_without_clashes_reports_none(cli: Any) -> None:
    document = cli("plugins", "--json")
    assert document.code == 0, document.err
    assert document.json()["clashes"] == []
