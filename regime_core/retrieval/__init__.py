"""Hop-2 retrieval: candidate pools, query arms, exact inner-product scoring, rankings, run files.

The pipeline for one arm is four pure steps and one side effect at the edge:

1. :func:`candidate_pools` — for each example, the indices of its hop-2 candidates into one
   passage matrix (the distinct passages of the examples, :func:`regime_core.data.corpus_passages`).
   ``question`` mode: the example's own distractor pool; ``corpus`` mode: every passage of the
   examples passed. The bridge (hop 1) is removed from the candidates unless ``exclude_bridge``
   is False: hop 2 is retrieved *after* hop 1, so ranking the bridge would only push the target
   down by one place for arms that query with the bridge text.
2. :func:`arm_query_texts` — the texts and weights of an arm's query for one example.
3. The embedding store encodes every distinct query text once (query mode) and every passage once
   (document mode); :func:`combine_query_vectors` builds ``v = Σ_i w_i f_q(t_i)`` and
   re-normalises it, so ranking by inner product is ranking by cosine.
4. :func:`score_candidates` (numpy or faiss ``IndexFlatIP``, both exact) and
   :func:`rank_candidates` order each query's candidates by score, ties broken by candidate order
   (a stable sort), the rule :func:`regime_core.metrics.rank_of` documents. In ``corpus`` mode
   :func:`~regime_core.retrieval.corpus_scan.scan_corpus` does the same by blocks of queries in
   bounded
   memory (top ``k``, exact ranks, the negatives' statistics; no queries × passages matrix),
   with bit-identical results.

:func:`retrieve` and :func:`retrieve_arms` run these steps and return :class:`Ranking` objects;
:func:`write_trec_run` and :func:`write_qrels` export them so ``trec_eval``, ``ranx`` or
``ir_measures`` can score our rankings independently.

Arms (``config.ARMS``), with ``f_q`` the encoder in query mode and ``α = config.ALPHA``:

============  =======================================================
``q``         ``f_q(question)``
``bridge``    ``f_q(bridge passage text)``
``union``     ``f_q(question) + α·f_q(B_rel)``
``knockout``  ``f_q(question) + α·f_q(bridge text without B_rel)``
``entity``    ``f_q(question) + α·f_q(hop-2 entity as mentioned)``
============  =======================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, overload

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.encoders.base import Encoder
from regime_core.encoders.vectors import l2_normalize
from regime_core.metrics import NegativeStats, QuerySummaries
from regime_core.schema import Example, Passage

# Scoring backends: both exact inner products over the same float32 vectors. They sum in a
# different order, so scores agree to a few float32 ulps (≤ 5e-7 measured) and two candidates
# whose scores tie *mathematically* (bag-of-words vectors do that) may be ordered differently;
# otherwise the rankings are identical. The default (:func:`default_scorer`) is the faster one
# on the project machine (benchmarks/bench_retrieval.py) for the shape of the candidates:
# faiss's by-index kernel for small pools (question mode), numpy's dense BLAS product when the
# candidates cover the matrix (corpus mode; faiss's search with k = every passage pays for a
# full heap sort). Corpus mode streams either backend through regime_core.retrieval.corpus_scan.
SCORERS: tuple[str, ...] = ("numpy", "faiss")


def default_scorer(candidates: np.ndarray, n_passages: int) -> str:
    """The faster backend for a padded candidate matrix over ``n_passages`` passages.

    >>> default_scorer(np.zeros((685, 9), np.int64), 6641), default_scorer(
    ...     np.zeros((685, 6640), np.int64), 6641)
    ('faiss', 'numpy')
    """
    return "numpy" if _is_dense(candidates, n_passages) else "faiss"


# Reasons an item has no query for an arm; they are counted, never dropped silently.
MISSING_B_REL = "no B_rel: the bridge has no identified relation sentence"
MISSING_KNOCKOUT_TEXT = "knockout: the bridge has no sentence besides B_rel"
MISSING_ENTITY = "entity: the example has no hop-2 entity mention"
MISSING_B_REL_NOT_IN_BRIDGE = "knockout: the B_rel text given is not a sentence of the bridge"

# Queries scored per block in the dense product (corpus_scan subdivides the same blocks).
_QUERY_BLOCK = 256


class EmbeddingSource(Protocol):
    """What retrieval needs from :class:`regime_core.encoders.EmbeddingStore`."""

    def embed(self, encoder: Encoder, texts: Sequence[str], mode: str) -> np.ndarray: ...


class MissingArmInput(ValueError):
    """An example lacks what an arm's query is built from (``reason`` says what)."""

    def __init__(self, example_id: str, arm: str, reason: str) -> None:
        super().__init__(f"example {example_id!r}, arm {arm!r}: {reason}")
        self.example_id = example_id
        self.arm = arm
        self.reason = reason


# --------------------------------------------------------------------------------------------
# 1. Candidate pools
# --------------------------------------------------------------------------------------------


