"""The ONNX latency objective (issue 10): measurement, cache, short-train option, CLI.

The order test is the one that must hold on a busy machine: a cell of 3x3 convolutions
and a cell of skip connections (NB201, C=16, N=2, digits input, batch 1, one thread)
measured 0.23-0.35 ms and 0.034-0.064 ms (medians of 50-100 runs, 4x-10x apart) on a
two-core machine shared with other test runs, also with CPU-bound processes beside.
Requiring 2x leaves room for a machine busier than that, and the test makes its own load
(two CPU-bound processes), so the claim is checked, not hoped for.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
import torch

from nasforge import MissingDependencyError, Result
from nasforge.kernel.errors import ExportError, OptionError
from nasforge.kernel.registry import get_registry
from nasforge.run.journal_file import JournalReader, journal_path
from nasforge.tools import latency_cache
from nasforge.tools.export import latency as measuring
from nasforge.tools.export.latency import LatencyMeasurement, measure_genotype_latency, measure_onnx_latency
from nasforge.tools.latency_cache import LatencyCache, LatencyKey, default_latency_cache_dir
from nasforge.tools.latency_objective import CACHED_KEY, ERROR_KEY, OBJECTIVE, LatencySettings, OnnxLatency
from nasforge.tools.short_train import ShortTrainEvaluator

NB201 = get_registry().get("space", "nb201")()
LIGHT = NB201.parse(
    "|skip_connect~0|+|skip_connect~0|skip_connect~1|+|skip_connect~0|skip_connect~1|skip_connect~2|"
)
HEAVY = NB201.parse(
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
)
DIGITS_SAMPLE = (1, 8, 8)
SMALL = {"C": 4, "N": 1, "num_classes": 10, "in_channels": 1}
FEW = LatencySettings(warmup=1, repeats=3)


@pytest.fixture
def count_measurements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The genotypes actually exported and timed (a cache hit adds none)."""
    seen: list[str] = []
    real = measuring.measure_genotype_latency

    def counting(g, space, **kwargs):  # noqa: ANN001, ANN003, ANN202 - a pass-through
        seen.append(space.format(g))
        return real(g, space, **kwargs)

    monkeypatch.setattr(measuring, "measure_genotype_latency", counting)
    return seen


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """Two CPU-bound processes beside the test: on two cores, every core is contended."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for p in burners:
            p.kill()
            p.wait()


# --- measuring ----------------------------------------------------------------------------
def test_a_measurement_is_the_median_of_its_timed_runs() -> None:
    m = measure_genotype_latency(
        LIGHT, NB201, input_shape=(1, *DIGITS_SAMPLE), build_options=SMALL, repeats=7
    )
    assert m.repeats == 7 and m.threads == 1 and m.input_shape == (1, 1, 8, 8)
    assert 0 < m.min_ms <= m.median_ms and m.iqr_ms >= 0
    assert m.onnxruntime and not m.cached
    assert LatencyMeasurement.from_json(json.loads(json.dumps(m.to_json()))) == m


def test_a_module_bytes_and_a_file_are_measured_alike(tmp_path: Path) -> None:
    """Whatever form the model comes in, onnxruntime times the same network."""
    model = NB201.build(LIGHT, **SMALL)
    shape = (1, *DIGITS_SAMPLE)
    from_module = measure_onnx_latency(model, shape, warmup=0, repeats=2)
    assert model.training  # timed in eval mode, handed back as it came
    model.eval()
    path = tmp_path / "m.onnx"
    measuring._torch_export(model, torch.zeros(shape), path, opset=17, dynamo=False)
    from_file = measure_onnx_latency(path, shape, warmup=0, repeats=2)
    from_bytes = measure_onnx_latency(path.read_bytes(), shape, warmup=0, repeats=2, threads=2)
    assert {from_module.input_shape, from_file.input_shape, from_bytes.input_shape} == {shape}
    assert from_bytes.threads == 2


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"repeats": 0}, "repeats must be an integer >= 1"),
        ({"warmup": -1}, "warmup must be an integer >= 0"),
        ({"threads": True}, "threads must be an integer >= 1"),
        ({"input_shape": (1,)}, "input shape (1,)"),
        ({"input_shape": (1, 3, 8, 8)}, "does not accept input shape"),
    ],
)
def test_bad_settings_are_one_line_errors(kwargs: dict, needle: str) -> None:
    options = {"input_shape": (1, *DIGITS_SAMPLE), **kwargs}
    with pytest.raises(ExportError) as info:
        measure_genotype_latency(LIGHT, NB201, build_options=SMALL, **options)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_unreadable_model_is_an_export_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="cannot read"):
        measure_onnx_latency(tmp_path / "missing.onnx", (1, 1, 8, 8))
    with pytest.raises(ExportError, match="onnxruntime cannot load"):
        measure_onnx_latency(b"not a model", (1, 1, 8, 8))


# --- the cache ----------------------------------------------------------------------------
def _latency(tmp_path: Path, **kwargs) -> OnnxLatency:  # noqa: ANN003
    options = {"sample_shape": DIGITS_SAMPLE, "build_options": SMALL, "settings": FEW, "cache": tmp_path}
    return OnnxLatency(NB201, **{**options, **kwargs})


def test_a_second_measurement_of_a_cell_is_a_cache_hit(tmp_path: Path, count_measurements: list[str]) -> None:
    first = _latency(tmp_path).measure(LIGHT)
    again = _latency(tmp_path).measure(LIGHT)  # a fresh helper: read from disk, as a new run would
    assert not first.cached and again.cached
    assert again == first  # the very numbers, not a second measurement
    assert count_measurements == [NB201.format(LIGHT)]
    assert len(LatencyCache(tmp_path)) == 1
    _latency(tmp_path).measure(HEAVY)  # another cell: a miss
    assert count_measurements == [NB201.format(LIGHT), NB201.format(HEAVY)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "change",
    [
        {"build_options": {**SMALL, "C": 8}},
        {"sample_shape": (1, 16, 16)},
        {"settings": attrs.evolve(FEW, batch_size=2)},
        {"settings": attrs.evolve(FEW, threads=2)},
        {"settings": attrs.evolve(FEW, repeats=4)},
        {"settings": attrs.evolve(FEW, opset=18)},
    ],
    ids=["build", "shape", "batch", "threads", "repeats", "opset"],
)
def test_anything_that_changes_the_number_is_a_miss(
    tmp_path: Path, count_measurements: list[str], change: dict
) -> None:
    _latency(tmp_path).measure(LIGHT)
    other = _latency(tmp_path, **change)
    assert other.key.shard() != _latency(tmp_path).key.shard()
    assert not other.measure(LIGHT).cached
    assert len(count_measurements) == 2


@pytest.mark.slow
def test_the_key_holds_the_machine_and_the_software(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _latency(tmp_path).key
    assert key.onnxruntime and key.torch == torch.__version__ and key.package and len(key.host) == 16
    assert key.input_shape == (1, 1, 8, 8) and json.loads(key.build) == SMALL
    for field in ("host", "onnxruntime", "torch", "package", "method", "space_version"):
        assert attrs.evolve(key, **{field: "other"}).shard() != key.shard(), field
    _latency(tmp_path).measure(LIGHT)
    here = _latency(tmp_path).key.host
    other_cpu = {**latency_cache.host_fingerprint(), "cpu": "another CPU"}
    monkeypatch.setattr(latency_cache, "host_fingerprint", lambda: other_cpu)
    elsewhere = _latency(tmp_path)
    assert elsewhere.key.host != here
    assert not elsewhere.measure(LIGHT).cached  # another machine's latency is never served


def test_build_option_order_does_not_matter(tmp_path: Path) -> None:
    reordered = dict(reversed(list(SMALL.items())))
    assert _latency(tmp_path, build_options=reordered).key == _latency(tmp_path).key


def test_damaged_records_cost_a_measurement_never_a_wrong_number(
    tmp_path: Path, count_measurements: list[str]
) -> None:
    helper = _latency(tmp_path)
    helper.measure(LIGHT)
    shard = tmp_path / helper.key.shard()
    record = json.loads(shard.read_text())
    record["latency"]["median_ms"] = 1e-9  # edited: its checksum no longer matches
    shard.write_text(json.dumps(record) + "\n" + '{"genotype": "torn')  # and a torn last line
    assert not _latency(tmp_path).measure(LIGHT).cached
    assert len(count_measurements) == 2
    lines = shard.read_text().splitlines()  # the appender cut the torn tail before appending
    assert all(json.loads(line) for line in lines) and len(lines) == 2
    hit = _latency(tmp_path).measure(LIGHT)
    assert hit.cached and hit.median_ms != 1e-9


def test_a_cache_that_cannot_be_written_warns_once_and_the_number_stands(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    helper = _latency(tmp_path, cache=blocker / "cache")
    with pytest.warns(RuntimeWarning, match="not written"):
        first = helper.measure(LIGHT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        helper.measure(HEAVY)
    assert first.median_ms > 0


def test_the_default_cache_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_latency_cache_dir() == tmp_path / "nasforge" / "latency"
    assert _latency(tmp_path, cache=True).cache.directory == tmp_path / "nasforge" / "latency"
    assert _latency(tmp_path, cache=False).cache is None


def test_records_are_shared_between_cache_objects(tmp_path: Path) -> None:
    """A record another process appended is found on a miss (the shard is re-read)."""
    one, two = LatencyCache(tmp_path), LatencyCache(tmp_path)
    key = _latency(tmp_path).key
    assert two.get(key, "g") is None
    one.put(key, "g", {"median_ms": 1.0})
    assert two.get(key, "g") == {"median_ms": 1.0}


def test_a_key_refuses_impossible_settings() -> None:
    with pytest.raises(OptionError, match="repeats"):
        LatencyKey("nb201", "1", "{}", (1, 1), 0, 0, 1, 17, "1", "2")


# --- the objective in results --------------------------------------------------------------
def test_the_objective_is_declared_lower_is_better() -> None:
    assert OBJECTIVE.name == "onnx_latency_ms" and not OBJECTIVE.higher_is_better
    fast, slow = (Result({"onnx_latency_ms": v}) for v in (0.1, 0.5))
    assert OBJECTIVE.fitness(fast) > OBJECTIVE.fitness(slow)


def test_a_network_that_cannot_be_timed_gets_nan_and_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise ExportError("onnxruntime cannot run the model")

    monkeypatch.setattr(measuring, "measure_genotype_latency", refuse)
    out = _latency(tmp_path).add_to(Result({"valid_accuracy": 50.0}), LIGHT)
    assert math.isnan(out.objectives["onnx_latency_ms"]) and out.objectives["valid_accuracy"] == 50.0
    assert "cannot run" in out.metadata[ERROR_KEY]
    assert math.isinf(OBJECTIVE.fitness(out))  # ranks last
    failed = Result({}, failed=True, error="diverged")
    assert _latency(tmp_path).add_to(failed, LIGHT) is failed


def test_short_train_latency_is_off_by_default() -> None:
    ev = ShortTrainEvaluator(NB201, epochs=1, build={"C": 4, "N": 1})
    assert ev.latency is None and set(ev.objectives) == {"valid_accuracy"}
    assert "latency" not in ev.describe()
    assert "onnx_latency_ms" not in ev.evaluate(LIGHT).objectives


@pytest.mark.slow
def test_heavy_cell_measures_slower_than_light_one_on_a_busy_machine(busy_machine: None) -> None:
    """The must-show of issue 10: two NB201 cells of very different cost, short-trained on
    digits, measure in the right order, with two CPU-bound processes running beside."""
    ev = ShortTrainEvaluator(
        NB201,
        epochs=1,
        valid_fraction=0.9,  # a short short-train: the latency is the point here
        build={"C": 16, "N": 2},
        latency="onnx",
        latency_repeats=100,
        latency_cache=False,
    )
    assert ev.objectives["onnx_latency_ms"] == OBJECTIVE
    light, heavy = ev.evaluate(LIGHT), ev.evaluate(HEAVY)
    for r in (light, heavy):
        assert not r.failed and r.objectives["valid_accuracy"] > 0
    fast, slow = light.objectives["onnx_latency_ms"], heavy.objectives["onnx_latency_ms"]
    print(f"onnx_latency_ms: light {fast:.4f}, heavy {slow:.4f} ({slow / fast:.1f}x)")
    assert slow > 2.0 * fast, (fast, slow)
    assert ev.describe()["latency"]["repeats"] == 100


@pytest.mark.slow
def test_short_train_results_keep_their_accuracy_with_latency_on(tmp_path: Path) -> None:
    """Turning latency on adds an objective; it changes no number that was there."""
    plain = ShortTrainEvaluator(NB201, epochs=1, build={"C": 4, "N": 1})
    timed = ShortTrainEvaluator(
        NB201,
        epochs=1,
        build={"C": 4, "N": 1},
        latency="onnx",
        latency_repeats=3,
        latency_cache=str(tmp_path),
    )
    a, b, again = plain.evaluate(LIGHT), timed.evaluate(LIGHT), timed.evaluate(LIGHT)
    assert b.objectives["valid_accuracy"] == a.objectives["valid_accuracy"]
    assert not b.metadata[CACHED_KEY] and again.metadata[CACHED_KEY]
    assert again.objectives["onnx_latency_ms"] == b.objectives["onnx_latency_ms"]


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"latency": "fast"}, "option 'latency' must be one of off, onnx"),
        ({"latency": "onnx", "latency_repeats": 0}, "option 'repeats' must be >= 1"),
        ({"latency": "onnx", "latency_cache": ""}, "latency_cache"),
    ],
)
def test_short_train_refuses_bad_latency_options(options: dict, needle: str) -> None:
    with pytest.raises(OptionError, match=needle):
        ShortTrainEvaluator(NB201, epochs=1, **options)


def test_without_onnxruntime_it_is_refused_before_any_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    with pytest.raises(MissingDependencyError) as info:
        ShortTrainEvaluator(NB201, epochs=1, latency="onnx")
    message = str(info.value)
    assert "onnxruntime" in message and "nasforge[onnx-check]" in message and "\n" not in message
    ShortTrainEvaluator(NB201, epochs=1)  # off: onnxruntime is not needed


# --- the CLI ------------------------------------------------------------------------------
SEARCH = [
    "search",
    "--space",
    "nb201",
    "--strategy",
    "random",
    "--evaluator",
    "short-train",
    "--dataset",
    "digits",
    "--budget-trials",
    "2",
    "-q",
    "--evaluator-option",
    "epochs=1",
    "--evaluator-option",
    'build={"C": 4, "N": 1}',
]


@pytest.mark.slow
def test_cli_search_records_onnx_latency_in_the_journal(cli, tmp_path: Path) -> None:  # noqa: ANN001
    cache = tmp_path / "cache"
    options = ["--evaluator-option", "latency=onnx", "--evaluator-option", f"latency_cache={cache}"]
    run_dir = tmp_path / "run"
    cli(*SEARCH, *options, "--evaluator-option", "latency_repeats=5", "--run-dir", run_dir, ok=True)
    reader = JournalReader(journal_path(run_dir))
    assert len(reader.trials) == 2
    for trial in reader.trials:
        value = trial.result.objectives["onnx_latency_ms"]
        assert math.isfinite(value) and value > 0
    described = reader.header["evaluator"]["latency"]
    assert described["objective"] == "onnx_latency_ms" and described["threads"] == 1
    assert described["input_shape"] == [1, 1, 8, 8] and described["cache"] == str(cache)
    assert len(LatencyCache(cache)) == len({t.genotype for t in reader.trials})


@pytest.mark.slow
def test_cli_bad_latency_option_is_one_line(cli, tmp_path: Path) -> None:  # noqa: ANN001
    run = cli(*SEARCH, "--evaluator-option", "latency=gpu", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("short-train", "latency")


def test_cli_without_onnxruntime_names_the_extra(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    run = cli(*SEARCH, "--evaluator-option", "latency=onnx", "--run-dir", tmp_path / "r")
    run.assert_one_line_error("onnxruntime", "nasforge[onnx-check]")
    assert not (tmp_path / "r" / "journal.jsonl").exists()


@pytest.mark.slow
def test_cli_search_can_minimise_onnx_latency(cli, tmp_path: Path) -> None:  # noqa: ANN001
    """``--objective onnx_latency_ms:min``: the run finds the direction the evaluator declares
    and its best is the fastest cell it measured."""
    cache, run_dir = tmp_path / "cache", tmp_path / "run"
    options = ["--evaluator-option", "latency=onnx", "--evaluator-option", f"latency_cache={cache}"]
    run = cli(
        *SEARCH, *options, "--objective", "onnx_latency_ms:min", "--json", "--run-dir", run_dir, ok=True
    )
    trials = JournalReader(journal_path(run_dir)).trials
    fastest = min(trials, key=lambda t: t.result.objectives["onnx_latency_ms"])
    assert run.json()["best"] == NB201.format(fastest.genotype)
