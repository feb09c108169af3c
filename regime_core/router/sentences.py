"""The router's sentence rule for a bridge passage given as running text (``regime route``).

Why not :func:`regime_core.text.split_sentences` (spaCy's sentencizer): its boundaries follow
spaCy's English tokenizer (hundreds of exceptions, prefix/suffix/infix expressions), which cannot
be ported exactly to the JavaScript router that runs in the book
(``regime_core/resources/router.js``); both implementations must split a text identically. The
router's trained numbers do not depend on this rule: training reads the datasets' sentences as
``regime data prepare`` split them.

The rule, on whitespace-delimited chunks (whitespace as ``str.isspace``):

1. a chunk ends a sentence when, after dropping trailing closing quotes and brackets
   (:data:`CLOSERS`: ``" ' ” ’ ) ] »`` and the CJK ones), it ends with ``.``, ``!`` or ``?``;
2. except a chunk ending with ``.`` that is an abbreviation once leading opening quotes and
   brackets (:data:`OPENERS`) are dropped: single letters with dots (``J.``, ``U.S.``, ``e.g.``)
   or one of :data:`ABBREVIATIONS` followed by a dot (``Dr.``, ``St.``, ``Inc.``);
3. a non-Latin sentence mark (:data:`SENTENCE_MARKS`: the ideographic ``。 ｡ ！ ？``, the danda
   ``। ॥``, Arabic ``؟ ۔``, Armenian ``։``, Ethiopic ``። ፧``, Myanmar ``။``, Khmer ``។``) ends a
   sentence wherever it stands, with the marks, terminals and closers that follow it
   (``？！」``): Chinese and Japanese put no space between sentences;
4. a sentence is the original text from its first chunk (or the end of the previous sentence
   inside a chunk) to its last (inner whitespace kept).

>>> split_bridge("Kestrel Bay is a 1931 film by J. R. Doe.  It was shot in St. Ives! Was it?")
['Kestrel Bay is a 1931 film by J. R. Doe.', 'It was shot in St. Ives!', 'Was it?']
>>> split_bridge("《鹰湾》是1931年的电影。导演是多伊！是吗？")
['《鹰湾》是1931年的电影。', '导演是多伊！', '是吗？']
"""

from __future__ import annotations

import re

from regime_core.inputs.route_input import ROUTE_TEXT
from regime_core.router.estimator import RegimeRouter, RouteDecision

TERMINALS = ".!?"
# Sentence marks of other scripts (rule 3); "．" (U+FF0E) is left out: it is also a decimal point.
SENTENCE_MARKS = "。｡！？।॥؟۔։።፧။។"
CLOSERS = "\"'”’)]»」』）］】〉》"
OPENERS = "\"'“‘([«「『（［【〈《"
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
_MARK_RUN = re.compile(
    f"[{re.escape(SENTENCE_MARKS)}][{re.escape(SENTENCE_MARKS + TERMINALS + CLOSERS)}]*"
)
# What undecodable bytes become: U+FFFD (Node's argv, a replacing decoder) or a lone surrogate
# (Python's argv, surrogateescape). Text holding either is refused, by router.js too.
_NOT_TEXT = re.compile("[\ufffd\ud800-\udfff]")


def is_abbreviation(chunk: str) -> bool:
    """True for a chunk such as ``J.``, ``U.S.``, ``(e.g.`` or ``Dr.`` (rule 2)."""
    word = chunk.lstrip(OPENERS)
    if not word.endswith("."):
        return False
    return _INITIALS.fullmatch(word) is not None or word[:-1] in ABBREVIATIONS


def ends_sentence(chunk: str) -> bool:
    """True when a whitespace-delimited chunk closes a sentence (rules 1 to 3)."""
    core = chunk.rstrip(CLOSERS)
    if not core or core[-1] not in TERMINALS + SENTENCE_MARKS:
        return False
    return core[-1] != "." or not is_abbreviation(core)


def split_bridge(text: str) -> list[str]:
    """Split running text into sentences with the rule above; ``[]`` for blank text."""
    sentences: list[str] = []
    start = -1
    for chunk in _CHUNK.finditer(text):
        if start < 0:
            start = chunk.start()
        piece = chunk.start()  # where the rest of the chunk starts, after any sentence mark
        for mark in _MARK_RUN.finditer(text, chunk.start(), chunk.end()):
            sentences.append(text[start : mark.end()])
            start = piece = mark.end()
        if piece == chunk.end():
            start = -1
        elif ends_sentence(text[piece : chunk.end()]):
            sentences.append(text[start : chunk.end()])
            start = -1
    if start >= 0:
        sentences.append(text[start:].rstrip())
    return sentences


def check_text(value: str, name: str) -> str:
    """``value`` unless it holds U+FFFD or a lone surrogate (bytes that were not UTF-8):
    ValueError naming ``name`` and the first such character's position (in code points)."""
    bad = _NOT_TEXT.search(value)
    if bad is not None:
        raise ValueError(
            f"route: the {name} is not valid UTF-8 text (character {bad.start()} is U+FFFD or "
            "a lone surrogate, what undecodable bytes turn into); pass UTF-8 text"
        )
    return value


def route_bridge_text(
    router: RegimeRouter, question: str, bridge: str, bridge_title: str | None = None
) -> RouteDecision:
    """What ``regime route`` does: split ``bridge`` with :func:`split_bridge`, then
    :meth:`RegimeRouter.route`. Raises ValueError for a non-string or blank question, a
    non-string or blank bridge (:data:`~regime_core.inputs.route_input.ROUTE_TEXT`), and for
    text that was not valid UTF-8 (:func:`check_text`)."""
    ROUTE_TEXT.read({"question": question, "bridge": bridge}, where="route")
    check_text(question, "question")
    check_text(bridge, "bridge")
    if isinstance(bridge_title, str):
        check_text(bridge_title, "bridge title")
    # a non-blank bridge (ROUTE_TEXT) holds a non-space chunk, so at least one sentence
    return router.route(question, split_bridge(bridge), bridge_title)
