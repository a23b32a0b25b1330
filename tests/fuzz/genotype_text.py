"""Fuzzed genotype strings for every space: valid ones, near misses and hostile ones.

Each generator starts from a valid canonical string of a randomly sampled genotype (so
that the success path is exercised, and so that a mutation lands *near* the grammar,
where parsers break) and then applies token-level mutations that know the space's syntax
plus character-level ones that do not. Whole-string replacements cover what a user pastes
by mistake: another space's string, a path, a 300-character line, nothing at all.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from fuzz.source import STRUCTURAL, UNICODE, Source
from fuzz.values import mutate_text

NB201_NEAR_OPS = ("nor_conv_3x4", "Nor_conv_3x3", "skip-connect", "conv_3x3", "none ", "", "avg_pool", "zero")
NB201_NEAR_INDEX = ("-1", "3", "99", "x", "", "01", " 0", "1e3", "9" * 30, "0.0", "٠")
DARTS_NEAR_OPS = (
    "'sep_conv_3x4'",
    "'none'",
    "'Skip_connect'",
    "0",
    "None",
    "b'x'",
    "'" + "q" * 300 + "'",
    "...",
)
DARTS_NEAR_INDEX = ("-1", "5", "7", "10**3", "1" + "0" * 30, "1.5", "True", "None", "'0'", "0j", "-0", "(0)")
DARTS_CONCATS = (
    "range(2, 6)",
    "range(2, 6, 1)",
    "range(-5)",
    "range(2, 6, 0)",
    "range('a')",
    "range(*[2, 6])",
    "range()",
    "range(2, 6, 1, 1)",
    "range(True, 6)",
    "range(2, x)",
    "range(0, 1000000000000)",
    "range(-1000000000000000000, 1000000000000000000)",
    "range(9223372036854775808, 18446744073709551616)",
    "range(2, 6)[1:]",
    "[2, 3, 4, 5, 6]",
    "(2, 3, 4, 5)",
    "{2, 3, 4, 5}",
    "[]",
    "None",
    "'2345'",
    "[2, 3, 4, 5] * 1000000000",
)
DARTS_HOSTILE = (
    "__import__('os').system('true')",
    "Genotype(normal=(lambda: [])(), reduce=[])",
    "Genotype()",
    "Genotype(**{'normal': []})",
    "genotype(normal=[], reduce=[])",
    "Genotype(normal=[], reduce=[], normal=[])",
    "Genotype(normal=[], reduce=[], extra=1)",
    "Genotype([], [2, 3, 4, 5], [], [2, 3, 4, 5], [])",
    "Genotype(normal=[('none', 0)] * 8, reduce=[('none', 0)] * 8)",
    "x.Genotype(normal=[], reduce=[])",
    "Genotype(normal=f'{1}', reduce=[])",
    "Genotype(normal=" + "-" * 5000 + "1, reduce=[])",
    "Genotype(normal=" + "[" * 150 + "]" * 150 + ", reduce=[])",
    "Genotype(normal=" + "[" * 300 + "]" * 300 + ", reduce=[])",
    "Genotype(normal=" + "(" * 100_000 + ", reduce=[])",
    "Genotype(normal=[" + "('none', 0), " * 20_000 + "], reduce=[])",
)
TOY_NEAR_OPS = ("lnear", "relu-linear", "", "LINEAR", "skip ", "relu_linear_", "identity", "0")


def sampled_text(space: object, src: Source) -> str:
    """The canonical string of a random genotype of ``space``."""
    g = space.sample(random.Random(src.integer(0, 2**31)))  # type: ignore[attr-defined]
    return space.format(g)  # type: ignore[attr-defined]


def _replace_token(src: Source, text: str, pattern: str, choices: tuple[str, ...]) -> str:
    spans = [m.span(1) for m in re.finditer(pattern, text)]
    if not spans:
        return text
    a, b = src.choice(spans)
    return text[:a] + src.choice(choices) + text[b:]


def _nb201_token(src: Source, text: str, valid_ops: tuple[str, ...]) -> str:
    kind = src.integer(0, 6)
    if kind == 0:
        return _replace_token(src, text, r"\|?([^|~+]+)~", (*valid_ops, *NB201_NEAR_OPS))
    if kind == 1:
        return _replace_token(src, text, r"~([^|]*)\|", NB201_NEAR_INDEX)
    if kind == 2:  # drop or duplicate one edge
        edges = [m.span() for m in re.finditer(r"[^|+]+~[^|]*\|", text)]
        if edges:
            a, b = src.choice(edges)
            return text[:a] + text[b:] if src.chance(0.5) else text[:b] + text[a:b] + text[b:]
        return text
    if kind == 3:
        return text.replace("+", src.choice(("++", "", "-", " + ", "+|")), src.integer(1, 2))
    if kind == 4:  # swap two nodes: edges then read from the wrong inputs
        nodes = text.split("+")
        i, j = src.integer(0, len(nodes) - 1), src.integer(0, len(nodes) - 1)
        nodes[i], nodes[j] = nodes[j], nodes[i]
        return "+".join(nodes)
    if kind == 5:
        return src.choice(("|", "||", " ", "\t", "+")) + text + src.choice(("|", "", "+", "\n", "+|none~3|"))
    return text.replace("|", src.choice(("¦", "||", "/")), src.integer(1, 3))


def _darts_token(src: Source, text: str, valid_ops: tuple[str, ...]) -> str:
    kind = src.integer(0, 6)
    if kind == 0:
        return _replace_token(src, text, r"\(('[^']*')", (*(f"'{o}'" for o in valid_ops), *DARTS_NEAR_OPS))
    if kind == 1:
        return _replace_token(src, text, r"', (-?\d+)\)", DARTS_NEAR_INDEX)
    if kind == 2:
        return _replace_token(src, text, r"_concat=(\[[^\]]*\])", DARTS_CONCATS)
    if kind == 3:  # a pair becomes a triple, a single or disappears
        return _replace_token(
            src, text, r"(\('[^']*', \d+\))", ("('none', 0, 1)", "('none',)", "", "('none', 0), ('none', 1)")
        )
    if kind == 4:  # positional fields instead of keywords
        return re.sub(r"\b(normal|reduce|normal_concat|reduce_concat)=", "", text, count=src.integer(1, 4))
    if kind == 5:  # drop a field or rename it
        return re.sub(
            r"\b(normal|reduce|normal_concat|reduce_concat)=",
            src.choice(("", "Normal=", "reduce=", "normal=", "extra=")),
            text,
            count=1,
        )
    return src.choice(DARTS_HOSTILE)


def _toy_token(src: Source, text: str, valid_ops: tuple[str, ...]) -> str:
    parts = text.split("-")
    kind = src.integer(0, 3)
    if kind == 0:
        parts[src.integer(0, len(parts) - 1)] = src.choice((*valid_ops, *TOY_NEAR_OPS))
    elif kind == 1:
        parts.insert(src.integer(0, len(parts)), src.choice(valid_ops))
    elif kind == 2 and parts:
        parts.pop(src.integer(0, len(parts) - 1))
    else:
        return src.choice(("_", "--", " - ", "+")).join(parts)
    return "-".join(parts)


TOKEN_MUTATORS: dict[str, Callable[[Source, str, tuple[str, ...]], str]] = {
    "nb201": _nb201_token,
    "darts": _darts_token,
    "toy": _toy_token,
}


def whole_string(src: Source, others: list[str]) -> str:
    """A string that is no genotype of the space at all."""
    kind = src.integer(0, 6)
    if kind == 0:
        return src.choice(("", " ", "\n", "\t\t"))
    if kind == 1 and others:
        return src.choice(others)  # another space's canonical string
    if kind == 2:
        return src.choice((".", "..", "/", "runs", "g.safetensors", "journal.jsonl", "missing/dir/"))
    if kind == 3:
        return src.text(STRUCTURAL + UNICODE, 40)
    if kind == 4:
        return "a" * src.choice((255, 256, 300, 5000))
    if kind == 5:
        return src.text("|~+" + "nor_conv_3x3skip" + "0123", 300)
    return src.text(UNICODE + "ab", 10)


def genotype_text(src: Source, space: object, others: list[str]) -> str:
    """A fuzzed string for ``space.parse``: valid about one time in five."""
    name = space.name  # type: ignore[attr-defined]
    kind = src.integer(0, 9)
    if kind >= 8:
        return whole_string(src, others)
    text = sampled_text(space, src)
    if kind <= 1:
        return text
    if kind <= 5:
        for _ in range(src.integer(1, 2)):
            text = TOKEN_MUTATORS[name](src, text, tuple(space.op_names))  # type: ignore[attr-defined]
        return text
    if kind == 6:
        return mutate_text(src, text)
    return TOKEN_MUTATORS[name](src, mutate_text(src, text, rounds=1), tuple(space.op_names))  # type: ignore[attr-defined]
