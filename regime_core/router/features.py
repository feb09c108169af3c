"""The router's five surface features: cheap, deterministic, computed from text alone.

Nothing gold is read: the inputs are the question, the bridge passage's sentences (and title,
when known) and the ``B_rel`` chosen by :func:`~regime_core.router.selector.select_b_rel`.
Features 1-3 describe the question; 4 and 5 are proxies of the regime predicates P1 ("the
question already names the hop-2 entity") and P2 ("the bridge names it").

>>> X = extract_features(
...     ["Who is the mother of the director of the film Titanic?"],
...     [["Titanic is a romance film.", "It was directed by James Cameron."]],
...     ["It was directed by James Cameron."],
...     bridge_titles=["Titanic (1997 film)"],
... )
>>> dict(zip(FEATURE_NAMES, X[0].tolist()))  # doctest: +NORMALIZE_WHITESPACE
{'comparison_cues': 0.0, 'yes_no_opener': 0.0, 'question_entities': 1.0,
 'question_names_b_rel_entity': 0.0, 'b_rel_has_new_entity': 1.0}
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from regime_core.inputs.router_file import FEATURE_NAMES
from regime_core.router import _text
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import (
    SelectedSentence,
    score_views,
    subject_words,
)

FEATURE_DOCS: dict[str, str] = {
    "comparison_cues": "Number of the question's words outside entity spans that are comparison "
    "cues (RouterRules.comparison_cues: both, same, or, first, older, more, compared, ...); "
    "repeats count. Comparison questions name both entities, so q alone tends to suffice.",
    "yes_no_opener": "1 if the question's first word is a yes/no verb (RouterRules.yes_no_openers: "
    "is, are, was, did, does, has, can, could, ...), else 0.",
    "question_entities": "Number of capitalised entity spans in the question (maximal runs of "
    "capitalised words with connectors such as 'of'; leading stop words are dropped, so a "
    "sentence-initial 'Who' or 'Is' never counts, a sentence-initial name does).",
    "question_names_b_rel_entity": "P1 proxy: 1 if the question names at least one entity of the "
    "selected B_rel other than the bridge's own subject (holds at least "
    "RouterRules.entity_match_threshold of its content words), else 0.",
    "b_rel_has_new_entity": "P2 proxy: 1 if the selected B_rel names at least one entity that is "
    "neither named by the question nor the bridge's own subject, else 0.",
}
"""the router's five features, from the question and its chosen B_rel"""

# Bump when a feature's definition changes in a way the behavioural hash below might miss.
FEATURE_SPEC_VERSION = "regime-router-features/1"

N_FEATURES = len(FEATURE_NAMES)


@dataclass(frozen=True)
class Featurized:
    """Output of :func:`featurize`: the feature matrix and the ``B_rel`` chosen per item."""

    X: np.ndarray
    selections: list[SelectedSentence]


@functools.cache
def _word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


def _feature_row(
    question: _text.TextView,
    b_rel: _text.TextView,
    subject: frozenset[str],
    rules: RouterRules,
) -> tuple[float, float, float, float, float]:
    cues = _word_set(rules.comparison_cues)
    threshold = rules.entity_match_threshold
    non_subject = [
        e for e in b_rel.entities if not (subject and _text.names(e, subject, threshold))
    ]
    named = [_text.names(e, question.words, threshold) for e in non_subject]
    return (
        float(sum(w in cues for w in question.free_words)),
        float(question.first_word in _word_set(rules.yes_no_openers)),
        float(len(question.entities)),
        float(any(named)),
        float(not all(named)),
    )


