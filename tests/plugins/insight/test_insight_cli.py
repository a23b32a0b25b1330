"""``nasforge insight`` (issue 14, step 5): the command, its page, and the page in a real
headless browser.

The browser is the distribution's Chromium, driven from the command line (``--dump-dom``
after the page's load event, ``--screenshot``). Without it the browser test is skipped,
unless ``NASFORGE_REQUIRE_BROWSER=1`` (CI sets it after installing Chromium): then a
missing browser fails the test. ``NASFORGE_INSIGHT_SCREENSHOT=PATH`` keeps a copy of the
screenshot for a person to look at.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from nasforge_insight.published_cells import PUBLISHED
from tests.cli_run import run_main
from tests.headless_browser import find_browser, headless

WIDE = "|nor_conv_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|"
CHAIN = "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|nor_conv_3x3~2|"
# NASNet's cell with one op of NASNet's own search space that no registered space builds
# (5x5 max pooling): a subject of cell text only, which gets the cell diagnostics alone
TEXT_ONLY = PUBLISHED["NASNet"].replace(
    "('sep_conv_3x3', 1), ('skip_connect', 1)]", "('max_pool_5x5', 1), ('skip_connect', 1)]"
)
SMALL = ["--build-option", "C=4", "--build-option", "N=1", "--epochs", "2", "--limit", "240"]
SMALL += ["--samples", "32", "--grid", "3", "--seeds", "0,1"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("insight") / "report"
    argv = [
        "insight",
        WIDE,
        CHAIN,
        TEXT_ONLY,
        "--label",
        "wide",
        "--label",
        "chain",
        "--label",
        "text",
        *SMALL,
    ]
    code, stdout, stderr = run_main(*argv, "--out", out, "--json", "-q", "--device", "cpu")
    assert code == 0, stderr
    return out, json.loads(stdout)


@pytest.mark.slow
def test_the_command_writes_page_figures_and_json(report) -> None:
    out, doc = report
    assert doc["schema"] == "nasforge.insight/1"
    assert PUBLISHED["NASNet"] != TEXT_ONLY
    assert [g["label"] for g in doc["genotypes"]] == ["wide", "chain", "text"]
    wide, chain, nasnet = doc["genotypes"]
    assert (wide["cells"][0]["width"], wide["cells"][0]["depth"]) == (2.0, 2)
    assert (chain["cells"][0]["width"], chain["cells"][0]["depth"]) == (1.0, 3)
    assert [(c["width"], c["depth"]) for c in nasnet["cells"]] == [(5.0, 2), (3.5, 3)]
    assert nasnet["space"] is None and nasnet["convergence"] is None
    assert len(wide["curves"]) == 2 and wide["gradient_variance_trained"]["value"] > 0
    assert len(wide["landscape"]["losses"]) == 3
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == [
        "01-wide-landscape.png",
        "02-chain-landscape.png",
        "convergence.png",
        "gradient-variance.png",
    ]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count('<img class="figure"') == 4 and page.count("data:image/png;base64,") == 4
    assert "http://" not in page and "https://" not in page  # static: nothing to fetch
    assert json.loads((out / "report.json").read_text()) == doc  # the file is the printed document


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    code, _, err = run_main("insight", "not-a-genotype", "--out", tmp_path / "r")
    assert code == 2 and "no space's genotype" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_main("insight", WIDE, "--seeds", "a,b", "--out", tmp_path / "r")
    assert code == 2 and "--seeds" in err
    code, _, err = run_main("insight", WIDE, CHAIN, "--build-option", "C=0", "--out", tmp_path / "r")
    assert code == 2 and "C must be" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()  # refused before any training or writing
    code, _, err = run_main("insight", WIDE, "--device", "cuda:99", "--out", tmp_path / "r")
    assert code == 2 and "cuda:99" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_main("insight", WIDE, "--limit", "4", "--out", tmp_path / "r")
    assert code == 2 and "at least 2 held-out" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_every_figure_renders_in_a_headless_browser(report, tmp_path: Path) -> None:
    browser = find_browser()
    assert browser is not None
    out, _ = report
    url = (out / "index.html").resolve().as_uri()
    dom = headless(browser, tmp_path / "profile", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    check = re.search(r'id="render-check"[^>]*>', dom.stdout.decode())
    assert check is not None, "the page's load script did not run"
    rendered = re.search(r'data-rendered="(\d+)"', check.group(0))
    total = re.search(r'data-total="(\d+)"', check.group(0))
    assert rendered and total and rendered.group(1) == total.group(1) == "4"

    shot = tmp_path / "insight.png"
    done = headless(browser, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,1900", url)
    assert done.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    from PIL import Image

    with Image.open(shot) as img:
        assert img.size == (1400, 1900)
        colours = img.convert("RGB").resize((350, 475)).getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200  # figures, not a blank or error page
    keep = os.environ.get("NASFORGE_INSIGHT_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


@pytest.mark.slow
def test_space_qualified_build_options_reach_their_space_alone(tmp_path: Path) -> None:
    """An nb201 cell (N=...) and a DARTS cell (layers=...) on one page: ``space:key=value``
    goes to that space's networks, an unqualified key to every one."""
    from nasforge_insight.report import build_options

    build = {"C": 4, "nb201:N": 1, "darts:layers": 3, "darts:C": 6}
    assert build_options(build, "nb201") == {"C": 4, "N": 1}
    assert build_options(build, "darts") == {"C": 6, "layers": 3}  # the qualified key wins
    argv = ["insight", "DARTS_V2", WIDE, "--build-option", "C=4", "--build-option", "nb201:N=1"]
    argv += ["--build-option", "darts:layers=3", "--build-option", "darts:auxiliary=false"]
    argv += ["--epochs", "1", "--limit", "120", "--samples", "8", "--grid", "2"]
    code, stdout, stderr = run_main(*argv, "--out", tmp_path / "r", "--json", "-q")
    assert code == 0, stderr
    darts, nb201 = json.loads(stdout)["genotypes"]
    assert (darts["space"], nb201["space"]) == ("darts", "nb201")
    assert darts["parameters"] != nb201["parameters"] and min(darts["parameters"], nb201["parameters"]) > 0
    # unqualified, N reaches the DARTS network too, which refuses it: the reason the form exists
    code, _, err = run_main(*argv[:3], "--build-option", "N=1", "--out", tmp_path / "s")
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run_main(*argv[:3], "--build-option", "nasnet-cells:layers=3", "--out", tmp_path / "t")
    assert code == 2 and "no genotype here is built by it" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists() and not (tmp_path / "t").exists()
