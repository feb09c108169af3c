"""The counts the rendered book prints, per quantity: one quantity, one value, on every page.

A count in the prose says what it counts (questions, question × encoder pairs, judged readings,
claims...), so two pages that print the same quantity must print the same number. Each
:class:`Quantity` is a phrase that names one quantity of the whole book (the two-hop questions
held per dataset, the statements of the paper's abstract, the claims the multiverse judges...)
with the count in it; :func:`book_counts` collects every value each quantity takes on the
pages of a built book, and :func:`disagreements` names the quantities printed with two values.

Pure functions of the text they are given; :func:`page_texts` reads a build's pages with
:mod:`tools.bookcheck.check`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The number words prose may write a count in.
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_WORDS = {word: i for i, word in enumerate(_NUMBER_WORDS, start=1)}
#: A count as prose prints it: digits with thousands separators, or a number word.
_N = r"(?:\d{1,3}(?:,\d{3})+|\d+|" + "|".join(_NUMBER_WORDS) + ")"


@dataclass(frozen=True)
class Quantity:
    """One quantity of the book: its name (what it counts) and the phrase that prints it, whose
    groups named ``n`` (or ``n0``, ``n1``, ... for a quantity of several counts) hold the
    count."""

    name: str
    phrase: re.Pattern[str]


QUANTITIES: tuple[Quantity, ...] = (
    Quantity(
        "two-hop dev questions held, per dataset (HotpotQA, 2WikiMultiHopQA, MuSiQue)",
        re.compile(
            # not the questions a build's runs used (a profile's sample): "used 40 HotpotQA, ..."
            rf"(?<!used )(?<![\d,.])(?P<n0>{_N}) HotpotQA,? (?P<n1>{_N}) 2WikiMultiHopQA,? and "
            rf"(?P<n2>{_N}) MuSiQue"
            r"(?: two-hop dev)? questions"
        ),
    ),
    Quantity(
        "statements of the paper's abstract",
        re.compile(rf"the (?P<n>{_N}) statements? of the paper['’]s abstract"),
    ),
    Quantity(
        "rows of the chart that are questions of ours",
        re.compile(rf"the other (?P<n>{_N}) rows of the chart are questions of ours", re.I),
    ),
    Quantity("judged readings of the multiverse", re.compile(rf"(?P<n>{_N}) judged readings")),
    Quantity(
        "claims the multiverse judges",
        re.compile(rf"judged readings of (?P<n>{_N}) claims"),
    ),
    Quantity(
        "claim × reading pairs of the multiverse, in all",
        re.compile(rf"(?P<n>{_N}) claim × reading pairs in all"),
    ),
    Quantity(
        "question × encoder pairs T1 fits",
        re.compile(rf"of the (?P<n>{_N}) question × encoder pairs"),
    ),
)
"""Every quantity the book prints in more than one place, or could."""


def _value(match: re.Match[str]) -> str:
    """The count(s) of a match as one value: ``685`` or ``685 / 485 / 192``."""
    groups = match.groupdict()
    keys = ["n"] if "n" in groups else sorted(k for k in groups if re.fullmatch(r"n\d+", k))
    counts = []
    for key in keys:
        text = groups[key].lower()
        counts.append(str(_WORDS[text]) if text in _WORDS else text.replace(",", ""))
    return " / ".join(counts)


def page_counts(text: str, quantities: Iterable[Quantity] = QUANTITIES) -> dict[str, set[str]]:
    """Each quantity found in ``text`` (a page's visible text), with the values it takes."""
    text = " ".join(text.split())  # a phrase may break across lines and elements
    found: dict[str, set[str]] = {}
    for quantity in quantities:
        for match in quantity.phrase.finditer(text):
            found.setdefault(quantity.name, set()).add(_value(match))
    return found


def book_counts(
    pages: Mapping[str, str], quantities: Iterable[Quantity] = QUANTITIES
) -> dict[str, dict[str, list[str]]]:
    """Quantity -> value -> the pages (of ``pages``: name -> visible text) that print it."""
    wanted = tuple(quantities)
    out: dict[str, dict[str, list[str]]] = {}
    for name, text in sorted(pages.items()):
        for quantity, values in page_counts(text, wanted).items():
            for value in sorted(values):
                out.setdefault(quantity, {}).setdefault(value, []).append(name)
    return out


def disagreements(counts: Mapping[str, Mapping[str, list[str]]]) -> list[str]:
    """One line per quantity printed with two or more values, naming each value's pages."""
    return [
        f"{quantity}: "
        + "; ".join(f"{value} on {', '.join(pages)}" for value, pages in sorted(values.items()))
        for quantity, values in sorted(counts.items())
        if len(values) > 1
    ]


def page_texts(html_dir: Path | str) -> dict[str, str]:
    """The visible text of every page of a built book, by its path under ``html_dir``."""
    from tools.bookcheck.check import book_pages, parse_page, visible_text

    root = Path(html_dir)
    return {
        page.relative_to(root).as_posix(): visible_text(parse_page(page))
        for page in book_pages(root)
    }
