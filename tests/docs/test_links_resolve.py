"""Every relative link of the README, CONTRIBUTING, the changelog and the pages under docs/
resolves to a file in the repository, so the pages work where they are read in the tree
(on GitHub, in an editor) as well as on the built site. Pages that exist only on the built
site (the command-line reference, the guide made from CONTRIBUTING.md) are reached from
the site's navigation, never by a link a reader of the tree would follow into nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.pages import DOCS, ROOT

#: A Markdown link or image ``[text](target "title")``, and an HTML ``href``/``src``.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|(?:href|src)=\"([^\"]+)\"")
_FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def relative_links(page: Path) -> list[str]:
    """The links of ``page`` that point into the repository (not a URL, not an anchor of
    the page itself), outside code blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    found = [a or b for a, b in _LINK.findall(text)]
    return [t for t in found if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^#|^/", t)]


def dead_links(page: Path) -> list[str]:
    return [t for t in relative_links(page) if not (page.parent / t.partition("#")[0]).resolve().exists()]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_in_the_repository(page: Path) -> None:
    assert dead_links(page) == [], f"{page.relative_to(ROOT)} links to files the repository does not hold"


def test_the_checker_finds_a_dead_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x", encoding="utf-8")
    page.write_text(
        "[ok](there.md#part) [gone](reference/cli.md) ![img](missing.png) [web](https://example.org) "
        "[self](#top) `[code](not-checked.md)`\n```md\n[fenced](not-checked-either.md)\n```\n",
        encoding="utf-8",
    )
    assert dead_links(page) == ["reference/cli.md", "missing.png"]
