"""Hop-2 ranks under ``q + a_i·B_rel`` for any per-question weights, and the hop-1 bridge.

The router compares two arms (``q``: the question alone; ``union``: the question plus
``α·B_rel``) and its variants weight ``B_rel`` per question (the soft router, the α sweep). All of
them rank the same candidates with the same vectors; only the weights differ. So the vectors are
embedded once (:func:`build_geometry`, through the embedding store) and every ranking after that
is a pure function of the weights (:meth:`UnionGeometry.target_ranks`).

Hop 1, for the pipeline reading of the bridge (``config.BRIDGE_SOURCE = "retrieved"``):
:func:`hop1_top_pids` retrieves each question's top-1 passage and :func:`with_retrieved_bridges`
lets it play the bridge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.encoders.base import Encoder
from regime_core.encoders.store import Mode
from regime_core.retrieval import (
    EmbeddingSource,
    candidate_pools,
    document_text,
    rank_candidates,
    score_candidates,
)
from regime_core.retrieval.corpus_scan import scan_corpus
from regime_core.retrieval.grid_ranks import grid_target_ranks, pool_grid_ranks
from regime_core.retrieval.queries import combine_union_vectors
from regime_core.retrieval.scoring import is_dense
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.retrieval.vectors import (
    Vectors,
    checked_vectors,
    dense,
    embed_vectors,
)
from regime_core.schema import Example, Passage


@dataclass(frozen=True)
class UnionGeometry:
    """What ranking the hop-2 candidates under ``normalise(f_q(q) + a_i·f_q(B_rel_i))`` needs,
    for any weights ``a_i``: ``a = 0`` is the ``q`` arm, ``a = α`` the ``union`` arm, ``a = α·p``
    the soft router. Built once by :func:`build_geometry`; :meth:`target_ranks` is pure.

    The query vectors are combined, scored and ranked by the retrieval module's own kernels
    (:func:`~regime_core.retrieval.queries.combine_union_vectors`, which is
    :func:`~regime_core.retrieval.combine_query_vectors` vectorised,
    :func:`~regime_core.retrieval.score_candidates`,
    :func:`~regime_core.retrieval.rank_candidates`), so the ranks equal those of
    :func:`~regime_core.retrieval.retrieve_arms` (tested). In ``corpus`` mode ``candidates`` is
    None and ``excluded_rows[i]`` is the one row left out of question ``i``'s candidates (``-1``:
    none): the ranks are streamed by :func:`~regime_core.retrieval.corpus_scan.scan_corpus` in
    bounded memory, identical to the dense kernels' (tested).
    """

    query_ids: tuple[str, ...]
    question_vectors: Vectors  # (n, d), dense or CSR (a sparse encoder's, see .vectors)
    b_rel_vectors: Vectors  # (n, d)
    document_vectors: Vectors  # (m, d)
    candidates: np.ndarray | None  # (n, w) rows of document_vectors, -1 padding; None: corpus
    target_positions: np.ndarray  # (n,) position of the hop-2 target among the candidates
    pool: str
    excluded_rows: np.ndarray | None = None  # (n,) corpus mode: the row left out, -1 none

    @property
    def n(self) -> int:
        return len(self.query_ids)

    def rows(self, index: np.ndarray) -> UnionGeometry:
        """The questions ``index`` alone (a question's ranks read its own rows only)."""
        per_question = ("question_vectors", "b_rel_vectors", "candidates", "target_positions")
        cut: dict[str, Any] = {f: getattr(self, f) for f in (*per_question, "excluded_rows")}
        cut = {f: None if rows is None else rows[index] for f, rows in cut.items()}
        return dataclasses.replace(self, query_ids=tuple(self.query_ids[i] for i in index), **cut)

    def target_ranks(self, weights: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """1-based rank of each question's hop-2 target with ``B_rel`` weighted ``weights[i]``
        (a scalar applies to every question). Weights are α values checked where they were
        given (:func:`~regime_core.limits.check_alpha`) or derived from such."""
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), (self.n,))
        queries = combine_union_vectors(self.question_vectors, self.b_rel_vectors, w)
        if self.candidates is None:
            scan = scan_corpus(
                queries,
                self.document_vectors,
                excluded=self._excluded(),
                targets=self._target_rows(),
                k=0,
                negatives=False,
            )
            return scan.target_ranks
        scores = score_candidates(queries, self.document_vectors, self.candidates)
        order = rank_candidates(scores)
        return (np.argmax(order == self.target_positions[:, None], axis=1) + 1).astype(np.int64)

    def target_ranks_many(self, weights: np.ndarray) -> np.ndarray:
        """``(g, n)`` ranks, row ``r`` equal to ``target_ranks(weights[r])`` (weights ``(g, n)``).

        Question pools densify their vectors once for all rows
        (:func:`~regime_core.retrieval.grid_ranks.pool_grid_ranks`); in corpus mode the products
        of the questions and of the ``B_rel`` vectors with every passage are computed once for
        all rows and only near-ties are scored exactly
        (:func:`~regime_core.retrieval.grid_ranks.grid_target_ranks`); the ranks are the same."""
        w = np.asarray(weights, dtype=np.float64)
        m = self.document_vectors.shape[0]
        if self.candidates is not None and not is_dense(self.candidates, m):
            return pool_grid_ranks(
                self.question_vectors,
                self.b_rel_vectors,
                self.document_vectors,
                self.candidates,
                self.target_positions,
                w,
            )
        if self.candidates is not None or w.shape[0] == 0 or self.n == 0:
            rows = [self.target_ranks(row) for row in w]
            return np.stack(rows) if rows else np.zeros(w.shape, dtype=np.int64)
        return grid_target_ranks(
            self.question_vectors,
            self.b_rel_vectors,
            self.document_vectors,
            w,
            excluded=self._excluded(),
            targets=self._target_rows(),
        )

    def _excluded(self) -> np.ndarray:
        if self.excluded_rows is None:
            raise ValueError("UnionGeometry: give candidates or (corpus mode) excluded_rows")
        return self.excluded_rows

    def _target_rows(self) -> np.ndarray:
        """Corpus mode: each target's passage row."""
        ex = np.asarray(self._excluded())
        # candidate position -> passage row: positions at or after the excluded row shift
        return np.where(
            (ex >= 0) & (self.target_positions >= ex),
            self.target_positions + 1,
            self.target_positions,
        )