class CorpusCandidates(Sequence[np.ndarray]):
    """Corpus-mode candidate rows, built on access: every row ``0..n_passages-1`` but
    ``excluded[i]`` (``-1``: none). Storing them would cost ``queries × passages`` integers."""

    def __init__(self, n_passages: int, excluded: np.ndarray) -> None:
        self.n_passages = int(n_passages)
        self.excluded = np.asarray(excluded, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.excluded)

    @overload
    def __getitem__(self, i: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, i: slice) -> list[np.ndarray]: ...

    def __getitem__(self, i: int | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        rows = np.arange(self.n_passages, dtype=np.int64)
        ex = int(self.excluded[i])
        return rows[rows != ex] if ex >= 0 else rows

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def widths(self) -> np.ndarray:
        """Number of candidates per query, without building the rows."""
        return self.n_passages - (self.excluded >= 0).astype(np.int64)


@dataclass(frozen=True)
class CandidatePools:
    """Each query's hop-2 candidates as indices into one passage matrix.

    ``passages`` are the rows of the matrix (shared by both pool modes, so one set of document
    embeddings serves both); ``candidates[i]`` holds the row indices of example ``i``'s
    candidates in *candidate order* (the order of its pool, or of the corpus), which is the
    tie-breaking order of the ranking. In ``corpus`` mode ``candidates`` is a
    :class:`CorpusCandidates` (rows built on access) and ``excluded_rows[i]`` is the one row
    left out of example ``i``'s candidates (its bridge; ``-1``: none).
    """

    mode: str
    exclude_bridge: bool
    passages: tuple[Passage, ...]
    candidates: Sequence[np.ndarray]
    excluded_rows: np.ndarray | None = None

    def widths(self) -> np.ndarray:
        """Number of candidates per query."""
        if isinstance(self.candidates, CorpusCandidates):
            return self.candidates.widths()
        return np.array([len(c) for c in self.candidates], dtype=np.int64)

    @property
    def passage_pids(self) -> tuple[str, ...]:
        return tuple(p.pid for p in self.passages)

    def padded(self) -> np.ndarray:
        """``(n_queries, max_candidates)`` int64 matrix of candidate rows, ``-1`` as padding."""
        width = int(self.widths().max(initial=0))
        out = np.full((len(self.candidates), width), -1, dtype=np.int64)
        for i, cand in enumerate(self.candidates):
            out[i, : len(cand)] = cand
        return out


def candidate_pools(
    examples: Sequence[Example],
    mode: str = config.POOL_MODE,
    *,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    passages: Sequence[Passage] | None = None,
) -> CandidatePools:
    """The candidate indices of every example, in ``question`` or ``corpus`` mode.

    ``passages`` defaults to :func:`regime_core.data.corpus_passages` of ``examples`` (the
    distinct passages of all their pools); pass it to reuse a matrix you already embedded.

    >>> pools = candidate_pools(examples, "question")            # doctest: +SKIP
    >>> [pools.passages[j].pid for j in pools.candidates[0]]     # doctest: +SKIP
    ['p…', …]   # example 0's pool in pool order, without its bridge
    """
    if mode not in config.POOL_MODES:
        raise ValueError(f"pool mode {mode!r} is not one of {config.POOL_MODES}")
    if passages is None:
        from regime_core.data import corpus_passages

        passages = corpus_passages(list(examples))
    passages = tuple(passages)
    row_of: dict[str, int] = {}
    for row, passage in enumerate(passages):
        if passage.pid in row_of:
            raise ValueError(
                f"passage matrix: pid {passage.pid} appears twice (rows {row_of[passage.pid]} "
                f"and {row}); pass distinct passages"
            )
        row_of[passage.pid] = row
    candidates: list[np.ndarray] = []
    excluded: list[int] = []
    for ex in examples:
        for pid in (p.pid for p in ex.pool):
            if pid not in row_of:
                raise ValueError(
                    f"example {ex.id!r}: pool passage {pid} is not in the passage matrix; build "
                    "it with corpus_passages over the same examples"
                )
        if mode == "corpus":
            # every passage but (maybe) the bridge: one excluded row, not a row list per example
            excluded.append(row_of[ex.bridge_pid] if exclude_bridge else -1)
            continue
        # dict.fromkeys keeps pool order and drops a passage listed twice in one pool.
        rows = np.fromiter(
            (row_of[pid] for pid in dict.fromkeys(p.pid for p in ex.pool)), dtype=np.int64
        )
        if exclude_bridge:
            rows = rows[rows != row_of[ex.bridge_pid]]
        candidates.append(rows)
    if mode == "corpus":
        excluded_rows = np.array(excluded, dtype=np.int64)
        return CandidatePools(
            mode=mode,
            exclude_bridge=exclude_bridge,
            passages=passages,
            candidates=CorpusCandidates(len(passages), excluded_rows),
            excluded_rows=excluded_rows,
        )
    return CandidatePools(
        mode=mode, exclude_bridge=exclude_bridge, passages=passages, candidates=tuple(candidates)
    )


def document_text(passage: Passage) -> str:
    """The text a passage is encoded from: its title, then its body (``"Title. Body"``).

    Wikipedia-style retrieval corpora (DPR, MDR, IRCoT's BM25) index the title with the text;
    without it a passage whose body never repeats its title cannot be found by name.
    """
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


# --------------------------------------------------------------------------------------------
# 2. Query arms
# --------------------------------------------------------------------------------------------


def resolve_b_rel(example: Example, b_rel: int | str | None) -> tuple[int | None, str | None]:
    """``(sentence index, sentence text)`` of a B_rel given as an index, a text or None.

    A text that is not one of the bridge's sentences keeps index None (``union`` can still use
    it; ``knockout`` cannot remove it). An index outside the bridge raises ValueError.
    """
    sentences = example.bridge.sentences
    if b_rel is None:
        return None, None
    if isinstance(b_rel, bool) or not isinstance(b_rel, int | np.integer | str):
        raise ValueError(
            f"example {example.id!r}: b_rel must be a sentence index, a text or None, "
            f"got {type(b_rel).__name__}"
        )
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
    example: Example,
    arm: str,
    b_rel: int | str | None,
    *,
    alpha: float = config.ALPHA,
    knockout_single: str = config.KNOCKOUT_SINGLE,
) -> list[tuple[str, float]]:
    """The ``(text, weight)`` parts of an arm's query for one example; pure.

    ``knockout_single`` says what ``knockout`` queries with when ``B_rel`` is the bridge's only
    sentence: ``"title"``, the bridge's title (what is left of the bridge without ``B_rel``), or
    ``"drop"``, nothing (the item is missing from the arm, counted).

    The query vector is ``Σ weight·f_q(text)``, re-normalised. ``b_rel`` is the bridge's
    relation sentence as an index into ``example.bridge.sentences`` or as text (gold:
    ``example.relation_sentence``). Raises :class:`MissingArmInput` when the example lacks
    what the arm needs, ValueError for an unknown arm or a bad ``b_rel``.

    >>> arm_query_texts(ex, "union", 1)                         # doctest: +SKIP
    [('Who directed the film?', 1.0), ('It was directed by Ann Lee.', 0.25)]
    """
    if arm not in config.ARMS:
        raise ValueError(f"arm {arm!r} is not one of {config.ARMS}")
    if knockout_single not in config.KNOCKOUT_SINGLE_RULES:
        raise ValueError(
            f"knockout_single {knockout_single!r} is not one of {config.KNOCKOUT_SINGLE_RULES}"
        )
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
    if not rest.strip() and knockout_single == "title":
        rest = example.bridge.title
    if not rest.strip():
        raise MissingArmInput(example.id, arm, MISSING_KNOCKOUT_TEXT)
    return [question, (rest, alpha)]


