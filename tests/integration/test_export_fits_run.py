"""``nasforge export RUN_DIR`` writes the network the run searched, for the data it searched on.

A run that trained on digits (1x8x8, 10 classes), MNIST-1D (1x1x40, 10 classes) or a user's
2-channel 12x12 ``.npz`` (3 classes) is exported at that input shape with those channels
and classes: onnxruntime runs the run's own validation data through the exported model
and reproduces the PyTorch network's logits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
import torch

from nasforge import api
from nasforge.kernel.seeding import seeded_build
from nasforge.run.experiment import Experiment


def _two_channel_npz(path: Path) -> Path:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(90, 2, 12, 12)).astype(np.float32)
    np.savez(path, x=x, y=rng.integers(0, 3, size=90))
    return path


@pytest.mark.parametrize(
    ("data", "shape", "classes"),
    [("digits", (1, 8, 8), 10), ("mnist1d", (1, 1, 40), 10), ("npz", (2, 12, 12), 3)],
)
def test_an_export_takes_the_runs_own_data(
    cli: Any, tmp_path: Path, data: str, shape: tuple[int, ...], classes: int
) -> None:
    source = str(_two_channel_npz(tmp_path / "two.npz")) if data == "npz" else data
    run_dir = tmp_path / "run"
    cli(
        "search", "--space", "nb201", "--strategy", "random", "--evaluator", "short-train",
        "--train-data", source, "--evaluator-option", "epochs=1", "--build-option", "C=4",
        "--build-option", "N=1", "--budget-trials", "2", "--run-dir", run_dir, "-q", ok=True,
    )  # fmt: skip
    shown = cli("export", run_dir, "--out", tmp_path / "cli", "--json", ok=True).json()
    assert shown["input_shape"] == [1, *shape]
    written = api.export(run_dir, tmp_path / "py")
    assert written.build_options["num_classes"] == classes
    assert written.build_options["in_channels"] == shape[0]

    valid = Experiment.resume(run_dir).evaluator.valid.x[:64]  # the run's own validation data
    network = seeded_build(lambda: written.space.build(written.genotype, **written.build_options), 0).eval()
    with torch.no_grad():
        expected = network(valid).numpy()
    for onnx_file in (tmp_path / "cli" / "model.onnx", tmp_path / "py" / "model.onnx"):
        session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
        (got,) = session.run(None, {session.get_inputs()[0].name: valid.numpy()})
        assert got.shape == (len(valid), classes)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
