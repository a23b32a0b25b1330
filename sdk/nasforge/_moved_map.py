"""Where modules of the core went: at the three-layer split, and when twins were renamed.

Their old paths (``nasforge.strategy``, ``nasforge.run.journal``) still import until
nasforge 0.3, with a DeprecationWarning: the package's finder consults this map, and
:mod:`nasforge._moved` answers from it.
"""

#: The release that removes the old paths, moved names and keyword shims.
REMOVED_IN = "0.3"
#: Layer -> the modules (space-separated) that moved into it at the split, under the same names.
MOVED_TO = {
    "kernel": "errors genotype search_space network_factory supernet supernet_topology supernet_discretise "
    "strategy evaluator metric result ensemble objectives pareto fidelity registry hookspecs option_types "
    "datasets seeding optional plugin_command progress_log testing",
    "run": "experiment journal run_lock environment budget stopping spec executors one_shot_run training "
    "defaults",
    "tools": "scoring backends export report cli pareto_plot plot_files anytime latency_objective "
    "latency_cache short_train builtin_plugin",
}
#: Modules renamed (old -> new): one at the split, then twins, so a name says its room.
RENAMED = {
    "nasforge.atomic_files": "nasforge.kernel.files",
    "nasforge.kernel.executor": "nasforge.kernel.executor_contract",
    "nasforge.run.ensembles": "nasforge.run.ensemble_training",
    "nasforge.run.goals": "nasforge.run.goal_checks",
    "nasforge.run.fidelity_accounting": "nasforge.run.fidelity_spent",
    "nasforge.run.journal": "nasforge.run.journal_file",
    "nasforge.run.run_journal": "nasforge.run.run_directory",
    "nasforge.run.stopping": "nasforge.run.stop_rules",
    "nasforge.run.data": "nasforge.run.builtin_datasets",
    "nasforge.run.training_data": "nasforge.run.run_data",
}