def combine_query_vectors(
    text_vectors: np.ndarray, parts: Sequence[Sequence[tuple[int, float]]]
) -> np.ndarray:
    """``(n, d)`` unit query vectors ``normalise(Σ_j w_j · text_vectors[t_j])``; pure.

    ``parts[i]`` lists ``(row of text_vectors, weight)`` for query ``i``. A combination that is
    exactly zero (e.g. TF-IDF of out-of-vocabulary words) stays zero, as the encoders leave it:
    every candidate then scores 0 and ranks in candidate order.

    >>> combine_query_vectors(np.eye(2, dtype=np.float32), [[(0, 1.0), (1, 1.0)]])
    array([[0.70710677, 0.70710677]], dtype=float32)
    """
    text_vectors = np.asarray(text_vectors, dtype=np.float32)
    out = np.zeros((len(parts), text_vectors.shape[1]), dtype=np.float32)
    for i, query_parts in enumerate(parts):
        for row, weight in query_parts:
            out[i] += np.float32(weight) * text_vectors[row]
    finite = np.all(np.isfinite(out), axis=1)
    if not np.all(finite):
        bad = int(np.flatnonzero(~finite)[0])
        raise ValueError(
            f"query {bad}: its combined vector is not finite; the encoder returned NaN or inf "
            "for its text(s)"
        )
    return l2_normalize(out)


# --------------------------------------------------------------------------------------------
# 3. Scoring and ranking kernels (arrays in, arrays out)
# --------------------------------------------------------------------------------------------


def _is_dense(candidates: np.ndarray, n_passages: int) -> bool:
    """Candidates cover (nearly) the whole matrix: one dense product beats a gather."""
    return candidates.shape[1] * 2 >= n_passages