def _embed(store: EmbeddingSource, encoder: Encoder, texts: Sequence[str], mode: Mode) -> Vectors:
    """``texts``' vectors, kept sparse (CSR) for a sparse encoder (see :mod:`.vectors`)."""
    vectors = embed_vectors(store, encoder, list(texts), mode)
    return checked_vectors(vectors, len(texts), f"{mode} texts")


def build_geometry(
    examples: Sequence[Example],
    b_rel_texts: Sequence[str],
    settings: RetrievalSettings,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    corpus: Sequence[Passage] | None = None,
) -> UnionGeometry:
    """Embed (through ``store``) the questions, the given ``B_rel`` texts and the candidate
    passages of ``settings``' pool; ``corpus`` is the passage set of ``corpus`` pool mode
    (default: the examples' pools), as in :func:`regime_core.experiments.outcomes.outcome_table`.
    The weights are the caller's (:meth:`UnionGeometry.target_ranks`)."""
    pool = settings.pool
    examples = list(examples)
    passages = list(corpus) if pool == "corpus" and corpus is not None else None
    pools = candidate_pools(
        examples, pool, exclude_bridge=settings.exclude_bridge, passages=passages
    )
    row_of = {p.pid: row for row, p in enumerate(pools.passages)}
    targets = np.empty(len(examples), dtype=np.int64)
    for i, ex in enumerate(examples):
        # Example.validate: the target is a pool passage and not the bridge, so a candidate
        target = row_of[ex.target_pid]
        if pools.excluded_rows is not None:  # corpus: every row but the excluded one
            excluded = int(pools.excluded_rows[i])
            targets[i] = target - 1 if 0 <= excluded < target else target
            continue
        targets[i] = np.flatnonzero(pools.candidates[i] == target)[0]
    return UnionGeometry(
        query_ids=tuple(ex.id for ex in examples),
        question_vectors=_embed(store, encoder, [ex.question for ex in examples], "query"),
        b_rel_vectors=_embed(store, encoder, b_rel_texts, "query"),
        document_vectors=_embed(
            store, encoder, [document_text(p) for p in pools.passages], "document"
        ),
        candidates=None if pools.excluded_rows is not None else pools.padded(),
        target_positions=targets,
        pool=pool,
        excluded_rows=pools.excluded_rows,
    )


def hop1_top_pids(
    examples: Sequence[Example], *, encoder: Encoder, store: EmbeddingSource
) -> list[str]:
    """The top-1 passage of each question's own pool under the question alone (nothing
    excluded; ties to the earlier pool position, as every ranking here)."""
    examples = list(examples)
    if not examples:
        return []
    pools = candidate_pools(examples, "question", exclude_bridge=False)
    queries = dense(_embed(store, encoder, [ex.question for ex in examples], "query"))
    documents = _embed(store, encoder, [document_text(p) for p in pools.passages], "document")
    padded = pools.padded()
    order = rank_candidates(score_candidates(queries, documents, padded))
    best_rows = padded[np.arange(len(examples)), order[:, 0]]
    return [pools.passages[int(row)].pid for row in best_rows]


def with_retrieved_bridges(
    examples: Sequence[Example], top_pids: Sequence[str]
) -> tuple[list[Example], list[str], dict[str, int]]:
    """Replace each example's bridge by its hop-1 top-1 passage; pure.

    Returns the kept examples, their hop-1 outcome (``correct``: the gold bridge;
    ``distractor``: another passage, which then plays the bridge and leaves the hop-2
    candidates, while the gold bridge stays among them) and the counts of every outcome,
    ``target`` included: a question whose top-1 is the hop-2 passage has no bridge to read, so
    it is left out (counted, never silently).
    """
    kept: list[Example] = []
    outcomes: list[str] = []
    counts = {"correct": 0, "distractor": 0, "target": 0}
    for ex, pid in zip(examples, top_pids, strict=True):
        if pid == ex.target_pid:
            counts["target"] += 1
            continue
        outcome = "correct" if pid == ex.bridge_pid else "distractor"
        counts[outcome] += 1
        kept.append(ex if outcome == "correct" else dataclasses.replace(ex, bridge_pid=pid))
        outcomes.append(outcome)
    return kept, outcomes, counts
