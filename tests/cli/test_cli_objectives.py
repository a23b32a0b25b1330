"""`--objective` and `--constraint` on the command line (issue 10): one-line refusals,
constrained runs on the NAS-Bench-201 table, and multi-objective runs whose front the
search prints, draws, resumes, exports and inspects the same way."""

from __future__ import annotations

import json

import pytest

from nasforge.kernel.objectives import SearchGoal
from nasforge.kernel.pareto import dominates
from nasforge.run.journal_file import journal_path
from nasforge.tools.export import load_genotype

TWO = ("--objective", "valid_accuracy:max", "--objective", "latency_ms:min")


def _search(cli, run_dir, *args, ok=True):
    return cli("search", "--run-dir", run_dir, "-q", "--json", *args, ok=ok)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--objective", "valid_accuracy"), "expected NAME:max or NAME:min"),
        (("--objective", "valid_accuracy:up"), "direction must be 'max' or 'min'"),
        (("--constraint", "latency_ms<12"), "expected NAME<=VALUE or NAME>=VALUE"),
        (("--constraint", "latency_ms<=inf"), "finite"),
        (("--constraint", "latency_ms<=soon"), "is no number"),
        (("--constraint", "latency<=12"), "did you mean 'latency_ms'?"),
        (("--objective", "accuracy:max"), "measures no 'accuracy'"),
        (("--strategy", "rea", *TWO), "optimises one objective, but the run names 2"),
        (("--strategy", "local", *TWO), "multi-objective strategies: mo-random, nsga2"),
        (("--objective", "valid_accuracy:max", "--objective", "valid_accuracy:min"), "named twice"),
        (("--strategy", "rea", "--plot", "front.png"), "--plot draws a Pareto front"),
        (("--strategy", "nsga2", *TWO, "--plot", "front.pgn"), "cannot write a plot as '.pgn'"),
    ],
)
def test_bad_objectives_and_constraints_are_one_line(cli, tmp_path, args, needle) -> None:
    run_dir = tmp_path / "run"
    _search(cli, run_dir, "--budget-trials", "5", *args, ok=False).assert_one_line_error(needle)
    assert not run_dir.exists(), "a refused run leaves nothing behind"


def test_a_one_shot_run_refuses_objectives_and_constraints(cli, tmp_path) -> None:
    run_dir = tmp_path / "run"
    result = cli("search", "--strategy", "darts", "--constraint", "x<=1", "-q", "--run-dir", run_dir)
    result.assert_one_line_error("'darts' is one-shot: objectives and constraints apply to ask/tell")
    assert not run_dir.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("strategy", "constraint", "name", "bound"),
    [
        ("rea", "latency_ms<=12", "latency_ms", 12.0),
        ("local", "latency_ms<=12", "latency_ms", 12.0),
        ("rea", "params_mb<=0.5", "params_mb", 0.5),
    ],
)
def test_a_constrained_run_reports_a_best_that_satisfies_it(
    cli, tmp_path, strategy, constraint, name, bound
) -> None:
    out = _search(
        cli, tmp_path / "r", "--strategy", strategy, "--constraint", constraint, "--budget-trials", "80"
    ).json()
    assert out["constraints"] == [constraint] and out["search_objectives"] == ["valid_accuracy:max"]
    assert out["objectives"][name] <= bound
    trials = [json.loads(line) for line in journal_path(tmp_path / "r").read_text().splitlines()]
    values = [t["result"]["objectives"] for t in trials if t["type"] == "trial"]
    assert any(v[name] > bound for v in values), "the constraint bit: some evaluated cells broke it"
    feasible = [v["valid_accuracy"] for v in values if v[name] <= bound]
    assert out["value"] == max(feasible), "the best is the best feasible cell, by validation"


def test_a_constrained_multi_objective_front_satisfies_every_constraint(cli, tmp_path) -> None:
    out = _search(
        cli,
        tmp_path / "r",
        "--strategy",
        "nsga2",
        *TWO,
        "--constraint",
        "params_mb<=0.5",
        "--constraint",
        "latency_ms<=12",
        "--budget-trials",
        "80",
    ).json()
    assert out["front"]
    for member in out["front"]:
        assert member["objectives"]["params_mb"] <= 0.5 and member["objectives"]["latency_ms"] <= 12
    assert out["objectives"]["params_mb"] <= 0.5 and out["objectives"]["latency_ms"] <= 12


def test_nothing_feasible_is_one_line_and_a_failure(cli, tmp_path) -> None:
    result = _search(cli, tmp_path / "r", "--constraint", "latency_ms<=1", "--budget-trials", "10", ok=False)
    result.assert_one_line_error("none of the 10 trials satisfied latency_ms<=1", "the nearest")


@pytest.fixture(scope="module")
def mo_dir(tmp_path_factory):
    """A finished nsga2 run on the table, shared by the checks below (made once, through the
    Python API, which the CLI runs on)."""
    from nasforge import api

    run_dir = tmp_path_factory.mktemp("mo") / "run"
    api.search(
        "nb201",
        "nsga2",
        objectives=["valid_accuracy:max", "latency_ms:min"],
        trials=60,
        strategy_options={"population_size": 10},
        run_dir=run_dir,
    )
    return run_dir


@pytest.fixture
def mo_run(cli, mo_dir):
    """(run directory, the JSON report of `nasforge resume` re-reading the ended run)."""
    return mo_dir, cli("resume", mo_dir, "-q", "--json", ok=True).json()


