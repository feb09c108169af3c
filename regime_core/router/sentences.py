"""The router's sentence rule for a bridge passage given as running text (``regime route``).

Why not :func:`regime_core.text.split_sentences` (spaCy's sentencizer): its boundaries follow
spaCy's English tokenizer (hundreds of exceptions, prefix/suffix/infix expressions), which cannot
be ported exactly to the JavaScript router that runs in the book
(``regime_core/resources/router.js``); both implementations must split a text identically. The
router's trained numbers do not depend on this rule: training reads the datasets' sentences as
``regime data prepare`` split them.

The rule, on whitespace-delimited chunks (whitespace as ``str.isspace``):

1. a chunk ends a sentence when, after dropping trailing closing quotes and brackets
   (``" ' ” ’ ) ]``), it ends with ``.``, ``!`` or ``?``;
2. except a chunk ending with ``.`` that is an abbreviation once leading opening quotes and
   brackets (``" ' “ ‘ ( [``) are dropped: single letters with dots (``J.``, ``U.S.``,
   ``e.g.``) or one of :data:`ABBREVIATIONS` followed by a dot (``Dr.``, ``St.``, ``Inc.``);
3. a sentence is the original text from its first chunk to its last (inner whitespace kept).

>>> split_bridge("Kestrel Bay is a 1931 film by J. R. Doe.  It was shot in St. Ives! Was it?")
['Kestrel Bay is a 1931 film by J. R. Doe.', 'It was shot in St. Ives!', 'Was it?']
"""

from __future__ import annotations

import re

from regime_core.router.estimator import RegimeRouter, RouteDecision

TERMINALS = ".!?"
CLOSERS = "\"'”’)]"
OPENERS = "\"'“‘(["
# Titles and company/place abbreviations that rarely end a sentence (case-sensitive).
ABBREVIATIONS: frozenset[str] = frozenset(
    (
        "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "Mt", "Ft", "Gen", "Col", "Lt",
        "Capt", "Sgt", "Gov", "Sen", "Rep", "Rev", "Hon", "Inc", "Ltd", "Co", "Corp", "Bros",
        "vs", "Jan", "Feb", "Aug", "Sept", "Oct", "Nov", "Dec", "ca", "approx",
    )
)  # fmt: skip
# ASCII only, so that Python's and JavaScript's regular expressions agree character for character.
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")
_CHUNK = re.compile(r"\S+")


def is_abbreviation(chunk: str) -> bool:
    """True for a chunk such as ``J.``, ``U.S.``, ``(e.g.`` or ``Dr.`` (rule 2)."""
    word = chunk.lstrip(OPENERS)
    if not word.endswith("."):
        return False
    return _INITIALS.fullmatch(word) is not None or word[:-1] in ABBREVIATIONS


def ends_sentence(chunk: str) -> bool:
    """True when a whitespace-delimited chunk closes a sentence (rules 1 and 2)."""
    core = chunk.rstrip(CLOSERS)
    if not core or core[-1] not in TERMINALS:
        return False
    return core[-1] != "." or not is_abbreviation(core)


def split_bridge(text: str) -> list[str]:
    """Split running text into sentences with the rule above; ``[]`` for blank text.

    Raises ValueError for a non-string.
    """
    if not isinstance(text, str):
        raise ValueError(f"split_bridge expects a string, got {type(text).__name__}")
    sentences: list[str] = []
    start = -1
    for match in _CHUNK.finditer(text):
        if start < 0:
            start = match.start()
        if ends_sentence(match.group()):
            sentences.append(text[start : match.end()])
            start = -1
    if start >= 0:
        sentences.append(text[start:].rstrip())
    return sentences


def route_bridge_text(
    router: RegimeRouter, question: str, bridge: str, bridge_title: str | None = None
) -> RouteDecision:
    """What ``regime route`` does: split ``bridge`` with :func:`split_bridge`, then
    :meth:`RegimeRouter.route`. Raises ValueError for a non-string or blank question or bridge
    (the same messages as ``router.js``)."""
    if not isinstance(question, str):
        raise ValueError(f"route: question must be a string, got {type(question).__name__}")
    if not isinstance(bridge, str):
        raise ValueError(f"route: bridge must be a string, got {type(bridge).__name__}")
    if not question.strip():
        raise ValueError("route: the question is empty")
    sentences = split_bridge(bridge)
    if not sentences:
        raise ValueError("route: the bridge text is empty (no sentence found)")
    return router.route(question, sentences, bridge_title)