def score_candidates_numpy(
    queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """``scores[i, j] = ⟨queries[i], documents[candidates[i, j]]⟩``, ``-inf`` where ``-1``.

    Small pools gather the candidate rows and take a batched product; pools covering the
    matrix (corpus mode) take one dense ``Q·Dᵀ`` per block of queries and pick the columns.
    """
    n, width = candidates.shape
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    if n == 0 or width == 0:
        return scores
    pad = candidates < 0
    safe = np.where(pad, 0, candidates)
    dense = _is_dense(candidates, len(documents))
    for start in range(0, n, _QUERY_BLOCK):
        block = slice(start, start + _QUERY_BLOCK)
        if dense:
            full = queries[block] @ documents.T
            scores[block] = np.take_along_axis(full, safe[block], axis=1)
        else:
            gathered = documents[safe[block]]  # (b, width, d)
            scores[block] = np.matmul(gathered, queries[block][:, :, None])[:, :, 0]
    scores[pad] = -np.inf
    return scores


def score_candidates_faiss(
    queries: np.ndarray, documents: np.ndarray, candidates: np.ndarray
) -> np.ndarray:
    """Same contract as :func:`score_candidates_numpy`, computed by faiss (exact).

    Small pools: ``fvec_inner_products_by_idx``, the kernel behind ``IndexFlatIP``'s
    ``compute_distance_subset`` (inner products with the listed rows only, ``-inf`` for ``-1``),
    without copying the matrix into an index. Corpus mode: an ``IndexFlatIP`` ``search`` with
    k = all passages, whose scores are scattered back to passage order.
    """
    import faiss

    n, width = candidates.shape
    scores = np.full((n, width), -np.inf, dtype=np.float32)
    if n == 0 or width == 0:
        return scores
    # Named, contiguous arrays: faiss.swig_ptr does not keep a temporary alive.
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    documents = np.ascontiguousarray(documents, dtype=np.float32)
    pad = candidates < 0
    if _is_dense(candidates, len(documents)):
        index = faiss.IndexFlatIP(documents.shape[1])
        index.add(documents)
        safe = np.where(pad, 0, candidates)
        for start in range(0, n, _QUERY_BLOCK):
            block = slice(start, start + _QUERY_BLOCK)
            dist, rows = index.search(queries[block], len(documents))
            full = np.empty_like(dist)
            np.put_along_axis(full, rows, dist, axis=1)
            scores[block] = np.take_along_axis(full, safe[block], axis=1)
    else:
        labels = np.ascontiguousarray(candidates, dtype=np.int64)
        faiss.fvec_inner_products_by_idx(
            faiss.swig_ptr(scores),
            faiss.swig_ptr(queries),
            faiss.swig_ptr(documents),
            faiss.swig_ptr(labels),
            documents.shape[1],
            n,
            width,
        )
    scores[pad] = -np.inf
    return scores


_SCORER_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "numpy": score_candidates_numpy,
    "faiss": score_candidates_faiss,
}


def score_candidates(
    queries: np.ndarray,
    documents: np.ndarray,
    candidates: np.ndarray,
    *,
    scorer: str | None = None,
) -> np.ndarray:
    """Exact inner products of each query with its candidates (``-1`` padding → ``-inf``).

    ``scorer=None`` picks the faster backend for the shape: numpy when the candidates cover
    (nearly) the whole matrix, as in corpus mode, faiss for small pools.
    """
    if scorer is None:
        scorer = default_scorer(candidates, len(documents))
    if scorer not in _SCORER_KERNELS:
        raise ValueError(f"scorer {scorer!r} is not one of {SCORERS}")
    queries = np.asarray(queries, dtype=np.float32)
    documents = np.asarray(documents, dtype=np.float32)
    if queries.ndim != 2 or documents.ndim != 2 or queries.shape[1] != documents.shape[1]:
        raise ValueError(
            f"query vectors {queries.shape} and document vectors {documents.shape} must be "
            "2-d with the same dimension (were they encoded by the same encoder?)"
        )
    if candidates.shape[0] != queries.shape[0]:
        raise ValueError(f"{candidates.shape[0]} candidate rows for {queries.shape[0]} queries")
    scores = _SCORER_KERNELS[scorer](queries, documents, candidates)
    real = candidates >= 0
    if not np.all(np.isfinite(scores[real])):
        raise ValueError("non-finite retrieval scores: the encoder returned NaN or inf vectors")
    return scores


def rank_candidates(scores: np.ndarray) -> np.ndarray:
    """Positions of each row's candidates, best first: a stable sort of ``-score``.

    Ties keep candidate order; ``-inf`` (padding) sorts last.

    >>> rank_candidates(np.array([[0.2, 0.5, 0.5, -np.inf]], dtype=np.float32))
    array([[1, 2, 0, 3]])
    """
    return np.argsort(-scores, axis=1, kind="stable")


# --------------------------------------------------------------------------------------------
# 4. Rankings
# --------------------------------------------------------------------------------------------


def _position(rows: np.ndarray, row: int) -> int:
    """Where passage ``row`` sits in a candidate list, -1 if it is not a candidate."""
    hits = np.flatnonzero(rows == row)
    return int(hits[0]) if hits.size else -1


