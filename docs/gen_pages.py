"""Pages made when the site is built (mkdocs-gen-files runs this script).

- ``reference/cli.md``: the command-line reference, generated from the Typer app itself
  (plugin commands mounted), so it cannot drift from ``nasforge --help``.
- ``plugin-authors/guide.md``: CONTRIBUTING.md, which stays at the repository's root
  (where its worked examples are run as tests) and is shown here with its links made
  site-relative.
- The pages under ``docs/`` that link to files at the root (CONTRIBUTING.md) get the same
  treatment, so each link works both on the site and when the file is read in the tree.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Files outside docs/ shown on the site, and the page each becomes.
INCLUDED = {"CONTRIBUTING.md": "plugin-authors/guide.md"}
#: Pages of docs/ that link outside docs/ and are rewritten in place on the site.
REWRITTEN = (
    "plugin-reference.md",
    "supernet-contract.md",
    "json-output.md",
    "guide/objectives.md",
    "plugin-authors/index.md",
)
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")


def site_link(target: str, source: str, page: str) -> str | None:
    """Where a link written in repository file ``source`` points when shown as ``page``.

    ``None`` when the target is in the repository but not on the site (the caller then
    shows the path as code)."""
    if re.match(r"^[a-z]+:|^#|^/", target):
        return target
    path, _, anchor = target.partition("#")
    in_repo = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    if in_repo in INCLUDED:
        on_site = INCLUDED[in_repo]
    elif in_repo.startswith("docs/"):
        on_site = in_repo.removeprefix("docs/")
    else:
        return None
    rel = posixpath.relpath(on_site, posixpath.dirname(page) or ".")
    return rel + (f"#{anchor}" if anchor else "")


def rewrite_links(text: str, source: str, page: str) -> str:
    def one(match: re.Match[str]) -> str:
        label, target = match.groups()
        where = site_link(target, source, page)
        if where is not None:
            return f"[{label}]({where})"
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        return label if label.strip("`") == path else f"{label} (`{path}` in the source tree)"

    return _LINK.sub(one, text)


def included_pages() -> None:
    for source, page in INCLUDED.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        with mkdocs_gen_files.open(page, "w") as out:
            out.write(rewrite_links(text, source, page))
        mkdocs_gen_files.set_edit_path(page, f"../{source}")
    for name in REWRITTEN:
        text = (DOCS / name).read_text(encoding="utf-8")
        with mkdocs_gen_files.open(name, "w") as out:
            out.write(rewrite_links(text, f"docs/{name}", name))


def cli_page() -> None:
    import sys

    sys.path.insert(0, str(DOCS))
    from gen_cli import cli_reference

    with mkdocs_gen_files.open("reference/cli.md", "w") as out:
        out.write(cli_reference())


included_pages()
cli_page()
