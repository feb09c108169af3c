"""The learned B_rel selector's features: each feature on hand-made bridges, sparse vectors,
bad inputs, the row labels and the argmax per bridge. Hand-made bridges only; no dataset text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import sparse

from regime_core.router.selector_features import (
    FEATURE_DOCS,
    FEATURE_NAMES,
    SentenceRows,
    argmax_per_bridge,
    gold_rows,
    row_cosines,
    sentence_features,
)

KESTREL_Q = "Who is the mother of the director of the film Kestrel Bay?"
KESTREL = (
    "Kestrel Bay is a 1931 film.",
    "It was directed by Odile Marchetti of the Lyon School.",
    "The film premiered in Oslo.",
)
QUILL_Q = "Where was the founder of Quillmark born?"
QUILL = ("Quillmark is a firm in Oslo.", "Quillmark was founded by Ida Brenn and Tomas Ruiz.")


def _features(
    question: str, bridge: tuple[str, ...], sentence_vectors: Any, title: str | None
) -> list[dict[str, float]]:
    rows = sentence_features(
        [question], [bridge], np.array([[1.0, 0.0]]), sentence_vectors, bridge_titles=[title]
    )
    return [dict(zip(FEATURE_NAMES, row.tolist(), strict=True)) for row in rows.X]


def test_every_feature_is_documented() -> None:
    assert tuple(FEATURE_DOCS) == FEATURE_NAMES


def test_features_of_a_titled_bridge() -> None:
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 2.0]])  # cosines 1, 0.6, 0
    f = _features(KESTREL_Q, KESTREL, vectors, "Kestrel Bay (film)")
    exact = [{k: v for k, v in row.items() if k not in ("cosine", "cosine_gap", "inverse_position")}
             for row in f]  # fmt: skip
    # question relation stems: {mothe, direc, film}; subject: {kestrel, bay}
    assert exact == [
        {"index": 0, "from_end": 2, "is_first": 1, "overlap": 1, "has_new_entity": 0,
         "new_entities": 0, "relation_words": 2, "mentions_subject": 1, "length": 6},
        {"index": 1, "from_end": 1, "is_first": 0, "overlap": 1, "has_new_entity": 1,
         "new_entities": 1, "relation_words": 1, "mentions_subject": 0, "length": 10},
        {"index": 2, "from_end": 0, "is_first": 0, "overlap": 1, "has_new_entity": 1,
         "new_entities": 1, "relation_words": 2, "mentions_subject": 0, "length": 5},
    ]  # fmt: skip
    assert [row["inverse_position"] for row in f] == pytest.approx([1.0, 0.5, 1 / 3], abs=1e-15)
    assert [row["cosine"] for row in f] == pytest.approx([1.0, 0.6, 0.0], abs=1e-12)
    assert [row["cosine_gap"] for row in f] == pytest.approx([0.0, -0.4, -1.0], abs=1e-12)


def test_features_of_an_untitled_bridge_take_its_first_entity_as_subject() -> None:
    vectors = np.array([[0.0, 1.0], [0.0, 0.0]])  # a zero vector has cosine 0
    f = _features(QUILL_Q, QUILL, vectors, None)
    # subject: "Quillmark"; question stems {found, born}; "and" joins two names, not one
    assert [(r["has_new_entity"], r["new_entities"]) for r in f] == [(1, 1), (1, 2)]
    assert [r["overlap"] for r in f] == [0, 1]
    assert [r["relation_words"] for r in f] == [1, 1]
    assert [r["mentions_subject"] for r in f] == [1, 1]
    assert [r["length"] for r in f] == [6, 9]
    assert [r["cosine"] for r in f] == [0.0, 0.0]
    assert [r["cosine_gap"] for r in f] == [0.0, 0.0]


def test_a_named_subject_is_no_new_entity_and_a_question_entity_is_none_either() -> None:
    f = _features(
        "Which country is Tomas Ruiz from?",
        ("Ana Lind met Tomas Ruiz.", "Ana Lind was born in Peru."),
        np.eye(2),
        "Ana Lind",
    )
    assert [(r["has_new_entity"], r["new_entities"]) for r in f] == [(0, 0), (1, 1)]
    assert [r["mentions_subject"] for r in f] == [1, 1]


def test_sparse_vectors_give_the_dense_cosines() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(5, 7))
    a[2] = 0.0
    assert row_cosines(sparse.csr_matrix(a), sparse.csr_matrix(b)) == pytest.approx(
        row_cosines(a, b), abs=1e-12
    )
    assert row_cosines(a, b)[2] == 0.0
    assert row_cosines(a[:1], a[:1])[0] == pytest.approx(1.0, abs=1e-12)


def test_gold_rows_and_the_argmax_per_bridge() -> None:
    assert gold_rows([3, 1, 2], [2, 0, -1]).tolist() == [0, 0, 1, 1, 0, 0]
    # ties go to the earliest sentence, as the rule's
    assert argmax_per_bridge([0.5, 0.9, 0.9, 0.0, -1.0, -1.0], [3, 1, 2]).tolist() == [1, 0, 0]


def test_sentence_rows_subset_keeps_the_bridges_in_order() -> None:
    rows = SentenceRows(np.arange(12, dtype=float).reshape(6, 2), np.array([3, 1, 2]))
    assert rows.item.tolist() == [0, 0, 0, 1, 2, 2]
    assert rows.position.tolist() == [0, 1, 2, 0, 0, 1]
    sub = rows.subset(np.array([2, 0]))
    assert sub.sizes.tolist() == [2, 3]
    assert sub.X[:, 0].tolist() == [8.0, 10.0, 0.0, 2.0, 4.0]
