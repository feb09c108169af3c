"""The router's private, fast text view: folded words, capitalised entity spans, free words.

Why private and not :mod:`regime_core.text`'s matching: the router must stay far below
1 ms per question, and its feature definitions are frozen into saved models (see
:data:`regime_core.router.features.FEATURE_SPEC`), so they must not drift when the shared text
utilities are tuned for the regime predicates. The span rule is the shared, pure one
(:func:`regime_core.text.capital_runs`) over this module's own words and connectors: a maximal
run of capitalised words, lowercase connectors allowed between them ("University of Oxford"),
broken by punctuation, leading stop words and question openers dropped ("The Beatles" →
"Beatles"; a sentence-initial "Who", "Is" or "Did" is no entity, a sentence-initial name is).

Words are lowercased and accent-folded ("Beyoncé" → "beyonce") so that a question and a passage
compare equal whatever their spelling of accents.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from regime_core.text import capital_runs, trailing_parenthetical

# A word is a run of word characters, possibly joined by single apostrophes, hyphens, dots or
# "&" ("O'Brien", "Jean-Paul", "U.S"). Written without backtracking: it is the hot loop.
WORD_PATTERN = re.compile(r"\w+(?:['’&.-]\w+)*")
# Lowercase words that may sit inside a capitalised name ("University of Oxford"). Unlike
# regime_core.text, "and", "for", "on" and "in" are not connectors: questions join two names
# with them ("Are both X and Y ...", "Was X in Y"), and counting names is a feature here.
CONNECTORS: frozenset[str] = frozenset(
    (
        "of", "the", "de", "del", "della", "der", "di", "du", "da", "la", "le", "les", "van",
        "von", "y", "upon", "am",
    )
)  # fmt: skip
# scikit-learn's English list: a fixed, widely used closed-class list (318 words).
STOP_WORDS: frozenset[str] = frozenset(ENGLISH_STOP_WORDS)
# Words dropped from the start of a capitalised run: stop words plus the auxiliaries and
# imperatives that open questions but are missing from the list ("Did", "Does", "List").
NON_NAME_OPENERS: frozenset[str] = STOP_WORDS | frozenset(
    ("do", "does", "did", "shall", "will", "would", "list", "tell", "give", "who", "whose")
)


@dataclass(frozen=True, slots=True)
class Entity:
    """A capitalised span: ``surface`` as written, ``words`` folded, ``key`` its content words.

    ``key`` drops stop words (so "University of Oxford" matches on {university, oxford}); a
    span made only of stop words keeps all its words.
    """

    surface: str
    words: tuple[str, ...]
    key: frozenset[str]


@dataclass(frozen=True, slots=True)
class TextView:
    """What the router reads from one text.

    ``words``: every folded word; ``entities``: capitalised spans in order; ``free_words``: the
    folded words outside entity spans, in order (relation and cue words live there);
    ``first_word``: the folded first word ("" for a text without words).
    """

    words: frozenset[str]
    entities: tuple[Entity, ...]
    free_words: tuple[str, ...]
    first_word: str


def fold(word: str) -> str:
    """Lowercase and strip accents: ``fold("Beyoncé") == "beyonce"``."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def strip_disambiguator(title: str) -> str:
    """Drop one trailing parenthetical: ``"Titanic (1997 film)"`` → ``"Titanic"``."""
    return title[: trailing_parenthetical(title)]


# split() with a capturing group returns [separator, word, separator, word, ..., tail]: one
# C-level pass gives each word and the text before it.
_SPLIT_WORDS = re.compile("(" + WORD_PATTERN.pattern + ")")


@functools.lru_cache(maxsize=1 << 16)
def view(text: str) -> TextView:
    """Analyse one text (memoised: bridge passages and questions repeat across arms and folds)."""
    pieces = _SPLIT_WORDS.split(text)
    raw = pieces[1::2]
    pairs = list(zip(pieces[0:-1:2], raw, strict=True))
    folded = [lw if (lw := w.lower()).isascii() else fold(lw) for w in raw]
    # Words separated by anything but whitespace (a comma, a quote) are not one name.
    runs = capital_runs(
        [word[0].isupper() for word in raw],
        [separator.isspace() for separator, _ in pairs],
        [word in CONNECTORS for word in folded],
    )

    entities: list[Entity] = []
    in_entity: set[int] = set()
    for indices in runs:
        k = 0
        while k < len(indices) and folded[indices[k]] in NON_NAME_OPENERS:
            k += 1
        indices = indices[k:]
        if not indices:
            continue
        in_entity.update(indices)
        words = tuple(folded[i] for i in indices)
        key = frozenset(w for w in words if w not in STOP_WORDS) or frozenset(words)
        surface = raw[indices[0]] + "".join(pairs[i][0] + raw[i] for i in indices[1:])
        entities.append(Entity(surface, words, key))
    return TextView(
        words=frozenset(folded),
        entities=tuple(entities),
        free_words=tuple(w for i, w in enumerate(folded) if i not in in_entity)
        if in_entity
        else tuple(folded),
        first_word=folded[0] if folded else "",
    )


def names(entity: Entity, words: frozenset[str], threshold: float) -> bool:
    """True if ``words`` contain at least ``threshold`` of the entity's content words.

    ``|key ∩ words| / |key| ≥ threshold``; with threshold 0.5 a question naming "Cameron"
    names the entity "James Cameron".
    """
    return len(entity.key & words) >= threshold * len(entity.key)


def relation_stems(
    words: tuple[str, ...] | frozenset[str], stem_chars: int, min_chars: int
) -> set[str]:
    """Crude stems of content words: the first ``stem_chars`` characters of each non-stop word
    with at least ``min_chars`` characters ("directed", "director" → "direc")."""
    return {w[:stem_chars] for w in words if len(w) >= min_chars and w not in STOP_WORDS}
