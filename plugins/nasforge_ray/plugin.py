"""Entry point of the Ray plugin: registers the executor without importing Ray."""

from __future__ import annotations

from nasforge.kernel.hookspecs import hookimpl
from nasforge_ray.executor import RayExecutor


@hookimpl
def nasforge_register_executors() -> list[type]:
    return [RayExecutor]
