"""Query arms: the texts and weights of each arm's hop-2 query, and their combined vector.

Arms (``config.ARMS``), with ``f_q`` the encoder in query mode and ``α`` the settings' weight
(:class:`~regime_core.retrieval.settings.RetrievalSettings`):

============  =======================================================
``q``         ``f_q(question)``
``bridge``    ``f_q(bridge passage text)``
``union``     ``f_q(question) + α·f_q(B_rel)``
``knockout``  ``f_q(question) + α·f_q(bridge text without B_rel)``
``entity``    ``f_q(question) + α·f_q(hop-2 entity as mentioned)``
============  =======================================================

An example that lacks what an arm is built from is *missing* from that arm, with a reason
(``MISSING_*``); it is counted, never dropped silently. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from regime_core.encoders.vectors import l2_normalize
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.retrieval.vectors import Vectors, dense_rows, is_sparse
from regime_core.schema import Example

# Queries combined per block when the text vectors are sparse (rows densified per block).
_SPARSE_BLOCK = 256

MISSING_B_REL = "no B_rel: the bridge has no identified relation sentence"
MISSING_KNOCKOUT_TEXT = "knockout: the bridge has no sentence besides B_rel"
MISSING_ENTITY = "entity: the example has no hop-2 entity mention"
MISSING_B_REL_NOT_IN_BRIDGE = "knockout: the B_rel text given is not a sentence of the bridge"


class MissingArmInput(ValueError):
    """An example lacks what an arm's query is built from (``reason`` says what)."""

    def __init__(self, example_id: str, arm: str, reason: str) -> None:
        super().__init__(f"example {example_id!r}, arm {arm!r}: {reason}")
        self.example_id = example_id
        self.arm = arm
        self.reason = reason


def resolve_b_rel(example: Example, b_rel: int | str | None) -> tuple[int | None, str | None]:
    """``(sentence index, sentence text)`` of a B_rel given as an index, a text or None.

    A text that is not one of the bridge's sentences keeps index None (``union`` can still use
    it; ``knockout`` cannot remove it). An index outside the bridge raises ValueError.
    """
    sentences = example.bridge.sentences
    if b_rel is None:
        return None, None
    if isinstance(b_rel, str):
        text = b_rel.strip()
        if not text:
            return None, None
        matches = [i for i, s in enumerate(sentences) if s == text]
        return (matches[0] if matches else None), text
    index = int(b_rel)
    if not 0 <= index < len(sentences):
        raise ValueError(
            f"example {example.id!r}: b_rel index {index} is outside the bridge's "
            f"{len(sentences)} sentences"
        )
    return index, sentences[index]


def arm_query_texts(
    example: Example, arm: str, b_rel: int | str | None, settings: RetrievalSettings
) -> list[tuple[str, float]]:
    """The ``(text, weight)`` parts of an arm's query for one example; pure.

    The bridge side weighs ``settings.alpha``. ``settings.knockout_single`` says what
    ``knockout`` queries with when ``B_rel`` is the bridge's only sentence: ``"title"``, the
    bridge's title (what is left of the bridge without ``B_rel``), or ``"exclude"``, nothing (the
    item is missing from the arm, counted).

    The query vector is ``Σ weight·f_q(text)``, re-normalised. ``b_rel`` is the bridge's
    relation sentence as an index into ``example.bridge.sentences`` or as text (gold:
    ``example.relation_sentence``). Raises :class:`MissingArmInput` when the example lacks
    what the arm needs, ValueError for a ``b_rel`` index outside the bridge. ``arm`` is one of
    ``config.ARMS``: :func:`~regime_core.retrieval.retrieve_arms` checks the arms it is given.

    >>> arm_query_texts(ex, "union", 1, settings)               # doctest: +SKIP
    [('Who directed the film?', 1.0), ('It was directed by Ann Lee.', 0.25)]
    """
    alpha = settings.alpha
    question = (example.question, 1.0)
    if arm == "q":
        return [question]
    if arm == "bridge":
        return [(example.bridge.text, 1.0)]
    if arm == "entity":
        entity = example.hop2_entity.strip()
        if not entity:
            raise MissingArmInput(example.id, arm, MISSING_ENTITY)
        return [question, (entity, alpha)]
    index, text = resolve_b_rel(example, b_rel)
    if text is None:
        raise MissingArmInput(example.id, arm, MISSING_B_REL)
    if arm == "union":
        return [question, (text, alpha)]
    # knockout: the bridge with its relation sentence removed
    if index is None:
        raise MissingArmInput(example.id, arm, MISSING_B_REL_NOT_IN_BRIDGE)
    rest = " ".join(s for i, s in enumerate(example.bridge.sentences) if i != index)
    if not rest.strip() and settings.knockout_single == "title":
        rest = example.bridge.title
    if not rest.strip():
        raise MissingArmInput(example.id, arm, MISSING_KNOCKOUT_TEXT)
    return [question, (rest, alpha)]


