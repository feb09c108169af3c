"""Hop-2 retrieval: candidate pools, query arms, exact inner-product scoring, rankings, run files.

The pipeline for one arm is four pure steps and one side effect at the edge, one module each:

1. :mod:`~regime_core.retrieval.pools` — :func:`candidate_pools`: for each example, the indices
   of its hop-2 candidates (``question`` or ``corpus`` mode, the bridge removed) into one
   passage matrix, encoded from :func:`document_text`.
2. :mod:`~regime_core.retrieval.queries` — :func:`arm_query_texts`: the texts and weights of an
   arm's query for one example (the arms are listed there), under one
   :class:`RetrievalSettings` (:mod:`~regime_core.retrieval.settings`: the pool, α, k, the
   bridge exclusion and the knockout rule, as one checked value).
3. The embedding store (:class:`EmbeddingSource`) encodes every distinct query text once (query
   mode) and every passage once (document mode); :func:`combine_query_vectors` builds
   ``v = Σ_i w_i f_q(t_i)`` and re-normalises it, so ranking by inner product is ranking by cosine.
4. :mod:`~regime_core.retrieval.scoring` — :func:`score_candidates` (numpy or faiss
   ``IndexFlatIP``, both exact) — and :mod:`~regime_core.retrieval.ranking` —
   :func:`rank_candidates` order each query's candidates by score, ties broken by candidate order
   (a stable sort), the rule :func:`regime_core.metrics.rank_of` documents. In ``corpus`` mode
   :func:`~regime_core.retrieval.corpus_scan.scan_corpus` does the same by blocks of queries in
   bounded memory (top ``k``, exact ranks, the negatives' statistics; no queries × passages
   matrix), with bit-identical results.

:func:`retrieve` and :func:`retrieve_arms` (:mod:`~regime_core.retrieval.pipeline`) run these
steps and return :class:`Ranking` objects; :func:`write_run_and_qrels`
(:mod:`~regime_core.retrieval.trec`) export them so ``trec_eval``, ``ranx`` or ``ir_measures``
can score our rankings independently.

Every public name is importable from here (``from regime_core.retrieval import retrieve``).
"""

from regime_core.retrieval.pipeline import (
    EmbeddingSource,
    retrieve,
    retrieve_arms,
)
from regime_core.retrieval.pools import (
    CandidatePools,
    CorpusCandidates,
    candidate_pools,
    document_text,
)
from regime_core.retrieval.queries import (
    MISSING_B_REL,
    MISSING_B_REL_NOT_IN_BRIDGE,
    MISSING_ENTITY,
    MISSING_KNOCKOUT_TEXT,
    ArmPlan,
    MissingArmInput,
    arm_query_texts,
    combine_query_vectors,
    plan_arm,
    resolve_b_rel,
)
from regime_core.retrieval.ranking import Ranking, rank_candidates
from regime_core.retrieval.scoring import default_scorer, score_candidates
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.retrieval.trec import (
    check_trec_ids,
    qrels_lines,
    trec_run_lines,
    write_run_and_qrels,
)

__all__ = [
    "MISSING_B_REL",
    "MISSING_B_REL_NOT_IN_BRIDGE",
    "MISSING_ENTITY",
    "MISSING_KNOCKOUT_TEXT",
    "ArmPlan",
    "CandidatePools",
    "CorpusCandidates",
    "EmbeddingSource",
    "MissingArmInput",
    "Ranking",
    "RetrievalSettings",
    "arm_query_texts",
    "candidate_pools",
    "check_trec_ids",
    "combine_query_vectors",
    "default_scorer",
    "document_text",
    "plan_arm",
    "qrels_lines",
    "rank_candidates",
    "resolve_b_rel",
    "retrieve",
    "retrieve_arms",
    "score_candidates",
    "trec_run_lines",
    "write_run_and_qrels",
]
