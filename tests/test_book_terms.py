"""Every term the glossary defines is linked (the ``{term}`` role) from its first use on each
prose page, and the landing page links every term it uses.

The pages are read as sources: fenced blocks, directive options, maths, headings and the text of
other roles (``{doc}``, ``{rec}``...) are left out; a term counts as used where its words appear
in running text, or where it is the whole of an inline code span (``union``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regime_core import paths

BOOK = paths.REPO_ROOT / "book"
GLOSSARY = BOOK / "reference" / "glossary.rst"

#: How each checked term is written in running text (it must be defined in the glossary). The
#: everyday words among the glossary's terms (bridge, target, reading, cell, neither) are checked
#: where the sense is the glossary's: in code font, in italics, or next to a regime's name.
TERMS: dict[str, str] = {
    "Q-dominant": r"\bQ-dominant\b",
    "B-dominant": r"\bB-dominant\b",
    "neither": r"\*neither\*|(?<=or )neither\b(?= |\.|,)|`neither`",
    "hop-2 entity": r"\bhop-2 entit(?:y|ies)\b",
    "relation sentence": r"\brelation sentences?\b",
    "q": r"(?<!always-)`q`",
    "union": r"(?<!always-)`union`|(?<![-\w`])union\b(?! of)",
    "knockout": r"`knockout`",
    "always-q": r"\balways-`?q`?(?![\w-])",
    "always-union": r"\balways-`?union`?\b",
    "oracle router": r"\boracle(?: router)?\b",
    "hit@5": r"\bhit@5\b",
    "cells": r"\bcells?\b",
    "pp": r"\(pp\)|(?<!`)\bpp\b(?!`)",
    "McNemar test": r"\bMcNemar\b",
    "Holm adjustment": r"\bHolm\b",
    "cross-fitting": r"\bcross-fit(?:ting|ted)\b",
    "knob": r"\bknobs?\b",
    "flip rate": r"\bflip rates?\b",
    "direction only": r"\bdirection only\b",
    "specification curve": r"\bspecification curves?\b",
    "RegimeRouter": r"\bRegimeRouter\b",
    "degenerate predicate": r"\bdegenerate predicates?\b",
    "tiny pool": r"\btiny pools?\b",
    "bridge weight": r"\bbridge weight\b",
}
#: Pages whose words are the reference itself, generated, or another helper's.
SKIPPED = {
    "reference/glossary.rst",
    "reference/cli.rst",
    "reference/cli_checks.rst",
    "reference/api.rst",
    "router/try_the_router.md",
}

FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})")
TERM_ROLE = re.compile(r"\{term\}`([^`<]*?)(?:\s*<([^`>]+)>)?`")
OTHER_ROLE = re.compile(r"\{[a-z][\w:-]*\}`[^`]*`")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.DOTALL)
MARK = "\x00"


def glossary_terms() -> set[str]:
    """The terms of the glossary page (each line of a ``glossary`` block's term lines, and the
    terms of the statistics section it generates from ``regime_core.vocabulary``)."""
    from regime_core import vocabulary
    from regime_core.runner.judge import OURS_WORDS, VERDICTS

    terms, inside = set(), False
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.startswith(".. regime-statistics-glossary::"):
            terms.update(
                t for names, _ in vocabulary.glossary(VERDICTS, OURS_WORDS.values()) for t in names
            )
        if line.startswith(".. glossary::"):
            inside = True
        elif line and not line.startswith(" "):
            inside = False
        elif inside and re.match(r"^   \S", line) and not line.strip().startswith(":"):
            terms.add(line.strip())
    return terms


def running_text(text: str) -> str:
    """The page's running text: fenced blocks, directive options, headings and maths out;
    ``{term}`` roles turned into markers ``\\0term\\0``; other roles out."""
    kept, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if fence is not None:
            if match and line.strip().startswith(fence) and line.strip().rstrip(fence[0]) == "":
                fence = None
            continue
        if match:
            rest = line.strip()[len(match.group(1)) :]
            if rest.startswith("{") and "admonition" not in rest and "note" not in rest:
                fence = match.group(1)
            continue
        if line.startswith("#") or re.match(r"^\s*:[\w-]+:", line):
            continue
        kept.append(line)
    body = MATH.sub(" ", "\n".join(kept))
    body = TERM_ROLE.sub(lambda m: f"{MARK}{(m.group(2) or m.group(1)).strip()}{MARK}", body)
    return OTHER_ROLE.sub(" ", body)


def first_uses(text: str) -> dict[str, bool]:
    """For each term of :data:`TERMS` used on the page: is its first use a ``{term}`` link?"""
    body = running_text(text)
    found: dict[str, bool] = {}
    for term, pattern in TERMS.items():
        marker = body.find(f"{MARK}{term}{MARK}")
        plain = None
        # a term's words inside another term's marker do not count as a use
        scrubbed = re.sub(f"{MARK}[^{MARK}]*{MARK}", lambda m: " " * len(m.group(0)), body)
        match = re.search(pattern, scrubbed)
        if match:
            plain = match.start()
        if marker < 0 and plain is None:
            continue
        found[term] = marker >= 0 and (plain is None or marker <= plain)
    return found


def _pages() -> list[Path]:
    pages = [p for p in BOOK.rglob("*") if p.suffix in (".md", ".rst")]
    return sorted(
        p
        for p in pages
        if "executed" not in p.parts and p.relative_to(BOOK).as_posix() not in SKIPPED
    )


def test_every_checked_term_is_in_the_glossary() -> None:
    assert set(TERMS) - glossary_terms() == set()


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(BOOK).as_posix())
def test_each_term_is_linked_at_its_first_use(page: Path) -> None:
    unlinked = [
        t for t, linked in first_uses(page.read_text(encoding="utf-8")).items() if not linked
    ]
    assert unlinked == [], f"{page.name}: first use not a {{term}} link: {unlinked}"


def test_the_check_sees_an_unlinked_first_use() -> None:
    assert first_uses("The `union` query, then {term}`union`.") == {"union": False}
    assert first_uses("The {term}`union` query, then `union`.") == {"union": True}
    assert first_uses("```{code}\n`union`\n```\nNone here.") == {}
