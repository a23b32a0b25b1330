"""An Optuna study searches a nasforge space, and the best architecture is exported.

    pip install "nasforge[optuna]"
    python examples/optuna_study_nb201.py [OUT_DIR] [N_TRIALS]

The study is Optuna's own (its TPE sampler, its storage if you give one, its pruners):
inside the objective, ``suggest_genotype`` suggests the NAS-Bench-201 cell's six edge ops as
categorical parameters, and the bundled table stands in for training (it looks up the
cell's 200-epoch CIFAR-10 validation accuracy). After the study, the best parameters turn
back into a genotype, which is written as a safetensors genotype file and an ONNX model.
Under the benchmark protocol the study sees validation accuracy only; the test accuracy
of its choice is printed, never optimised. About ten seconds on a laptop CPU, most of it
the ONNX export.
"""

from __future__ import annotations

import sys
from pathlib import Path

import optuna

from nasforge import api
from nasforge.kernel.registry import get_registry
from nasforge.tools.export import export_genotype, export_onnx, load_genotype
from nasforge_optuna import genotype_from_params, suggest_genotype

out = Path(sys.argv[1] if len(sys.argv) > 1 else "example-out")
n_trials = int(sys.argv[2]) if len(sys.argv) > 2 else 60
space = api.load_space("nb201")
table = get_registry().get("evaluator", "nb201-table")(space, dataset="cifar10")


def objective(trial: optuna.Trial) -> float:
    g = suggest_genotype(trial, space)
    result = table.evaluate(g)
    trial.set_user_attr("test_accuracy", result.objectives["test_accuracy"])  # kept, not optimised
    return result.objectives["valid_accuracy"]


optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
study.optimize(objective, n_trials=n_trials)

best = genotype_from_params(space, study.best_params)
print("best cell:", space.format(best))
test_accuracy = study.best_trial.user_attrs["test_accuracy"]
print(f"validation accuracy {study.best_value:.2f}, test accuracy {test_accuracy:.2f}")
out.mkdir(parents=True, exist_ok=True)
path = export_genotype(best, out / "best.safetensors", space)
assert load_genotype(path, space) == best
report = export_onnx(best, out / "best.onnx", space)
print(f"genotype: {path}; ONNX: {report.path}, max |torch - onnxruntime| = {report.max_abs_diff:.2e}")
