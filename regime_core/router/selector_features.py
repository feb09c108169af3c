"""The learned ``B_rel`` selector's features: one row per bridge sentence, texts and vectors in.

Columns :data:`FEATURE_NAMES`, each defined in :data:`FEATURE_DOCS`: the sentence's position,
its cosine with the question under the encoder in use, and text cues computed with the rule's own
helpers (``regime_core.router._text``, :class:`~regime_core.router.rules.RouterRules`). Nothing
gold and nothing of hop 2 is read. :func:`gold_rows` labels the rows and
:func:`argmax_per_bridge` turns row scores into one choice per bridge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from regime_core.router import _text
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import (
    new_entities,
    subject_words,
)

FEATURE_NAMES: tuple[str, ...] = (
    "index",
    "from_end",
    "is_first",
    "inverse_position",
    "cosine",
    "cosine_gap",
    "overlap",
    "has_new_entity",
    "new_entities",
    "relation_words",
    "mentions_subject",
    "length",
)

FEATURE_DOCS: dict[str, str] = {
    "index": "The sentence's 0-based position i in the bridge.",
    "from_end": "m - 1 - i for a bridge of m sentences (0 for the last sentence).",
    "is_first": "1 for the bridge's first sentence, else 0.",
    "inverse_position": "1 / (1 + i), the position term of the rule's score.",
    "cosine": "Cosine of the question's and the sentence's vectors (query mode, the encoder in "
    "use: the sentence's vector is the one the union query adds); 0 if either is zero.",
    "cosine_gap": "The sentence's cosine minus the largest cosine of its bridge (0 for the "
    "bridge's most question-like sentence, negative otherwise).",
    "overlap": "The rule's overlap term: how many relation stems of the question (first "
    "RouterRules.stem_chars characters of its non-stop words of at least "
    "RouterRules.min_word_chars characters outside entity spans) the sentence's words share.",
    "has_new_entity": "The rule's entity term: 1 if the sentence names an entity that the "
    "question does not name and that is not the bridge's own subject, else 0.",
    "new_entities": "How many such entities (named spans new to the question, not the subject).",
    "relation_words": "How many distinct relation stems the sentence has outside its own "
    "entity spans (same stem rule as overlap): its relational vocabulary.",
    "mentions_subject": "1 if the sentence holds at least RouterRules.entity_match_threshold of "
    "the content words of the bridge's subject (its title without disambiguator, else the first "
    "entity of its first sentence with one), else 0.",
    "length": "Number of words of the sentence (the router's word pattern).",
}
"""the learned selector's twelve features of each bridge sentence, from the question, the bridge
and the encoder's vectors (selector = learned)"""

N_FEATURES = len(FEATURE_NAMES)
ENCODER_FEATURES: tuple[str, ...] = ("cosine", "cosine_gap")


@dataclass(frozen=True)
class SentenceRows:
    """Per-sentence feature rows of ``n`` bridges, concatenated in bridge order.

    ``X``: ``(N, N_FEATURES)`` float64, columns in :data:`FEATURE_NAMES` order; ``sizes``:
    ``(n,)`` sentences per bridge (``N = sizes.sum()``); ``item``: ``(N,)`` the bridge of each
    row; ``position``: ``(N,)`` the row's index within its bridge.
    """

    X: np.ndarray
    sizes: np.ndarray

    @property
    def n(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def offsets(self) -> np.ndarray:
        """``(n + 1,)``: rows of bridge ``i`` are ``offsets[i]:offsets[i + 1]``."""
        return np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    @property
    def item(self) -> np.ndarray:
        return np.repeat(np.arange(self.n, dtype=np.int64), self.sizes)

    @property
    def position(self) -> np.ndarray:
        return np.arange(int(self.sizes.sum()), dtype=np.int64) - np.repeat(
            self.offsets[:-1], self.sizes
        )

    def rows_of(self, items: np.ndarray) -> np.ndarray:
        """The row indices of the bridges ``items`` (indices, in that order)."""
        offsets = self.offsets
        if not len(items):
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in items])

    def subset(self, items: np.ndarray) -> SentenceRows:
        """The rows of the bridges ``items`` (indices, in that order)."""
        items = np.asarray(items, dtype=np.int64)
        return SentenceRows(self.X[self.rows_of(items)], self.sizes[items])


def _row_norms(vectors: Any) -> np.ndarray:
    if sparse.issparse(vectors):
        return np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1), dtype=np.float64)[:, 0])
    return np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))