@dataclass(frozen=True)
class Ranking:
    """One arm's hop-2 rankings for a set of examples.

    Per query ``i`` (examples the arm could not build a query for are in ``missing``, not here):

    - ``top_pids[i]`` / ``top_scores[i]``: the best ``k`` candidates, best first (ties in
      candidate order); ``k=None`` keeps every candidate.
    - ``candidate_rows[i]`` / ``candidate_scores[i]``: every candidate (rows of the passage
      matrix ``passage_pids``) in candidate order with its score (what per-query AUC and margins
      are computed from); :meth:`candidate_pids` names them. In ``corpus`` mode the scores are
      not kept (they would cost queries × passages floats): ``candidate_scores`` is empty,
      ``candidate_rows`` is built on access, and ``negatives`` holds the statistics of the
      negatives' scores that AUC and the margins need (:class:`~regime_core.metrics.NegativeStats`),
      so every metric is the same, bit for bit.
    - ``target_ranks[i]``: 1-based rank of the hop-2 target among all candidates.
    - ``gold_pids[i]`` / ``gold_ranks[i]``: the example's gold passages (bridge included) and
      their 1-based ranks, 0 for a gold that is not a candidate (the bridge when excluded).
    """

    arm: str
    pool: str
    encoder: str
    alpha: float
    exclude_bridge: bool
    scorer: str
    k: int | None
    query_ids: tuple[str, ...]
    target_pids: tuple[str, ...]
    target_ranks: np.ndarray
    gold_pids: tuple[tuple[str, ...], ...]
    gold_ranks: tuple[np.ndarray, ...]
    top_pids: tuple[tuple[str, ...], ...]
    top_scores: tuple[np.ndarray, ...]
    passage_pids: tuple[str, ...] = field(repr=False)
    candidate_rows: Sequence[np.ndarray] = field(repr=False)
    candidate_scores: tuple[np.ndarray, ...] = field(repr=False)
    missing: tuple[tuple[str, str], ...] = ()
    negatives: NegativeStats | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def n_missing_b_rel(self) -> int:
        """Examples left out because they have no B_rel (for ``union`` and ``knockout``)."""
        return sum(1 for _, reason in self.missing if reason == MISSING_B_REL)

    def missing_counts(self) -> dict[str, int]:
        """How many examples were left out, by reason."""
        counts: dict[str, int] = {}
        for _, reason in self.missing:
            counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items()))

    def candidate_pids(self, i: int) -> tuple[str, ...]:
        """Query ``i``'s candidates in candidate order."""
        return tuple(self.passage_pids[row] for row in self.candidate_rows[i])

    def summaries(self) -> QuerySummaries:
        """Target rank, gold ranks (0: not a candidate) and negatives' statistics per query;
        only for rankings that kept statistics instead of scores (corpus mode)."""
        if self.negatives is None:
            raise ValueError(
                "this ranking kept its candidate scores, not summaries; use candidate_scores"
            )
        width = max((len(g) for g in self.gold_ranks), default=0) + 1
        gold = np.zeros((len(self.query_ids), width), dtype=np.int64)
        for i, ranks in enumerate(self.gold_ranks):
            gold[i, : len(ranks)] = ranks
        # the target is gold (metrics.RankedQueries requires it; ranking_metrics adds it)
        listed = np.any(gold[:, :-1] == np.asarray(self.target_ranks)[:, None], axis=1)
        gold[:, -1] = np.where(listed, 0, self.target_ranks)
        return QuerySummaries(
            target_rank=np.asarray(self.target_ranks, dtype=np.int64),
            gold_ranks=gold,
            negatives=self.negatives,
        )

    def _positions(self) -> tuple[list[int], list[list[int]]]:
        """Target and gold positions in each query's candidate list (non-candidates dropped)."""
        row_of = {pid: row for row, pid in enumerate(self.passage_pids)}
        targets: list[int] = []
        golds: list[list[int]] = []
        for rows, target, gold in zip(
            self.candidate_rows, self.target_pids, self.gold_pids, strict=True
        ):
            targets.append(_position(rows, row_of[target]))
            positions = [_position(rows, row_of[g]) for g in gold]
            golds.append([pos for pos in positions if pos >= 0])
        return targets, golds

    def per_query_metrics(
        self,
        k_values: Sequence[int] = config.K_VALUES,
        metrics: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """One row per query (index: query id), one column per metric of
        :mod:`regime_core.metrics` (default: ``default_metrics(k_values)``: hit@k, recall@k,
        all_gold@k, mrr, rank, auc, margin, margin_max, std_margin).

        Every metric sees the query's *candidates* only. With the bridge excluded (the default),
        the golds are the example's gold passages minus the bridge, so ``recall@k`` and
        ``all_gold@k`` ask how many of the *remaining* golds are in the top k: for a two-passage
        question they equal ``hit@k``; they differ for questions with more golds (MuSiQue 3-
        and 4-hop, 2Wiki bridge-comparison). The negatives of ``auc`` and the margins are the
        non-gold candidates. ``mrr`` uses the full ranking, not the run's depth ``k``.
        """
        from regime_core import metrics as m

        names = (
            [x.name for x in m.default_metrics(tuple(k_values))]
            if metrics is None
            else list(metrics)
        )
        if not self.query_ids:
            return pd.DataFrame(
                {name: pd.Series(dtype=float) for name in names},
                index=pd.Index([], name="qid", dtype=object),
            )
        if self.negatives is not None:
            return m.evaluate_summaries_per_query(self.summaries(), names, query_ids=self.query_ids)
        targets, golds = self._positions()
        return m.evaluate_per_query(
            list(self.candidate_scores), targets, names, gold=golds, query_ids=self.query_ids
        )

    def metrics(
        self,
        k_values: Sequence[int] = config.K_VALUES,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, float]:
        """``{"n": queries ranked, metric: mean over queries, ...}``; see
        :meth:`per_query_metrics`. Means skip undefined values (``std_margin`` with zero spread);
        with no query every mean is NaN."""
        table = self.per_query_metrics(k_values, metrics)
        out: dict[str, float] = {"n": len(self.query_ids)}
        for name in table.columns:
            values = table[name].to_numpy(dtype=float)
            defined = values[~np.isnan(values)]
            out[name] = float(defined.mean()) if defined.size else float("nan")
        return out


@dataclass(frozen=True)
class _ArmPlan:
    """Which examples an arm has a query for, and the query's parts."""

    kept: tuple[int, ...]
    parts: tuple[tuple[tuple[str, float], ...], ...]
    missing: tuple[tuple[str, str], ...]


def _plan_arm(
    examples: Sequence[Example],
    arm: str,
    b_rel: Sequence[int | str | None],
    alpha: float,
    knockout_single: str = config.KNOCKOUT_SINGLE,
) -> _ArmPlan:
    kept: list[int] = []
    parts: list[tuple[tuple[str, float], ...]] = []
    missing: list[tuple[str, str]] = []
    for i, (ex, rel) in enumerate(zip(examples, b_rel, strict=True)):
        try:
            texts = arm_query_texts(ex, arm, rel, alpha=alpha, knockout_single=knockout_single)
        except MissingArmInput as err:
            missing.append((ex.id, err.reason))
            continue
        kept.append(i)
        parts.append(tuple(texts))
    return _ArmPlan(tuple(kept), tuple(parts), tuple(missing))


def _check_vectors(vectors: np.ndarray, n: int, what: str) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != n:
        raise ValueError(
            f"the embedding store returned {vectors.shape} for {n} {what}; expected ({n}, d)"
        )
    return vectors


def _build_ranking(
    examples: Sequence[Example],
    plan: _ArmPlan,
    pools: CandidatePools,
    scores: np.ndarray,
    order: np.ndarray,
    *,
    arm: str,
    encoder_name: str,
    alpha: float,
    scorer: str,
    k: int | None,
) -> Ranking:
    pids = pools.passage_pids
    row_of = {pid: row for row, pid in enumerate(pids)}
    target_ranks = np.zeros(len(plan.kept), dtype=np.int64)
    gold_pids: list[tuple[str, ...]] = []
    gold_ranks: list[np.ndarray] = []
    top_pids: list[tuple[str, ...]] = []
    top_scores: list[np.ndarray] = []
    candidate_rows: list[np.ndarray] = []
    candidate_scores: list[np.ndarray] = []
    for r, i in enumerate(plan.kept):
        ex = examples[i]
        rows = pools.candidates[i]
        n_cand = len(rows)
        cand_scores = scores[r, :n_cand].copy()
        # Padding is -inf and sorts last, so the first n_cand positions are the real ones.
        ranked = order[r, :n_cand]
        rank_of_position = np.empty(n_cand, dtype=np.int64)
        rank_of_position[ranked] = np.arange(1, n_cand + 1)
        golds = _gold_pids(ex)
        # rank 0: the passage is not a candidate (the excluded bridge)
        ranks = {}
        for pid in (*golds, ex.target_pid):
            pos = _position(rows, row_of[pid])
            ranks[pid] = int(rank_of_position[pos]) if pos >= 0 else 0
        target_ranks[r] = ranks[ex.target_pid]
        gold_pids.append(golds)
        gold_ranks.append(np.array([ranks[pid] for pid in golds], dtype=np.int64))
        top = ranked if k is None else ranked[:k]
        top_pids.append(tuple(pids[rows[pos]] for pos in top))
        top_scores.append(cand_scores[top])
        candidate_rows.append(rows)
        candidate_scores.append(cand_scores)
    return Ranking(
        arm=arm,
        pool=pools.mode,
        encoder=encoder_name,
        alpha=alpha,
        exclude_bridge=pools.exclude_bridge,
        scorer=scorer,
        k=k,
        query_ids=tuple(examples[i].id for i in plan.kept),
        target_pids=tuple(examples[i].target_pid for i in plan.kept),
        target_ranks=target_ranks,
        gold_pids=tuple(gold_pids),
        gold_ranks=tuple(gold_ranks),
        top_pids=tuple(top_pids),
        top_scores=tuple(top_scores),
        passage_pids=pids,
        candidate_rows=tuple(candidate_rows),
        candidate_scores=tuple(candidate_scores),
        missing=plan.missing,
    )


def _gold_pids(ex: Example) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ex.gold_pids)) or (ex.bridge_pid, ex.target_pid)


