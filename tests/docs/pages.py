"""Reading the documentation's Markdown: its code blocks and the commands in them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def code_blocks(path: Path, language: str) -> list[str]:
    """The fenced blocks of ``language`` in ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def commands(path: Path) -> list[list[str]]:
    """Every ``nasforge`` command of the page's bash blocks, continuation lines joined,
    comments dropped, split as the shell splits it (``nasforge`` itself left out)."""
    found = []
    for block in code_blocks(path, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["nasforge"]:
                found.append(words[1:])
    return found


def command_with(path: Path, *words: str) -> list[str]:
    """The one command of ``path`` that contains all of ``words``."""
    matching = [c for c in commands(path) if all(w in c for w in words)]
    assert len(matching) == 1, (path.name, words, matching)
    return matching[0]


def replaced(argv: list[str], **values: str) -> list[str]:
    """``argv`` with the value after each option ``--NAME`` (``_`` for ``-``) replaced, or
    a ``KEY=VALUE`` word's value replaced where ``NAME`` is ``KEY``."""
    out = list(argv)
    for name, value in values.items():
        flag = "--" + name.replace("_", "-")
        if flag in out:
            out[out.index(flag) + 1] = value
            continue
        keyed = [i for i, word in enumerate(out) if word.startswith(f"{name}=")]
        assert keyed, (name, argv)
        out[keyed[0]] = f"{name}={value}"
    return out
