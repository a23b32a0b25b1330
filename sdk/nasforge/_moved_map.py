"""Where each module of the core went when it was split into three layers.

Its path before the split (``nasforge.strategy``) still imports, with a warning: the
package's finder consults this map, and :mod:`nasforge._moved` answers from it.
"""

#: Layer -> the modules (space-separated) that moved into it, under the same names.
MOVED_TO = {
    "kernel": "errors genotype search_space network_factory supernet supernet_topology supernet_discretise "
    "strategy evaluator metric result ensemble objectives pareto fidelity registry hookspecs option_types "
    "datasets seeding optional plugin_command progress_log testing",
    "run": "experiment journal run_lock environment budget stopping spec executors one_shot_run training "
    "defaults",
    "tools": "scoring backends export report cli pareto_plot plot_files anytime latency_objective "
    "latency_cache short_train builtin_plugin",
}
