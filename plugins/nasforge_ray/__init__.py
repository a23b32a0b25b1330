"""Ray executor: evaluations on a Ray cluster (or a local Ray instance)."""

from nasforge_ray.executor import RayExecutor

__all__ = ["RayExecutor"]