@pytest.mark.slow
def test_a_multi_objective_run_reports_its_front(mo_run) -> None:
    run_dir, out = mo_run
    goal = SearchGoal.of(["valid_accuracy:max", "latency_ms:min"])
    assert out["search_objectives"] == goal.objective_texts() and out["constraints"] == []
    front = out["front"]
    assert [m["member"] for m in front] == list(range(len(front))) and len(front) >= 3
    assert front[0]["genotype"] == out["best"], "best is the front's first member"
    vectors = [(m["objectives"]["valid_accuracy"], -m["objectives"]["latency_ms"]) for m in front]
    assert vectors == sorted(vectors, reverse=True)
    trials = [json.loads(line) for line in journal_path(run_dir).read_text().splitlines()]
    evaluated = [
        (t["result"]["objectives"]["valid_accuracy"], -t["result"]["objectives"]["latency_ms"])
        for t in trials
        if t["type"] == "trial"
    ]
    for v in vectors:  # brute force: nothing evaluated dominates a member, and every
        assert not any(dominates(e, v, [True, True]) for e in evaluated)
    undominated = {e for e in evaluated if not any(dominates(o, e, [True, True]) for o in evaluated)}
    assert undominated == set(vectors)  # non-dominated point is a member
    assert all("test_accuracy" in m["objectives"] for m in front), "the protocol's number rides along"
    assert out["plot"] == str(run_dir / "pareto.png") and (run_dir / "pareto.png").stat().st_size > 0


@pytest.mark.slow
def test_the_front_is_printed_as_a_table(cli, tmp_path) -> None:
    result = cli(
        "search",
        "--strategy",
        "mo-random",
        *TWO,
        "--budget-trials",
        "20",
        "-q",
        "--run-dir",
        tmp_path / "r",
        ok=True,
    )
    assert "Pareto front" in result.out and "test_accuracy" in result.out and "latency_ms ↓" in result.out


def test_an_explicit_plot_goes_where_asked(cli, tmp_path) -> None:
    out = _search(
        cli,
        tmp_path / "r",
        "--strategy",
        "mo-random",
        *TWO,
        "--budget-trials",
        "15",
        "--plot",
        tmp_path / "f.svg",
    ).json()
    assert out["plot"] == str(tmp_path / "f.svg") and (tmp_path / "f.svg").read_text().lstrip().startswith(
        "<?xml"
    )
    assert not (tmp_path / "r" / "pareto.png").exists()


@pytest.mark.slow
def test_resuming_a_multi_objective_run_gives_the_same_front(cli, mo_run, tmp_path) -> None:
    run_dir, out = mo_run
    lines = journal_path(run_dir).read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    journal_path(cut).write_text("".join(lines[: 1 + 25]))  # header + 25 trials: a killed run
    resumed = cli("resume", cut, "-q", "--json", ok=True).json()
    assert resumed["front"] == out["front"] and resumed["best"] == out["best"]
    again = cli("resume", run_dir, "-q", "--json", ok=True).json()  # an ended run is re-read
    assert again["front"] == out["front"]


def test_exporting_a_multi_objective_run(cli, mo_run, tmp_path) -> None:
    run_dir, out = mo_run
    k = len(out["front"]) - 1
    member = cli(
        "export", run_dir, "--member", k, "--no-onnx", "--out", tmp_path / "m", "--json", ok=True
    ).json()
    assert member["member"] == k and member["text"] == out["front"][k]["genotype"]
    from nasforge_nb201 import NB201Space

    space = NB201Space()
    assert space.format(load_genotype(tmp_path / "m" / "genotype.safetensors")) == out["front"][k]["genotype"]
    best = cli("export", run_dir, "--no-onnx", "--out", tmp_path / "b", "--json", ok=True).json()
    assert best["text"] == out["best"] == out["front"][0]["genotype"]
    cli(
        "export", run_dir, "--member", len(out["front"]), "--no-onnx", "--out", tmp_path / "x"
    ).assert_one_line_error(f"has {len(out['front'])} members")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_export_member_of_a_single_objective_run_is_refused(cli, tmp_path) -> None:
    _search(cli, tmp_path / "r", "--strategy", "random", "--budget-trials", "5")
    cli(
        "export", tmp_path / "r", "--member", "0", "--no-onnx", "--out", tmp_path / "x"
    ).assert_one_line_error("multi-objective run's front")


def test_inspecting_a_multi_objective_run(cli, mo_run) -> None:
    run_dir, out = mo_run
    info = cli("inspect", run_dir, "--json", ok=True).json()
    assert info["objectives"] == ["valid_accuracy:max", "latency_ms:min"] and info["constraints"] == []
    assert [(m["trial"], m["text"]) for m in info["front"]] == [
        (m["trial"], m["genotype"]) for m in out["front"]
    ]
    assert set(info["front"][0]["objectives"]) == {"valid_accuracy", "latency_ms", "test_accuracy"}
    text = cli("inspect", run_dir, ok=True).out
    assert "#0 trial" in text and "latency_ms:min" in text


@pytest.mark.slow
def test_an_ask_tell_export_is_built_for_the_training_data(cli, tmp_path) -> None:
    """Regression: the best of a short-train search was exported for 3x32x32 inputs and the
    default classes, not for the data it was trained on (digits: 1x8x8, 10 classes)."""
    import onnx

    out = tmp_path / "export"
    cli(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "short-train",
        "--train-data", "digits", "--evaluator-option", "epochs=1", "--build-option", "C=2",
        "--build-option", "N=1", "--budget-trials", "1", "-q", "--run-dir", tmp_path / "run",
        "--export", out, ok=True,
    )  # fmt: skip
    graph = onnx.load(out / "model.onnx").graph
    dims = [
        [d.dim_value or d.dim_param for d in t.type.tensor_type.shape.dim]
        for t in (*graph.input, *graph.output)
    ]
    assert dims == [["batch", 1, 8, 8], ["batch", 10]]