def _scan_corpus_ranking(
    examples: Sequence[Example],
    plan: _ArmPlan,
    pools: CandidatePools,
    queries: np.ndarray,
    doc_vectors: np.ndarray,
    *,
    arm: str,
    encoder_name: str,
    alpha: float,
    scorer: str,
    k: int | None,
) -> Ranking:
    """Corpus mode in bounded memory (:func:`~regime_core.retrieval.corpus_scan.scan_corpus`): the
    same
    Ranking as :func:`_build_ranking` over dense scores, with statistics instead of scores."""
    from regime_core.retrieval.corpus_scan import scan_corpus

    assert pools.excluded_rows is not None
    pids = pools.passage_pids
    row_of = {pid: row for row, pid in enumerate(pids)}
    kept = list(plan.kept)
    golds = [_gold_pids(examples[i]) for i in kept]
    gold_rows = np.full((len(kept), max((len(g) for g in golds), default=0)), -1, np.int64)
    for r, gold in enumerate(golds):
        gold_rows[r, : len(gold)] = [row_of[pid] for pid in gold]
    excluded = pools.excluded_rows[kept] if kept else np.zeros(0, np.int64)
    scan = scan_corpus(
        queries,
        doc_vectors,
        excluded=excluded,
        targets=np.array([row_of[examples[i].target_pid] for i in kept], dtype=np.int64),
        golds=gold_rows,
        k=k,
        scorer=scorer,
    )
    top_pids = []
    top_scores = []
    for rows, scores in zip(scan.top_rows, scan.top_scores, strict=True):
        real = rows >= 0
        top_pids.append(tuple(pids[row] for row in rows[real]))
        top_scores.append(scores[real].copy())
    return Ranking(
        arm=arm,
        pool=pools.mode,
        encoder=encoder_name,
        alpha=alpha,
        exclude_bridge=pools.exclude_bridge,
        scorer=scorer,
        k=k,
        query_ids=tuple(examples[i].id for i in kept),
        target_pids=tuple(examples[i].target_pid for i in kept),
        target_ranks=scan.target_ranks,
        gold_pids=tuple(golds),
        gold_ranks=tuple(scan.gold_ranks[r, : len(g)].copy() for r, g in enumerate(golds)),
        top_pids=tuple(top_pids),
        top_scores=tuple(top_scores),
        passage_pids=pids,
        candidate_rows=CorpusCandidates(len(pids), excluded),
        candidate_scores=(),
        missing=plan.missing,
        negatives=scan.negatives,
    )