def extract_features(
    questions: Sequence[str],
    bridge_sentence_lists: Sequence[Sequence[str]],
    b_rel_texts: Sequence[str],
    *,
    bridge_titles: Sequence[str | None] | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> np.ndarray:
    """The ``(n, 5)`` float64 feature matrix, columns in :data:`FEATURE_NAMES` order.

    ``b_rel_texts[i]`` is the relation sentence used for item ``i`` (normally the selector's
    choice, see :func:`featurize`). The bridge sentences and title only identify the bridge's
    own subject, which features 4 and 5 ignore. Definitions: :data:`FEATURE_DOCS`.
    The texts are the typed examples' (or those of
    :meth:`~regime_core.router.estimator.RegimeRouter.route`, checked there).
    """
    n = len(questions)
    titles = bridge_titles or [None] * n
    X = np.empty((n, N_FEATURES), dtype=np.float64)
    for i in range(n):
        q = _text.view(questions[i])
        views = [_text.view(s) for s in bridge_sentence_lists[i]]
        b_rel = _text.view(b_rel_texts[i])
        X[i] = _feature_row(q, b_rel, subject_words(views, titles[i]), rules)
    return X


def featurize(
    questions: Sequence[str],
    bridge_sentence_lists: Sequence[Sequence[str]],
    *,
    bridge_titles: Sequence[str | None] | None = None,
    rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> Featurized:
    """Select ``B_rel`` and compute the five features in one pass (the text is analysed once).

    Equivalent to :func:`~regime_core.router.selector.select_b_rel_batch` followed by
    :func:`extract_features` on the selected texts.
    """
    n = len(questions)
    titles = bridge_titles or [None] * n
    X = np.empty((n, N_FEATURES), dtype=np.float64)
    selections: list[SelectedSentence] = []
    for i in range(n):
        q = _text.view(questions[i])
        sentences = bridge_sentence_lists[i]
        views = [_text.view(s) for s in sentences]
        subject = subject_words(views, titles[i])
        scores = score_views(q, views, subject, rules)
        best = int(np.argmax(scores))  # first maximum: ties go to the earliest sentence
        selections.append(SelectedSentence(best, sentences[best], float(scores[best])))
        X[i] = _feature_row(q, views[best], subject, rules)
    return Featurized(X, selections)


# --- the feature spec a saved router is checked against --------------------------------------

# Hand-written probes: their features are hashed into the spec, so any change in behaviour
# (of the span rule, the lexicons or the selector) changes the spec and old models refuse to load.
_PROBES: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    (
        "Who is the mother of the director of the film Kestrel Bay?",
        ("Kestrel Bay is a 1931 film.", "It was directed by Odile Marchetti of the Lyon School."),
        "Kestrel Bay (film)",
    ),
    (
        "Which film came out first, Kestrel Bay or The Amber Gate?",
        ("The Amber Gate is a silent film.", "It premiered in Oslo before Kestrel Bay."),
        None,
    ),
    (
        "Are both Tomas Ruiz and Ana Beyoncé Lind from the same country?",
        ("Tomas Ruiz is a poet.",),
        None,
    ),
    (
        "Did the founder of Quillmark study in Zürich?",
        ("Quillmark was founded by Ida Brenn.",),
        None,
    ),
)


def feature_spec(rules: RouterRules = DEFAULT_ROUTER_RULES) -> str:
    """The identity of the feature definitions: version + hash of the rules, the lexicons and
    the features of fixed probe questions. Saved routers record it; loading checks it."""
    out = featurize(
        [p[0] for p in _PROBES],
        [p[1] for p in _PROBES],
        bridge_titles=[p[2] for p in _PROBES],
        rules=rules,
    )
    payload = {
        "names": FEATURE_NAMES,
        "rules": rules.to_dict(),
        "connectors": sorted(_text.CONNECTORS),
        "non_name_openers": sorted(_text.NON_NAME_OPENERS),
        "stop_words": sorted(_text.STOP_WORDS),
        "probe_features": out.X.tolist(),
        "probe_selection": [s.index for s in out.selections],
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{FEATURE_SPEC_VERSION}+{digest[:12]}"


FEATURE_SPEC: str = feature_spec()
