"""``nasforge report`` (issue 16): the page of a multi-objective NAS-Bench-201 run, of a
single-objective run that a stop rule ended and of multi-fidelity runs on digits
(Hyperband; the median pruner's stopped trials), checked in a real headless browser.

The browser is the distribution's Chromium driven from the command line, as in the
insight test: a copy of the page gets a check script that, after the load event, counts
the figures that decoded (``naturalWidth > 0``) and clicks table headers, and writes what
it saw into the DOM, which ``--dump-dom`` returns. Without Chromium the browser tests are
skipped unless ``NASFORGE_REQUIRE_BROWSER=1`` (CI). ``NASFORGE_REPORT_SCREENSHOT=PATH``
keeps the screenshot for a person to look at.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from nasforge import Budget
from nasforge.run.experiment import Experiment
from nasforge.run.spec import ExperimentSpec
from tests.cli_run import run_main
from tests.headless_browser import find_browser, headless

#: Injected into a copy of the page: what the browser made of it, as JSON in the DOM.
CHECK = """
<pre id="browser-check"></pre>
<script>
window.addEventListener('load', function () {
  var out = {figures: 0, rendered: 0, sorts: {}};
  document.querySelectorAll('img.figure').forEach(function (img) {
    out.figures += 1;
    if (img.complete && img.naturalWidth > 0) { out.rendered += 1; }
  });
  var table = document.getElementById('trials');
  var heads = Array.prototype.slice.call(table.querySelectorAll('thead th'));
  function column(i) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      var c = r.cells[i];
      return c.hasAttribute('data-value') ? c.getAttribute('data-value') : c.textContent;
    });
  }
  __CLICKS__.forEach(function (name) {
    var i = heads.findIndex(function (h) { return h.textContent === name; });
    heads[i].click();
    out.sorts[name + ' 1'] = {order: column(i), aria: heads[i].getAttribute('aria-sort'), first: column(0)};
    heads[i].click();
    out.sorts[name + ' 2'] = {order: column(i), aria: heads[i].getAttribute('aria-sort'), first: column(0)};
  });
  document.getElementById('browser-check').textContent = JSON.stringify(out);
});
</script>
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report")
    multi = ExperimentSpec(
        space="nb201",
        strategy="nsga2",
        evaluator="nb201-table",
        budget=Budget(trials=60),
        benchmark_dataset="cifar10",
        objectives=["valid_accuracy:max", "latency_ms:min"],
        strategy_options={"population_size": 12},
    )
    Experiment.from_spec(multi, run_dir=root / "multi", progress=False).run()
    single = ExperimentSpec(
        space="toy",
        strategy="rea",
        evaluator="toy",
        budget=Budget(trials=200),
        seed=3,
        strategy_options={"population_size": 6, "sample_size": 3},
        stop=["plateau:10"],
    )
    Experiment.from_spec(single, run_dir=root / "single", progress=False).run()
    # Multi-fidelity runs on digits, through the CLI: Hyperband (rungs of 1 and 3 epochs) and
    # the median pruner (trials stopped early) with tiny NB201 cells.
    digits = ["--space", "nb201", "--evaluator", "short-train", "--dataset", "digits", "-q"]
    digits += ["--evaluator-option", "epochs=3", "--evaluator-option", 'build={"C": 4, "N": 1}']
    for name, strategy in (
        ("hyperband", ["--strategy", "hyperband", "-o", "brackets=2", "--budget-trials", "100"]),
        (
            "median",
            ["--strategy", "median", "-o", "strategy=random", "-o", "warmup=2", "--budget-trials", "8"],
        ),
    ):
        code, _, err = run_main("--threads", "1", "search", *digits, *strategy, "--run-dir", root / name)
        assert code == 0, err
    out = {}
    for name in ("multi", "single", "hyperband", "median"):
        code, _, err = run_main("report", root / name, "--out", root / f"{name}.html")
        assert code == 0, err
        out[name] = root / f"{name}.html"
    return out


