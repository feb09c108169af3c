"""Captions and interval labels against what they name: the prose side of the book's checks.

A caption may name colours ("green bars"), hollow markers and dashed or dotted lines, each an
*encoding*: :func:`caption_encodings` reads the ones a text names and :func:`unused_encodings`
those a figure does not draw (what it draws: :mod:`regime_core.book.figures.encodings`, carried
in its SVG). :func:`caption_problems` holds a :class:`regime_core.book.figures.Figure`'s own
caption and alt text (the figures' tests run every figure function through it);
:mod:`tools.bookcheck.check` holds the rendered pages' captions. :func:`label_problems` holds a
page's interval labels against the methods and levels of the records it shows
(:mod:`regime_core.vocabulary`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from regime_core import config, vocabulary

_COLOURS = "sky blue, blue, orange, green, vermilion, purple, brown, pink, grey, yellow, black"
#: How a caption may name each colour (its one name, or another word for it), and its one name.
COLOUR_WORDS: dict[str, str] = {
    **{colour: colour for colour in _COLOURS.split(", ")},
    "sky-blue": "sky blue",
    "light blue": "sky blue",
    "light grey": "grey",
    "dark grey": "grey",
    "red": "vermilion",
    "gray": "grey",
}
#: Marker and line styles a caption may name.
STYLE_WORDS: dict[str, str] = {
    "hollow": "hollow",
    "open circle": "hollow",
    "dashed": "dashed",
    "dotted": "dotted",
}
_PHRASES = re.compile(
    r"\b("
    + "|".join(re.escape(w) for w in sorted({**COLOUR_WORDS, **STYLE_WORDS}, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


def caption_encodings(text: str) -> set[str]:
    """The colours and styles a caption names, by their one name.

    >>> sorted(caption_encodings("Red and sky-blue markers; hollow ones on a dashed line"))
    ['dashed', 'hollow', 'sky blue', 'vermilion']
    """
    found = set()
    for match in _PHRASES.finditer(text):
        word = match.group(1).lower()
        found.add(COLOUR_WORDS.get(word) or STYLE_WORDS[word])
    return found


def unused_encodings(caption: str, drawn: Iterable[str]) -> set[str]:
    """What ``caption`` names that the figure (whose encodings are ``drawn``) does not use."""
    return caption_encodings(caption) - set(drawn)


def caption_problems(figure: Any) -> list[str]:
    """What is wrong with a :class:`regime_core.book.figures.Figure`'s caption and alt text: a
    colour or style the caption names that the figure does not draw, no alt text, or alt text
    that is the file name."""
    problems = [
        f"the caption names {word!r}, which the figure does not draw"
        for word in sorted(unused_encodings(figure.caption, figure.encodings()))
    ]
    if not figure.alt.strip():
        problems.append("no alt text")
    elif figure.alt.strip() in (figure.name, f"{figure.name}.svg"):
        problems.append(f"the alt text is the file name {figure.alt!r}")
    return problems


_LEVEL_LABEL = re.compile(r"(\d+(?:\.\d+)?)% (CI|Holm-level interval)")


def label_problems(
    text: str, *, methods: Iterable[str], holm_levels: Iterable[float] = ()
) -> list[str]:
    """What is wrong with the interval labels of a page's ``text``: a method named that none of
    the records it shows was computed with (``methods``: their ``ci_method`` values), a CI at a
    level other than the book's confidence, or a Holm-level interval at a level none of its
    comparisons has (``holm_levels``: the confidences of its Holm-level intervals)."""
    problems = []
    used = set(methods)
    for key, name in vocabulary.INTERVAL_NAMES.items():
        if (
            key not in used
            and name in text
            and not any(
                vocabulary.INTERVAL_NAMES[u].startswith(name)
                for u in used
                if u in vocabulary.INTERVAL_NAMES
            )
        ):
            problems.append(f"names {name!r}, but no record shown was computed with it")
    allowed = {vocabulary.interval_label(level, holm=True) for level in holm_levels}
    for match in _LEVEL_LABEL.finditer(text):
        label = match.group(0)
        if match.group(2) == "CI" and label != vocabulary.interval_label(config.CONFIDENCE):
            problems.append(
                f"labels an interval {label!r}; the book's CIs are {config.CONFIDENCE:.0%}"
            )
        if match.group(2) != "CI" and label not in allowed:
            problems.append(f"labels an interval {label!r}, a level no Holm family here has")
    return problems
