"""Choose ``B_rel``, the relation-bearing sentence of a bridge passage, without gold labels.

The rule (knobs and defaults in :class:`~regime_core.router.rules.RouterRules`): hop 2 of a
two-hop question is about an entity the bridge *introduces*, and the sentence that introduces
it usually carries the question's relation words ("... directed by James Cameron" for "the
director of ..."). Each bridge sentence ``i`` is scored ::

    score_i = new_entity_weight · [sentence i names an entity that is neither named by the
                                   question nor the bridge's own subject]
            + overlap_weight    · |relation stems(question) ∩ stems(sentence i)|
            + position_weight   / (1 + i)

and the highest score wins, ties going to the earliest sentence. The bridge's subject is the
entity its title names (``bridge_title``), or, without a title, the first capitalised span of
its first sentence (Wikipedia-style paragraphs open with their subject). Nothing gold is read.

>>> sel = select_b_rel(
...     "Who is the mother of the director of the film Titanic?",
...     ["Titanic is a romance film.", "It was directed by James Cameron.", "It won awards."],
...     bridge_title="Titanic (1997 film)",
... )
>>> sel.index, sel.text
(1, 'It was directed by James Cameron.')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.inputs.route_input import ROUTE_INPUT
from regime_core.router import _text
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules


@dataclass(frozen=True)
class SelectedSentence:
    """The chosen ``B_rel``: its 0-based ``index`` among the bridge sentences, its ``text`` and
    its selector ``score``."""

    index: int
    text: str
    score: float


def read_route_input(
    question: Any, bridge_sentences: Any, bridge_title: Any, where: str
) -> tuple[str, tuple[str, ...], str | None]:
    """A question, its bridge sentences and title read through
    :data:`~regime_core.inputs.route_input.ROUTE_INPUT` (``where``: the public function)."""
    text = ROUTE_INPUT.read(
        {"question": question, "bridge_sentences": bridge_sentences, "bridge_title": bridge_title},
        where=where,
    )
    return text["question"], text["bridge_sentences"], text["bridge_title"]


# --- kernel ----------------------------------------------------------------------------------


def subject_words(
    sentence_views: Sequence[_text.TextView], bridge_title: str | None
) -> frozenset[str]:
    """Content words of the bridge's own subject (its title, else its first entity)."""
    if bridge_title is not None:
        words = _text.view(_text.strip_disambiguator(bridge_title)).words
        return frozenset(w for w in words if w not in _text.STOP_WORDS) or words
    for v in sentence_views:
        if v.entities:
            return v.entities[0].key
    return frozenset()


def new_entities(
    sentence: _text.TextView,
    question: _text.TextView,
    subject: frozenset[str],
    threshold: float,
) -> list[_text.Entity]:
    """Entities of a sentence that the question does not name and that are not the subject."""
    return [
        e
        for e in sentence.entities
        if not _text.names(e, question.words, threshold)
        and not (subject and _text.names(e, subject, threshold))
    ]


def score_views(
    question: _text.TextView,
    sentences: Sequence[_text.TextView],
    subject: frozenset[str],
    rules: RouterRules,
) -> np.ndarray:
    """The selector score of each sentence (see the module docstring), float64 ``(m,)``."""
    stems = _text.relation_stems(question.free_words, rules.stem_chars, rules.min_word_chars)
    scores = np.empty(len(sentences), dtype=np.float64)
    for i, s in enumerate(sentences):
        has_new = bool(new_entities(s, question, subject, rules.entity_match_threshold))
        overlap = len(stems & _text.relation_stems(s.words, rules.stem_chars, rules.min_word_chars))
        scores[i] = (
            rules.new_entity_weight * has_new
            + rules.overlap_weight * overlap
            + rules.position_weight / (1 + i)
        )
    return scores


def _select(
    question: str, sentences: tuple[str, ...], title: str | None, rules: RouterRules
) -> SelectedSentence:
    views = [_text.view(s) for s in sentences]
    scores = score_views(_text.view(question), views, subject_words(views, title), rules)
    best = int(np.argmax(scores))  # argmax returns the first maximum: ties go to the earliest
    return SelectedSentence(best, sentences[best], float(scores[best]))


# --- public ----------------------------------------------------------------------------------


def sentence_scores(
    question: str,
    bridge_sentences: Sequence[str],
    *,
    bridge_title: str | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> np.ndarray:
    """The selector score of every bridge sentence (for inspection and teaching)."""
    question, sentences, title = read_route_input(
        question, bridge_sentences, bridge_title, "sentence_scores"
    )
    views = [_text.view(s) for s in sentences]
    return score_views(_text.view(question), views, subject_words(views, title), rules)


def select_b_rel(
    question: str,
    bridge_sentences: Sequence[str],
    *,
    bridge_title: str | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> SelectedSentence:
    """The bridge sentence most likely to carry the hop-1 → hop-2 relation (see module doc).

    Raises ValueError for a blank or non-string question or sentence, an empty bridge, or a
    blank title.
    """
    return _select(
        *read_route_input(question, bridge_sentences, bridge_title, "select_b_rel"), rules
    )


def select_b_rel_batch(
    questions: Sequence[str],
    bridge_sentence_lists: Sequence[Sequence[str]],
    *,
    bridge_titles: Sequence[str | None] | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> list[SelectedSentence]:
    """:func:`select_b_rel` for many questions, whose texts the caller has checked (the typed
    examples, or :meth:`~regime_core.router.estimator.RegimeRouter.route`)."""
    titles = bridge_titles or [None] * len(questions)
    return [
        _select(q, tuple(b), title, rules)
        for q, b, title in zip(questions, bridge_sentence_lists, titles, strict=True)
    ]
