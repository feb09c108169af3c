"""A learned ``B_rel`` selector: per-sentence features, a logistic regression, argmax per bridge.

The rule (:func:`~regime_core.router.selector.select_b_rel`) scores each bridge sentence with
three hand-weighted terms. This module learns the weights, and more cues, from the datasets'
gold relation sentences. Nothing gold and nothing of hop 2 is read at inference: the inputs are
the question, the bridge's sentences (and title, when known) and the question's and sentences'
vectors under the encoder in use.

Features
--------
One row per bridge sentence, columns :data:`FEATURE_NAMES`, defined in :data:`FEATURE_DOCS`.
Position: ``index`` (0-based), ``from_end`` (``m - 1 - index``), ``is_first``,
``inverse_position`` (``1 / (1 + index)``, the rule's position term); encoder: ``cosine`` of the
question's and the sentence's query-mode vectors, and ``cosine_gap`` (that cosine minus the
bridge's largest); text (the rule's own helpers in ``regime_core.router._text``, with
:class:`~regime_core.router.rules.RouterRules`): ``overlap`` (the rule's relation-stem overlap
with the question), ``has_new_entity`` (the rule's term) and ``new_entities`` (how many named
spans the question does not name and that are not the bridge's own subject),
``relation_words`` (how many distinct relation stems the sentence has outside its named spans),
``mentions_subject`` (the sentence names the bridge's title/subject) and ``length`` (words).

Model
-----
:class:`LearnedSelector` is a scikit-learn binary classifier over the rows: standardised
features, L2 logistic regression (``C``), learned numbers kept as ``scaler_mean_``,
``scaler_scale_``, ``coef_``, ``intercept_``; its score is the router's kernel
(:func:`~regime_core.router.estimator.router_logits`). It learns ``P(sentence is the gold
B_rel)`` pointwise; :meth:`LearnedSelector.select` takes the argmax of the score per bridge,
ties going to the earliest sentence (as the rule's). ``features`` names the columns a variant
uses (:data:`SELECTOR_VARIANTS`).

Training protocol
-----------------
Fixed, and committed, before any number on the datasets was looked at.

- **Rows.** Every 2WikiMultiHopQA item of the router's sample that has a gold relation sentence
  (``Example.relation_sentence``) and at least two bridge sentences (a one-sentence bridge has
  nothing to choose; such items are counted, never trained on, and always selected right).
  Label 1 for the gold sentence, 0 for the others.
- **Variants** (all reported, none dropped): ``learned`` (every feature; the knob's value),
  ``learned_text`` (no encoder feature: what a page without the encoder could compute) and
  ``learned_rule_terms`` (the rule's three terms with learned weights). Hyper-parameters are the
  defaults (``C = 1``, no class weights), never tuned.
- **Cross-fitting on 2WikiMultiHopQA** (:func:`cross_fit_select`): 5 folds (``config.CV_FOLDS``),
  seed ``config.SEED``. The fold of an item is the router's (:func:`selector_folds`): the items
  the router's label rule labels (``config.ROUTER_TRAIN_TIE_RULE``, ranks under the *rule's*
  ``B_rel``, which needs no gold) get exactly the fold
  :func:`~regime_core.router.estimator.cross_fit_folds` gives them in
  :func:`~regime_core.router.training.fit_routing`; the ties, which the router leaves out of its
  folds, are spread over the same folds by the same function and seed, stratified by "the gold
  sentence is the first". Each item's selection comes from a selector fitted on the other folds
  only.
- **Zero-shot on MuSiQue and HotpotQA**: one selector fitted on every 2WikiMultiHopQA row,
  applied unchanged.

>>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
>>> selector = LearnedSelector().fit(X, [1, 0, 1, 0])
>>> selector.select(X, [2, 2]).tolist()  # two bridges of two sentences: the first of each
[0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import clone
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted

from regime_core import config
from regime_core.router import _text
from regime_core.router.estimator import ScaledLogistic, cross_fit_folds, one_blas_thread
from regime_core.router.labels import EXCLUDED, outcome_labels
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import (
    check_question,
    check_rules,
    check_sentences,
    check_titles,
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

#: The selector variants reported (see the module docstring), each with the features it uses.
SELECTOR_VARIANTS: dict[str, tuple[str, ...]] = {
    "learned": FEATURE_NAMES,
    "learned_text": tuple(f for f in FEATURE_NAMES if f not in ENCODER_FEATURES),
    "learned_rule_terms": ("inverse_position", "overlap", "has_new_entity"),
}


# --------------------------------------------------------------------------------------------
# Features: texts and vectors in, one row per sentence out
# --------------------------------------------------------------------------------------------


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

    def subset(self, items: np.ndarray) -> SentenceRows:
        """The rows of the bridges ``items`` (indices, in that order)."""
        items = np.asarray(items, dtype=np.int64)
        offsets = self.offsets
        rows = (
            np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in items])
            if items.size
            else np.zeros(0, dtype=np.int64)
        )
        return SentenceRows(self.X[rows], self.sizes[items])


def _row_norms(vectors: Any) -> np.ndarray:
    if sparse.issparse(vectors):
        return np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1), dtype=np.float64)[:, 0])
    return np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))


def row_cosines(a: Any, b: Any) -> np.ndarray:
    """Cosine of row ``i`` of ``a`` with row ``i`` of ``b`` (dense arrays or scipy sparse
    matrices of one shape), float64; 0 where either row is zero."""
    if a.shape != b.shape:
        raise ValueError(f"row_cosines: shapes {a.shape} and {b.shape} differ")
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


def _check_vectors(vectors: Any, n_rows: int, what: str) -> Any:
    if not sparse.issparse(vectors):
        vectors = np.asarray(vectors)
        if not np.issubdtype(vectors.dtype, np.number):
            raise ValueError(f"{what} must be numeric, got dtype {vectors.dtype}")
    if vectors.ndim != 2 or vectors.shape[0] != n_rows:
        raise ValueError(f"{what} has shape {vectors.shape}; expected ({n_rows}, d)")
    data = vectors.data if sparse.issparse(vectors) else vectors
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what} holds NaN or infinite values")
    return vectors


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
    both come from the embedding store in query mode. Raises ValueError naming the item for an
    empty or non-string question or sentence, and for vectors of the wrong shape.
    """
    n = len(questions)
    if isinstance(bridge_sentence_lists, str) or len(bridge_sentence_lists) != n:
        raise ValueError(f"{n} questions but bridge_sentence_lists is not a list of {n} bridges")
    titles = check_titles(bridge_titles, n)
    rules = check_rules(rules)
    bridges = [check_sentences(bridge_sentence_lists[i], f"item {i}") for i in range(n)]
    sizes = np.asarray([len(b) for b in bridges], dtype=np.int64)
    n_rows = int(sizes.sum())
    question_vectors = _check_vectors(question_vectors, n, "question_vectors")
    sentence_vectors = _check_vectors(sentence_vectors, n_rows, "sentence_vectors")
    if question_vectors.shape[1] != sentence_vectors.shape[1]:
        raise ValueError(
            f"question_vectors have {question_vectors.shape[1]} dimensions, sentence_vectors "
            f"{sentence_vectors.shape[1]}: they must come from one encoder"
        )
    item = np.repeat(np.arange(n, dtype=np.int64), sizes)
    cosines = row_cosines(question_vectors[item], sentence_vectors)
    X = np.empty((n_rows, N_FEATURES), dtype=np.float64)
    row = 0
    for i in range(n):
        q = _text.view(check_question(questions[i], f"item {i}"))
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
    bridge has no gold sentence, all its rows 0). Raises ValueError for a gold index outside
    its bridge."""
    sizes = np.asarray(sizes, dtype=np.int64)
    gold = np.asarray(gold, dtype=np.int64)
    if gold.shape != sizes.shape:
        raise ValueError(f"gold has {gold.shape[0]} entries for {sizes.shape[0]} bridges")
    bad = np.flatnonzero((gold < -1) | (gold >= sizes))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"item {i}: gold sentence {gold[i]} is outside its {sizes[i]} sentences")
    y = np.zeros(int(sizes.sum()), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    has = gold >= 0
    y[offsets[:-1][has] + gold[has]] = 1
    return y


def argmax_per_bridge(scores: Any, sizes: Any) -> np.ndarray:
    """The index of the best-scored sentence of each bridge (ties: the earliest); pure."""
    scores = np.asarray(scores, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    if scores.ndim != 1 or scores.shape[0] != int(sizes.sum()):
        raise ValueError(f"{scores.shape[0]} scores for bridges of {int(sizes.sum())} sentences")
    if np.any(sizes < 1):
        raise ValueError("argmax_per_bridge: every bridge needs at least one sentence")
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # np.argmax returns the first maximum: ties go to the earliest sentence
    return np.asarray(
        [int(np.argmax(scores[offsets[i] : offsets[i + 1]])) for i in range(sizes.shape[0])],
        dtype=np.int64,
    )


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------


def _check_feature_names(features: Any) -> tuple[int, ...] | None:
    if features is None:
        return None
    if isinstance(features, str) or not isinstance(features, Sequence) or not features:
        raise ValueError(
            f"LearnedSelector: features must be None or a non-empty list of names from "
            f"FEATURE_NAMES, got {features!r}"
        )
    unknown = [f for f in features if f not in FEATURE_NAMES]
    if unknown:
        raise ValueError(f"LearnedSelector: unknown features {unknown}; known {FEATURE_NAMES}")
    if len(set(features)) != len(features):
        raise ValueError(f"LearnedSelector: features lists a name twice: {features!r}")
    return tuple(FEATURE_NAMES.index(f) for f in features)


class LearnedSelector(ScaledLogistic):
    """Logistic regression over per-sentence rows: ``P(sentence is B_rel)``; argmax per bridge.

    Labels are binary; the larger (``classes_[1]``, 1 for :func:`gold_rows`) is "is B_rel".

    Parameters
    ----------
    C : inverse L2 regularisation strength of the logistic regression.
    class_weight : None, "balanced" or a dict, passed to ``LogisticRegression``.
    features : None (every column of ``X``) or names from :data:`FEATURE_NAMES`; then ``X``
        must have the :data:`FEATURE_NAMES` columns and only the named ones are used.
    random_state : passed to ``LogisticRegression`` (lbfgs is deterministic anyway).
    max_iter : solver iterations.
    """

    def __init__(
        self,
        C: float = 1.0,
        class_weight: dict[Any, float] | str | None = None,
        features: Sequence[str] | None = None,
        random_state: int | None = config.SEED,
        max_iter: int = 1000,
    ) -> None:
        super().__init__(C, class_weight, random_state, max_iter)
        self.features = features

    def _columns(self, X: np.ndarray) -> np.ndarray:
        columns = _check_feature_names(self.features)
        if columns is None:
            return X
        if X.shape[1] != N_FEATURES:
            raise ValueError(
                f"LearnedSelector(features=...) needs the {N_FEATURES} columns of "
                f"FEATURE_NAMES, got {X.shape[1]}"
            )
        return X[:, list(columns)]

    def fit(self, X: Any, y: Any) -> LearnedSelector:
        """Standardise the used columns and fit the logistic regression; returns ``self``."""
        _check_feature_names(self.features)
        self._fit_scaled(X, y)
        return self

    def select(self, X: Any, sizes: Any) -> np.ndarray:
        """Per bridge (``sizes[i]`` consecutive rows each), the index of its best sentence."""
        return argmax_per_bridge(self.decision_function(X), sizes)

    def coefficients(self) -> dict[str, float]:
        """The standardised coefficients by feature name (``x0``... without ``features``)."""
        check_is_fitted(self)
        names = (
            list(self.features)
            if self.features is not None
            else [f"x{j}" for j in range(self.coef_.shape[1])]
        )
        return dict(zip(names, self.coef_[0].tolist(), strict=True))


# --------------------------------------------------------------------------------------------
# Cross-fitting
# --------------------------------------------------------------------------------------------


def trainable(sizes: Any, gold: Any) -> np.ndarray:
    """Items a selector can learn from: a gold sentence and at least two sentences."""
    return (np.asarray(gold) >= 0) & (np.asarray(sizes) >= 2)


def _fill_folds(strata: np.ndarray, n_splits: int, seed: int) -> np.ndarray:
    """Folds for items the router leaves unlabelled: :func:`cross_fit_folds` stratified by
    ``strata`` when each stratum fills every fold, else a seeded shuffle dealt round-robin."""
    n = strata.shape[0]
    _, counts = np.unique(strata, return_counts=True)
    if counts.size == 2 and counts.min() >= n_splits:
        return cross_fit_folds(strata, n_splits=n_splits, seed=seed)
    return (np.random.default_rng(seed).permutation(n) % n_splits).astype(np.int64)


def selector_folds(
    rank_q: Any,
    rank_union: Any,
    gold_is_first: Any,
    *,
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE,
    label_k: int | None = None,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
) -> np.ndarray:
    """The router's fold of every item (see the module docstring), ``(n,)`` in ``0..n_splits-1``.

    ``rank_q``/``rank_union``: the hop-2 target's ranks under ``q`` and under ``union`` with the
    rule's ``B_rel`` (what the router is trained on). Items the label rule labels get the fold
    :func:`~regime_core.router.training.fit_routing` gives them (``cross_fit_folds`` over the
    labelled items, in order); tied items (``tie_rule="exclude"``) are spread over the same folds,
    stratified by ``gold_is_first`` (a boolean per item).
    """
    labels = outcome_labels(rank_q, rank_union, tie_rule=tie_rule, k=label_k)
    first = column_or_1d(np.asarray(gold_is_first, dtype=bool))
    if first.shape[0] != labels.shape[0]:
        raise ValueError(f"gold_is_first has {first.shape[0]} items, the ranks {labels.shape[0]}")
    kept = labels != EXCLUDED
    folds = np.full(labels.shape[0], -1, dtype=np.int64)
    folds[kept] = cross_fit_folds(labels[kept], n_splits=n_splits, seed=seed)
    if (~kept).any():
        folds[~kept] = _fill_folds(first[~kept].astype(np.int64), n_splits, seed)
    return folds


def cross_fit_select(
    rows: SentenceRows,
    gold: Any,
    folds: Any,
    *,
    estimator: Any = None,
) -> np.ndarray:
    """Out-of-fold selections: item ``i`` (fold ``folds[i]``) is selected by a clone of
    ``estimator`` (default ``LearnedSelector()``) fitted on the :func:`trainable` items of the
    other folds only. ``gold[i]`` is item ``i``'s gold sentence (-1: none; such items are
    selected, never trained on). Returns the selected index per item; deterministic."""
    gold = np.asarray(gold, dtype=np.int64)
    folds = column_or_1d(np.asarray(folds))
    if gold.shape[0] != rows.n or folds.shape[0] != rows.n:
        raise ValueError(
            f"{rows.n} bridges but {gold.shape[0]} gold indices and {folds.shape[0]} folds"
        )
    if not np.issubdtype(folds.dtype, np.integer) or np.any(folds < 0):
        raise ValueError("folds must be non-negative integers, one per item")
    y = gold_rows(rows.sizes, gold)
    item = rows.item
    can_train = trainable(rows.sizes, gold)
    template = LearnedSelector() if estimator is None else estimator
    out = np.full(rows.n, -1, dtype=np.int64)
    with one_blas_thread():  # a handful of tiny fits
        for fold in np.unique(folds):
            test = folds == fold
            train_rows = np.isin(item, np.flatnonzero(can_train & ~test))
            if not train_rows.any():
                raise ValueError(f"fold {fold}: the other folds hold no item to train on")
            model = clone(template).fit(rows.X[train_rows], y[train_rows])
            held = rows.subset(np.flatnonzero(test))
            out[test] = model.select(held.X, held.sizes)
    return out


def fit_selector(rows: SentenceRows, gold: Any, *, estimator: Any = None) -> Any:
    """A clone of ``estimator`` (default ``LearnedSelector()``) fitted on every
    :func:`trainable` item: the selector applied zero-shot elsewhere."""
    gold = np.asarray(gold, dtype=np.int64)
    if gold.shape[0] != rows.n:
        raise ValueError(f"{rows.n} bridges but {gold.shape[0]} gold indices")
    y = gold_rows(rows.sizes, gold)
    train_rows = np.isin(rows.item, np.flatnonzero(trainable(rows.sizes, gold)))
    if not train_rows.any():
        raise ValueError("fit_selector: no item has a gold sentence and two or more sentences")
    template = LearnedSelector() if estimator is None else estimator
    with one_blas_thread():
        return clone(template).fit(rows.X[train_rows], y[train_rows])
