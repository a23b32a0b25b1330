"""Console output shared by the commands: rich for people, JSON for programs."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

#: Progress bars and human messages go to stderr so stdout stays clean for --json.
err_console = Console(stderr=True)
out_console = Console()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""
