"""nasforge's build backend: setuptools', with an editable install that is a path file.

setuptools installs a checkout whose packages live in two folders (``sdk/`` and
``plugins/``) in editable mode through an import hook: Python follows it, and static tools
(mypy, pyright, documentation generators) do not, so ``mypy --strict`` of a program using
nasforge says ``Cannot find implementation or library stub for module named "nasforge"``.
Its strict mode (links to each file) is seen by mypy but misses a module added to the
checkout until the next install, and puts the link folder in the modules' ``__file__``.

This backend builds setuptools' editable wheel and replaces the hook with a ``.pth`` file
naming the package folders (as setuptools' own editable install of a single-folder project
does): Python and every static tool read the checkout itself, and a new module is there at
once. Wheels and sdists are setuptools' own, and an editable mode asked for by name
(``--config-settings editable_mode=strict``) is left as setuptools makes it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tomllib
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every other hook is setuptools' own)

#: How setuptools' editable_wheel command takes its mode from the config settings.
MODE_KEYS = ("editable_mode", "editable-mode")


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    """setuptools' editable wheel, its import hook replaced by a path file (see above)."""
    name: str = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if not any(key in (config_settings or {}) for key in MODE_KEYS):
        path_file_for_hook(Path(wheel_directory) / name, package_roots(Path.cwd()))
    return name


def package_roots(project: Path) -> list[Path]:
    """The folders ``[tool.setuptools.packages.find] where`` names, absolute."""
    config = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    where = config["tool"]["setuptools"]["packages"]["find"]["where"]
    return [(project / folder).resolve() for folder in where]


def path_file_for_hook(wheel: Path, roots: list[Path]) -> None:
    """Rewrite the editable ``wheel``: its ``__editable__.*.pth`` names ``roots`` and its
    finder module is gone; RECORD follows. A wheel without the hook is left alone."""
    with zipfile.ZipFile(wheel) as old:
        entries = {info.filename: old.read(info) for info in old.infolist()}
    path_files = [n for n in entries if n.startswith("__editable__.") and n.endswith(".pth")]
    finders = [n for n in entries if n.startswith("__editable___") and n.endswith("_finder.py")]
    if len(path_files) != 1 or not finders:
        return
    for finder in finders:
        del entries[finder]
    entries[path_files[0]] = "".join(f"{root}\n" for root in roots).encode("utf-8")
    (record,) = [n for n in entries if n.endswith(".dist-info/RECORD")]
    rows = [f"{n},sha256={_digest(data)},{len(data)}" for n, data in entries.items() if n != record]
    entries[record] = "".join(f"{row}\n" for row in [*rows, f"{record},,"]).encode("utf-8")
    part = wheel.with_name(wheel.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as new:
        for n, data in entries.items():
            new.writestr(n, data)
    os.replace(part, wheel)


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