@pytest.mark.slow
def test_the_page_is_static_and_lists_every_trial(pages) -> None:
    page = pages["multi"].read_text(encoding="utf-8")
    assert page.count('<img class="figure"') == 3 and page.count("data:image/png;base64,") == 3
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    assert page.count("<tr class=") == 60
    for heading in ("Anytime curve", "Pareto front", "Best cell", "Trials"):
        assert f"<h2>{heading}</h2>" in page
    assert '<tr class="best">' in page and '<tr class="front">' in page
    single = pages["single"].read_text(encoding="utf-8")
    assert single.count('<img class="figure"') == 1  # the anytime curve; one objective, no front
    assert "exposes no cell graph" in single  # said on the page, not silently left out
    assert "Stopped early after trial" in single and "plateau:10" in single
    assert not list(pages["multi"].parent.glob("*.part"))  # written atomically


def test_a_multi_fidelity_run_shows_budgets_curves_and_stops(pages) -> None:
    page = pages["hyperband"].read_text(encoding="utf-8")
    for heading in ("Anytime curve", "Learning curves", "Best cell", "Trials"):
        assert f"<h2>{heading}</h2>" in page
    assert page.count('<img class="figure"') == 3
    assert ">epochs</th>" in page and ">epochs trained</th>" in page
    # Brackets 3 at 1 epoch -> 1 at 3, then 2 at 3: 3 + 3 + 6 epochs.
    assert "<dt>epochs spent</dt><dd>12 in all; full budget 3 a trial, reached by 3 trials</dd>" in page
    rows = re.findall(r'<tr class="(\w+)">(.*?)</tr>', page, flags=re.S)
    assert len(rows) == 6
    budgets = [int(re.findall(r'data-value="([^"]+)"', cells)[-4]) for _, cells in rows]
    assert sorted(budgets) == [1, 1, 1, 3, 3, 3]
    (best_cells,) = [cells for status, cells in rows if status == "best"]
    assert re.findall(r'data-value="([^"]+)"', best_cells)[-4] == "3"  # chosen among full trainings

    median = pages["median"].read_text(encoding="utf-8")
    stopped = [
        cells
        for status, cells in re.findall(r'<tr class="(\w+)">(.*?)</tr>', median, flags=re.S)
        if status == "stopped"
    ]
    assert stopped, "the median pruner stopped no trial: the page cannot show one"
    for cells in stopped:
        asked, trained = (int(v) for v in re.findall(r'data-value="([^"]+)"', cells)[-4:-2])
        assert trained < asked == 3
    assert f"{len(stopped)} stopped early" in median


def test_bad_input_is_one_line(tmp_path: Path, pages) -> None:
    run = pages["multi"].parent / "multi"
    for argv, words in [
        (("report", tmp_path / "nowhere", "--out", tmp_path / "r.html"), "no run directory"),
        (("report", tmp_path, "--out", tmp_path / "r.html"), "holds no nasforge run"),
        (("report", pages["multi"], "--out", tmp_path / "r.html"), "is not a run directory"),
        (("report", run, "--out", tmp_path / "r.png"), "give a path ending in .html"),
        (("report", run, "--out", tmp_path), "it is a directory"),
    ]:
        code, _, err = run_main(*argv)
        assert code == 2 and words in err, err
        assert len(err.strip().splitlines()) == 1, err
    (tmp_path / "journal.jsonl").write_text("not a journal\n")
    code, _, err = run_main("report", tmp_path, "--out", tmp_path / "r.html")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def _in_browser(page: Path, clicks: list[str], tmp_path: Path) -> dict:
    checked = tmp_path / f"checked-{page.name}"
    script = CHECK.replace("__CLICKS__", json.dumps(clicks))
    checked.write_text(
        page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8"
    )
    dom = headless(find_browser(), tmp_path / "profile", "--dump-dom", checked.resolve().as_uri())
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    found = re.search(r'<pre id="browser-check">(.*?)</pre>', dom.stdout.decode(), flags=re.S)
    assert found is not None and found.group(1), "the check script did not run"
    return json.loads(html.unescape(found.group(1)))


def _numbers(values: list[str]) -> list[float]:
    return [float(v) for v in values]


