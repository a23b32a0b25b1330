"""The README is a front page and the site speaks to users: short, every link resolving,
its table of components complete, and no word a user cannot resolve (an issue or
note number, a project-internal path)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nasforge.kernel.registry import get_registry
from tests.conftest import TOY_PLUGIN
from tests.docs.pages import DOCS, README, ROOT

#: What a user must not meet: issue numbers, numbered sources, internal note codes, talk
#: of borrowed machines, paths outside the repository (the words are matched whole).
INTERNAL = re.compile(
    r"\b(issue [0-9]+|seed 00[0-4]|research note|note A[0-9]+|lent|lease)\b"
    r"|\.\./shared|shared/research|\bseed-00[0-9]|\banchors\.md",
    re.IGNORECASE,
)
#: What a user's page (Markdown: the site, the README, the plugins' READMEs and results)
#: must not say either: the workshop's sittings and machines, and code named by its version
#: control (a commit hash, "the earlier code") rather than by what it did. Code may speak of
#: an onnxruntime session or a run's earlier sessions; a page read by users may not.
PAGE_WORDS = re.compile(
    r"\bsessions?\b|\bdevelopment machine\b|\b(earlier|previous) code\b"
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b",
    re.IGNORECASE,
)
#: Directories whose files are generated, never read as written.
_GENERATED = {"build", "__pycache__"}


def _source_files(top: Path, suffixes: set[str]) -> list[Path]:
    """Every file under ``top`` with one of ``suffixes``, build outputs and egg-info skipped."""
    return [
        p
        for p in top.rglob("*")
        if p.suffix in suffixes
        and p.is_file()
        and not any(part in _GENERATED or part.endswith(".egg-info") for part in p.relative_to(top).parts)
    ]


#: Everything the site is built from, the README, and everything a user reads in the source
#: tree: the core's and the plugins' code (comments, docstrings, help text), their READMEs and
#: RESULTS.md files, the contributing guide, the examples, and the benchmarks (their scripts'
#: docstrings, help and printed lines, and their README: read by whoever reproduces a figure).
USER_FACING = sorted(
    [README, ROOT / "CONTRIBUTING.md", ROOT / "mkdocs.yml"]
    + [p for p in DOCS.rglob("*") if p.suffix in {".md", ".py", ".yml", ".html"}]
    + _source_files(ROOT / "sdk", {".md", ".py"})
    + _source_files(ROOT / "plugins", {".md", ".py"})
    + _source_files(ROOT / "examples", {".md", ".py", ".toml"})
    + _source_files(ROOT / "benchmarks", {".md", ".py", ".sh"})
)
#: What a comment or docstring line may start with, dropped when two lines are read as one.
_LEAD = re.compile(r"^\s*(#:?|>|\*|-)?\s*")
_LINK = re.compile(r"(?<!!)\[[^\]]+\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into docs/"


def internal_words(name: str, text: str) -> list[str]:
    """Each line of ``text`` (a file called ``name``) with an internal word, and each phrase
    that a line break splits ("research" at the end of one line, "note" at the start of the
    next); a Markdown page is also held to :data:`PAGE_WORDS`."""
    found = (INTERNAL, PAGE_WORDS) if name.endswith(".md") else (INTERNAL,)

    def bad(line: str) -> bool:
        return any(words.search(line) for words in found)

    lines = text.splitlines()
    hits = [f"{name}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if bad(line)]
    for n, (first, second) in enumerate(zip(lines, lines[1:], strict=False), 1):
        joined = f"{first.rstrip()} {_LEAD.sub('', second)}"
        if bad(joined) and not bad(first) and not bad(second):
            hits.append(f"{name}:{n}-{n + 1}: {first.strip()} / {second.strip()}")
    return hits


@pytest.mark.parametrize("path", USER_FACING, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_internal_vocabulary(path: Path) -> None:
    hits = internal_words(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(hits)


def test_a_planted_page_fails_the_vocabulary_check() -> None:
    """The phrases once found on the site: each makes a page fail, also split over two lines."""
    planted = [
        "On an H100 GPU (one 15-minute session; torch 2.11)",
        "did not finish, and the session's time ran out",
        "so the next GPU session measures the split alone",
        "The table's scoring column is from the earlier code, which",
        "code a23451f1e119a1d6 at a55584a, every row as at the previous code",
        "took 102-131 s of CPU on our 2-core development machine.",
        "from the code of commit 5121e8e that produced them",
        "took 102-131 s of CPU on our 2-core development\nmachine.",
    ]
    for text in planted:
        assert internal_words("docs/planted.md", text), text
    for text in (
        "a 2-core machine shared with other work",
        "onnxruntime runs it",
        "seed 0, 10 seeds",
        "sha256",
    ):
        assert not internal_words("docs/planted.md", text), text
    assert not internal_words("sdk/x.py", "session = ort.InferenceSession(path)")
    # a shell script is code: held to the internal words only, as a .py file is
    assert internal_words("benchmarks/x.sh", "# One sitting on a lent GPU machine")
    assert not internal_words("benchmarks/x.sh", "# a session's files, in one sitting")


def test_the_vocabulary_check_finds_what_it_should() -> None:
    for phrase in (
        "see issue 24",
        "Seed 001, chapter 5",
        "the research note",
        "note A14",
        "lent",
        "../shared/x",
        "see shared/research/seed-003.md",
        "(``seed-004-prdarts.md``) §1.5",
        "transcribed in anchors.md",
    ):
        assert INTERNAL.search(phrase), phrase
    for phrase in ("silent", "the least", "seed 0", "A14 paper size", "talented", "pool_seed-001", "release"):
        assert not INTERNAL.search(phrase), phrase


def test_the_set_up_commands_are_unchanged() -> None:
    text = README.read_text(encoding="utf-8")
    assert (
        'pip install torch==2.13.0 && pip install -e ".[dev]" && (command -v chromium >/dev/null '
        "|| (apt-get update -qq && apt-get install -y -qq chromium))\n"
        "NASFORGE_REQUIRE_BROWSER=1 python -m pytest -q\n"
    ) in text


def test_readme_links_resolve() -> None:
    for target in (a or b for a, b in _LINK.findall(README.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue
        path = (ROOT / target.partition("#")[0]).resolve()
        assert path.exists(), f"README links to {target}, which does not exist"


def test_the_table_of_components_is_complete() -> None:
    """Every registered space, strategy, metric and evaluator has its line in the README
    (a plugin that adds one adds its line), and no line names one that does not exist."""
    registry = get_registry()
    listed = {
        (kind, name)
        for kind, name in re.findall(
            r"^\| (space|strategy|metric|evaluator) \| `([^`]+)` \|", README.read_text(encoding="utf-8"), re.M
        )
    }
    registered = {
        (kind, name)
        for kind in ("space", "strategy", "metric", "evaluator")
        for name in registry.names(kind)
        if registry.origin(kind, name) != TOY_PLUGIN  # the conformance kits' toy, loaded by the tests
    }
    assert listed == registered, (sorted(registered - listed), sorted(listed - registered))


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    in_nav = set(re.findall(r"([\w/.-]+\.md)\s*$", nav, flags=re.M))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    generated = {"reference/cli.md", "plugin-authors/guide.md"}
    assert pages | generated == in_nav, (sorted(in_nav - pages - generated), sorted(pages - in_nav))