@dataclass(frozen=True)
class ArmPlan:
    """Which examples an arm has a query for (``kept``, indices), the query's ``(text, weight)``
    parts per kept example, and ``(example id, reason)`` for every example left out."""

    kept: tuple[int, ...]
    parts: tuple[tuple[tuple[str, float], ...], ...]
    missing: tuple[tuple[str, str], ...]

    def texts(self) -> list[str]:
        """The distinct query texts of the plan, in first-use order."""
        return list(dict.fromkeys(t for parts in self.parts for t, _ in parts))

    def query_vectors(self, text_vectors: np.ndarray, text_row: dict[str, int]) -> np.ndarray:
        """The kept examples' query vectors (:func:`combine_query_vectors`) from the vectors
        of the texts, ``text_row[text]`` being a text's row of ``text_vectors``."""
        return combine_query_vectors(
            text_vectors, [[(text_row[t], w) for t, w in parts] for parts in self.parts]
        )


def plan_arm(
    examples: Sequence[Example],
    arm: str,
    b_rel: Sequence[int | str | None],
    settings: RetrievalSettings,
) -> ArmPlan:
    """:func:`arm_query_texts` of every example; the ones an arm cannot query are ``missing``.

    >>> gold = [ex.relation_sentence for ex in examples]     # doctest: +SKIP
    >>> plan_arm(examples, "union", gold, settings).missing  # doctest: +SKIP
    (('q7', 'no B_rel: the bridge has no identified relation sentence'),)
    """
    kept: list[int] = []
    parts: list[tuple[tuple[str, float], ...]] = []
    missing: list[tuple[str, str]] = []
    for i, (ex, rel) in enumerate(zip(examples, b_rel, strict=True)):
        try:
            texts = arm_query_texts(ex, arm, rel, settings)
        except MissingArmInput as err:
            missing.append((ex.id, err.reason))
            continue
        kept.append(i)
        parts.append(tuple(texts))
    return ArmPlan(tuple(kept), tuple(parts), tuple(missing))


def combine_query_vectors(
    text_vectors: Vectors, parts: Sequence[Sequence[tuple[int, float]]]
) -> np.ndarray:
    """``(n, d)`` unit query vectors ``normalise(Σ_j w_j · text_vectors[t_j])``; pure.

    ``parts[i]`` lists ``(row of text_vectors, weight)`` for query ``i``; ``text_vectors`` may
    be sparse (CSR, :mod:`~regime_core.retrieval.vectors`), the result is dense. A combination
    that is exactly zero (e.g. TF-IDF of out-of-vocabulary words) stays zero, as the encoders
    leave it: every candidate then scores 0 and ranks in candidate order.

    >>> combine_query_vectors(np.eye(2, dtype=np.float32), [[(0, 1.0), (1, 1.0)]])
    array([[0.70710677, 0.70710677]], dtype=float32)
    """
    if not is_sparse(text_vectors):
        text_vectors = np.asarray(text_vectors, dtype=np.float32)
    out = np.zeros((len(parts), text_vectors.shape[1]), dtype=np.float32)
    if is_sparse(text_vectors):
        # densify only each block's rows: the same float32 values, so the same sums
        for start in range(0, len(parts), _SPARSE_BLOCK):
            block = parts[start : start + _SPARSE_BLOCK]
            rows = sorted({row for query_parts in block for row, _ in query_parts})
            local = {row: j for j, row in enumerate(rows)}
            vectors = dense_rows(text_vectors, rows) if rows else out[:0]
            for i, query_parts in enumerate(block, start):
                for row, weight in query_parts:
                    out[i] += np.float32(weight) * vectors[local[row]]
    else:
        for i, query_parts in enumerate(parts):
            for row, weight in query_parts:
                out[i] += np.float32(weight) * text_vectors[row]
    return l2_normalize(out)


def combine_union_vectors(
    question_vectors: Vectors, b_rel_vectors: Vectors, weights: np.ndarray
) -> np.ndarray:
    """``(n, d)`` unit vectors ``normalise(q_i + w_i·b_i)``, row ``i`` of ``question_vectors``
    and of ``b_rel_vectors`` (dense or CSR) with ``weights[i]``; pure.

    Bit for bit :func:`combine_query_vectors` of the two stacked with the parts
    ``[(i, 1.0), (n + i, w_i)]`` (tested), whose loop adds the same float32 terms to a zero row
    one query at a time: here each term is added for every query at once (an elementwise float32
    product and sum, the same roundings), so a grid of weights costs no Python loop per query.
    """
    n = question_vectors.shape[0]
    w32 = np.asarray(weights, dtype=np.float64).astype(np.float32)
    out = np.zeros(question_vectors.shape, dtype=np.float32)
    if is_sparse(question_vectors) or is_sparse(b_rel_vectors):
        for start in range(0, n, _SPARSE_BLOCK):  # densify a block of rows at a time
            rows = np.arange(start, min(n, start + _SPARSE_BLOCK))
            block = slice(start, start + len(rows))
            out[block] += np.float32(1.0) * dense_rows(question_vectors, rows)
            out[block] += w32[block, None] * dense_rows(b_rel_vectors, rows)
    else:
        out += np.float32(1.0) * np.asarray(question_vectors, dtype=np.float32)
        out += w32[:, None] * np.asarray(b_rel_vectors, dtype=np.float32)
    return l2_normalize(out)