def retrieve_arms(
    examples: Sequence[Example],
    arms: Iterable[str] = config.ARMS,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    b_rel: Sequence[int | str | None] | None = None,
    k: int | None = max(config.K_VALUES),
    scorer: str | None = None,
    pools: CandidatePools | None = None,
    knockout_single: str = config.KNOCKOUT_SINGLE,
) -> dict[str, Ranking]:
    """Rank every example's hop-2 candidates for several arms, sharing one set of encodings.

    Every distinct query text of every arm is encoded once (query mode) and every passage once
    (document mode) through ``store``; the arms differ only in how the text vectors are combined.
    ``b_rel[i]`` is example ``i``'s relation sentence (index or text); ``None`` uses the gold
    ``Example.relation_sentence``. ``scorer`` (``numpy`` or ``faiss``, identical up to float32
    rounding) defaults to the faster for the pools' shape (:func:`default_scorer`). ``k``
    truncates the stored top list and the run file (``None``: all candidates); ranks, scores
    and metrics always use the full candidate list. ``pools`` reuses candidate pools already
    built over the same examples. ``knockout_single``: see :func:`arm_query_texts`.

    >>> rankings = retrieve_arms(exs, ("q", "union"), encoder=enc, store=store)  # doctest: +SKIP
    >>> rankings["union"].metrics()["hit@5"]                                     # doctest: +SKIP
    """
    examples = list(examples)
    arms = tuple(dict.fromkeys(arms))
    unknown = [a for a in arms if a not in config.ARMS]
    if unknown:
        raise ValueError(f"arm(s) {unknown} not among {config.ARMS}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    if not np.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha!r}")
    if scorer is not None and scorer not in SCORERS:
        raise ValueError(f"scorer {scorer!r} is not one of {SCORERS}")
    if b_rel is None:
        b_rel = [ex.relation_sentence for ex in examples]
    elif len(b_rel) != len(examples):
        raise ValueError(f"b_rel has {len(b_rel)} entries for {len(examples)} examples")
    if pools is None:
        pools = candidate_pools(examples, pool, exclude_bridge=exclude_bridge)
    elif pools.mode != pool or pools.exclude_bridge != exclude_bridge:
        raise ValueError(
            f"the pools given were built with mode={pools.mode!r}, exclude_bridge="
            f"{pools.exclude_bridge}, but pool={pool!r}, exclude_bridge={exclude_bridge}"
        )
    if len(pools.candidates) != len(examples):
        raise ValueError(f"{len(pools.candidates)} candidate pools for {len(examples)} examples")

    plans = {arm: _plan_arm(examples, arm, b_rel, alpha, knockout_single) for arm in arms}
    # Each distinct text is encoded once, whichever arms and examples share it.
    text_row = {
        text: row
        for row, text in enumerate(
            dict.fromkeys(t for plan in plans.values() for parts in plan.parts for t, _ in parts)
        )
    }
    text_vectors = _check_vectors(
        store.embed(encoder, list(text_row), "query") if text_row else np.zeros((0, 1)),
        len(text_row),
        "query texts",
    )
    doc_texts = [document_text(p) for p in pools.passages]
    doc_vectors = _check_vectors(
        store.embed(encoder, doc_texts, "document"), len(doc_texts), "passages"
    )

    widths = pools.widths()
    if scorer is None:
        scorer = default_scorer(np.zeros((0, int(widths.max(initial=0)))), len(pools.passages))
    corpus = pools.excluded_rows is not None
    # corpus mode is streamed (bounded memory); only small pools are padded into a matrix
    padded = None if corpus else pools.padded()
    rankings: dict[str, Ranking] = {}
    for arm, plan in plans.items():
        queries = combine_query_vectors(
            text_vectors, [[(text_row[t], w) for t, w in parts] for parts in plan.parts]
        )
        if corpus:
            rankings[arm] = _scan_corpus_ranking(
                examples,
                plan,
                pools,
                queries if plan.kept else np.zeros((0, doc_vectors.shape[1]), np.float32),
                doc_vectors,
                arm=arm,
                encoder_name=encoder.name,
                alpha=alpha,
                scorer=scorer,
                k=k,
            )
            continue
        assert padded is not None
        if plan.kept:
            cands = padded[list(plan.kept)]
            scores = score_candidates(queries, doc_vectors, cands, scorer=scorer)
        else:
            scores = np.zeros((0, padded.shape[1]), dtype=np.float32)
        order = rank_candidates(scores)
        rankings[arm] = _build_ranking(
            examples,
            plan,
            pools,
            scores,
            order,
            arm=arm,
            encoder_name=encoder.name,
            alpha=alpha,
            scorer=scorer,
            k=k,
        )
    return rankings