def _ascending(values: list[float]) -> bool:
    shown = [v for v in values if not math.isnan(v)]
    return shown == sorted(shown) and all(math.isnan(v) for v in values[len(shown) :])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["multi", "single", "hyperband"])
def test_figures_render_and_the_table_sorts_in_a_headless_browser(pages, name: str, tmp_path: Path) -> None:
    objective = "score" if name == "single" else "valid_accuracy"
    seen = _in_browser(pages[name], [objective, "genotype", "#"], tmp_path)
    assert seen["figures"] == (1 if name == "single" else 3)
    assert seen["rendered"] == seen["figures"]
    up, down = seen["sorts"][f"{objective} 1"], seen["sorts"][f"{objective} 2"]
    assert up["aria"] == "ascending" and _ascending(_numbers(up["order"]))
    assert down["aria"] == "descending" and _numbers(down["order"]) == sorted(
        _numbers(down["order"]), reverse=True
    )
    assert _numbers(up["first"]) != sorted(_numbers(up["first"]))  # the rows moved, not one column
    texts = seen["sorts"]["genotype 1"]["order"]
    assert [t.lower() for t in texts] == sorted(t.lower() for t in texts)
    assert _numbers(seen["sorts"]["# 1"]["order"]) == sorted(_numbers(seen["sorts"]["# 1"]["order"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["multi", "hyperband"])
def test_screenshot_of_the_report(pages, name: str, tmp_path: Path) -> None:
    browser = find_browser()
    shot = tmp_path / "report.png"
    url = pages[name].resolve().as_uri()
    done = headless(browser, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,2600", url)
    assert done.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    from PIL import Image

    with Image.open(shot) as img:
        assert img.size == (1400, 2600)
        colours = img.convert("RGB").resize((350, 650)).getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200  # figures, not a blank or error page
    keep = os.environ.get("NASFORGE_REPORT_SCREENSHOT")
    if keep:  # one file a report: PATH-multi.png, PATH-hyperband.png
        base = Path(keep)
        shutil.copyfile(shot, base.with_name(f"{base.stem}-{name}{base.suffix or '.png'}"))


@pytest.mark.slow
def test_an_unfinished_run_and_a_one_shot_run_are_reported(tmp_path: Path, pages) -> None:
    run = pages["multi"].parent / "multi"
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (run / "journal.jsonl").read_text().splitlines(keepends=True)
    (cut / "journal.jsonl").write_text("".join(lines[:21]))  # header + 20 trials, no end record
    code, _, err = run_main("report", cut, "--out", tmp_path / "cut.html")
    assert code == 0, err
    page = (tmp_path / "cut.html").read_text(encoding="utf-8")
    assert "unfinished: no end record yet" in page and page.count("<tr class=") == 20

    tiny = ["-o", 'supernet={"C": 4, "N": 1}', "-o", "epochs=2", "-o", "max_batches=2", "-o", "batch_size=16"]
    code, _, err = run_main(
        "search", "--space", "nb201", "--strategy", "darts", "-q", *tiny, "--run-dir", tmp_path / "os"
    )
    assert code == 0, err
    code, _, err = run_main("report", tmp_path / "os", "--out", tmp_path / "os.html")
    assert code == 0, err
    page = (tmp_path / "os.html").read_text(encoding="utf-8")
    assert "2 epochs" in page and "<dt>chosen</dt>" in page
    assert page.count('<img class="figure"') == 2  # the curve and the derived cell


def test_inspect_tells_a_multi_fidelity_runs_budget(pages) -> None:
    root = pages["hyperband"].parent
    code, out, err = run_main("inspect", root / "hyperband", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["trials_by_fidelity"] == "3 at 1, 3 at 3" and info["fidelity_spent"] == 12
    assert info["stopped_early"] == 0
    code, out, err = run_main("inspect", root / "median", "--json")
    assert code == 0, err
    median = json.loads(out)
    assert median["stopped_early"] > 0 and median["trials_by_fidelity"] == "8 at full"
    code, out, err = run_main("inspect", root / "multi", "--json")
    assert code == 0 and "trials_by_fidelity" not in json.loads(out)  # a single-budget run reads as before