def row_cosines(a: Any, b: Any) -> np.ndarray:
    """Cosine of row ``i`` of ``a`` with row ``i`` of ``b`` (dense arrays or scipy sparse
    matrices of one shape), float64; 0 where either row is zero."""
    if sparse.issparse(a) or sparse.issparse(b):
        a = sparse.csr_matrix(a, dtype=np.float64)
        b = sparse.csr_matrix(b, dtype=np.float64)
        dots = np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64)[:, 0]
    else:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        dots = np.einsum("ij,ij->i", a, b)
    norms = _row_norms(a) * _row_norms(b)
    out = np.zeros(dots.shape[0], dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


def _text_row(
    question: _text.TextView,
    stems: set[str],
    sentence: str,
    view: _text.TextView,
    subject: frozenset[str],
    rules: RouterRules,
) -> tuple[float, float, float, float, float, float]:
    threshold = rules.entity_match_threshold
    new = new_entities(view, question, subject, threshold)
    own = _text.relation_stems(view.words, rules.stem_chars, rules.min_word_chars)
    free = _text.relation_stems(view.free_words, rules.stem_chars, rules.min_word_chars)
    mentions = bool(subject) and len(subject & view.words) >= threshold * len(subject)
    return (
        float(len(stems & own)),
        float(bool(new)),
        float(len(new)),
        float(len(free)),
        float(mentions),
        float(len(_text.WORD_PATTERN.findall(sentence))),
    )


def sentence_features(
    questions: Sequence[str],
    bridge_sentence_lists: Sequence[Sequence[str]],
    question_vectors: Any,
    sentence_vectors: Any,
    *,
    bridge_titles: Sequence[str | None] | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> SentenceRows:
    """The feature rows of every sentence of every bridge (:data:`FEATURE_DOCS`); pure.

    ``question_vectors``: ``(n, d)``, row ``i`` the vector of ``questions[i]``;
    ``sentence_vectors``: ``(N, d)``, the vectors of every bridge's sentences concatenated in
    order (bridge 0's sentences, then bridge 1's, ...), dense or scipy sparse. In the pipeline
    both come from the embedding store in query mode, so one encoder, their rows counted
    against the texts there (:func:`~regime_core.retrieval.vectors.checked_vectors`).
    """
    n = len(questions)
    titles = bridge_titles or [None] * n
    bridges = [tuple(bridge_sentence_lists[i]) for i in range(n)]
    sizes = np.asarray([len(b) for b in bridges], dtype=np.int64)
    n_rows = int(sizes.sum())
    item = np.repeat(np.arange(n, dtype=np.int64), sizes)
    cosines = row_cosines(question_vectors[item], sentence_vectors)
    X = np.empty((n_rows, N_FEATURES), dtype=np.float64)
    row = 0
    for i in range(n):
        q = _text.view(questions[i])
        stems = _text.relation_stems(q.free_words, rules.stem_chars, rules.min_word_chars)
        views = [_text.view(s) for s in bridges[i]]
        subject = subject_words(views, titles[i])
        m = len(bridges[i])
        best = float(cosines[row : row + m].max())
        for j, (sentence, view) in enumerate(zip(bridges[i], views, strict=True)):
            c = float(cosines[row])
            X[row] = (
                float(j),
                float(m - 1 - j),
                float(j == 0),
                1.0 / (1.0 + j),
                c,
                c - best,
                *_text_row(q, stems, sentence, view, subject, rules),
            )
            row += 1
    return SentenceRows(X, sizes)


def gold_rows(sizes: Any, gold: Any) -> np.ndarray:
    """Row labels: 1 for the gold sentence of each bridge, 0 elsewhere (``gold[i] = -1``: the
    bridge has no gold sentence, all its rows 0). A gold index is one of its bridge's sentences,
    checked where the :class:`~regime_core.schema.Example` is built."""
    sizes = np.asarray(sizes, dtype=np.int64)
    gold = np.asarray(gold, dtype=np.int64)
    y = np.zeros(int(sizes.sum()), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    has = gold >= 0
    y[offsets[:-1][has] + gold[has]] = 1
    return y


def argmax_per_bridge(scores: Any, sizes: Any) -> np.ndarray:
    """The index of the best-scored sentence of each bridge (ties: the earliest); pure."""
    scores = np.asarray(scores, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # np.argmax returns the first maximum: ties go to the earliest sentence
    return np.asarray(
        [int(np.argmax(scores[offsets[i] : offsets[i + 1]])) for i in range(sizes.shape[0])],
        dtype=np.int64,
    )