def retrieve(
    examples: Sequence[Example],
    arm: str,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    b_rel: Sequence[int | str | None] | None = None,
    k: int | None = max(config.K_VALUES),
    scorer: str | None = None,
) -> Ranking:
    """Rank every example's hop-2 candidates with one arm; see :func:`retrieve_arms`."""
    return retrieve_arms(
        examples,
        (arm,),
        encoder=encoder,
        store=store,
        pool=pool,
        alpha=alpha,
        exclude_bridge=exclude_bridge,
        b_rel=b_rel,
        k=k,
        scorer=scorer,
    )[arm]


# --------------------------------------------------------------------------------------------
# 5. TREC run files
# --------------------------------------------------------------------------------------------


def trec_run_lines(ranking: Ranking, tag: str, *, tie_free: bool = False) -> list[str]:
    """``qid Q0 pid rank score tag`` lines, rank 1-based, best first, depth ``ranking.k``.

    The score is the cosine with 9 significant digits (they round-trip float32), so an
    evaluator that re-sorts by score sees our order except where two scores are exactly equal
    (trec_eval, ir-measures and ranx then break the tie by docno, we by candidate order).
    ``tie_free=True`` writes ``depth - rank + 1`` instead (the idea of
    :func:`regime_core.metrics.run_scores`), which every evaluator reads in exactly our order.

    >>> trec_run_lines(ranking, "regime-q")[0]               # doctest: +SKIP
    'q1 Q0 p3f2a... 1 0.734215081 regime-q'
    """
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"run tag {tag!r} must be non-empty without whitespace")
    lines: list[str] = []
    rows = zip(ranking.query_ids, ranking.top_pids, ranking.top_scores, strict=True)
    for qid, pids, scores in rows:
        for rank, (pid, score) in enumerate(zip(pids, scores, strict=True), start=1):
            shown = f"{len(pids) - rank + 1}" if tie_free else f"{float(score):.9g}"
            lines.append(f"{qid} Q0 {pid} {rank} {shown} {tag}")
    return lines


def qrels_lines(ranking: Ranking) -> list[str]:
    """``qid 0 pid 1`` for each query's hop-2 target."""
    pairs = zip(ranking.query_ids, ranking.target_pids, strict=True)
    return [f"{qid} 0 {pid} 1" for qid, pid in pairs]


def _write_lines(path: str | Path, lines: Sequence[str]) -> Path:
    from regime_core.integrity import atomic_write_bytes

    path = Path(path)
    # atomic, and path problems (a directory, a file as parent) as ValueError naming the path
    atomic_write_bytes(path, "".join(line + "\n" for line in lines).encode("utf-8"))
    return path


def write_trec_run(ranking: Ranking, path: str | Path, tag: str, *, tie_free: bool = False) -> Path:
    """Write ``ranking``'s top lists as a TREC run file (see :func:`trec_run_lines`)."""
    return _write_lines(path, trec_run_lines(ranking, tag, tie_free=tie_free))


def write_qrels(ranking: Ranking, path: str | Path) -> Path:
    """Write the hop-2 targets of ``ranking`` as TREC qrels (relevance 1)."""
    return _write_lines(path, qrels_lines(ranking))
