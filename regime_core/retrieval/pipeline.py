"""The retrieval verbs: :func:`retrieve_arms` (several arms over one set of encodings) and
:func:`retrieve` (one arm). The only step with a side effect is the embedding store, reached
through the :class:`EmbeddingSource` protocol; everything else is a pure step of
:mod:`~regime_core.retrieval.pools`, :mod:`~regime_core.retrieval.queries`,
:mod:`~regime_core.retrieval.scoring` and :mod:`~regime_core.retrieval.ranking`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Required, TypedDict, Unpack

import numpy as np

from regime_core import config
from regime_core.encoders.base import Encoder
from regime_core.limits import check_alpha
from regime_core.retrieval.pools import CandidatePools, candidate_pools, document_text
from regime_core.retrieval.queries import plan_arm
from regime_core.retrieval.ranking import (
    Ranking,
    RankingRun,
    build_ranking,
    rank_candidates,
    scan_ranking,
)
from regime_core.retrieval.scoring import check_scorer, default_scorer, score_candidates
from regime_core.retrieval.vectors import EmbeddingSource, checked_vectors, embed_vectors
from regime_core.schema import Example


class RetrieveOptions(TypedDict, total=False):
    """The keyword arguments of :func:`retrieve_arms`, for :func:`retrieve` to pass on; their
    defaults are stated there only."""

    encoder: Required[Encoder]
    store: Required[EmbeddingSource]
    pool: str
    alpha: float
    exclude_bridge: bool
    b_rel: Sequence[int | str | None] | None
    k: int | None
    scorer: str | None
    pools: CandidatePools | None
    knockout_single: str


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
    check_alpha(alpha)  # its float32 bound: regime_core.limits
    if scorer is not None:
        check_scorer(scorer)
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

    plans = {arm: plan_arm(examples, arm, b_rel, alpha, knockout_single) for arm in arms}
    # Each distinct text is encoded once, whichever arms and examples share it.
    texts = list(dict.fromkeys(t for plan in plans.values() for t in plan.texts()))
    text_row = {text: row for row, text in enumerate(texts)}
    # sparse encoders' vectors stay sparse (CSR); the kernels densify a block at a time
    text_vectors = checked_vectors(
        embed_vectors(store, encoder, texts, "query") if texts else np.zeros((0, 1)),
        len(texts),
        "query texts",
    )
    doc_texts = [document_text(p) for p in pools.passages]
    doc_vectors = checked_vectors(
        embed_vectors(store, encoder, doc_texts, "document"), len(doc_texts), "passages"
    )

    widths = pools.widths()
    if scorer is None:
        scorer = default_scorer(np.zeros((0, int(widths.max(initial=0)))), len(pools.passages))
    corpus = pools.excluded_rows is not None
    # corpus mode is streamed (bounded memory); only small pools are padded into a matrix
    padded = None if corpus else pools.padded()
    rankings: dict[str, Ranking] = {}
    for arm, plan in plans.items():
        run = RankingRun(arm=arm, encoder=encoder.name, alpha=alpha, scorer=scorer, k=k)
        queries = plan.query_vectors(text_vectors, text_row)
        if padded is None:
            if not plan.kept:
                queries = np.zeros((0, doc_vectors.shape[1]), np.float32)
            rankings[arm] = scan_ranking(examples, plan, pools, queries, doc_vectors, run)
            continue
        if plan.kept:
            cands = padded[list(plan.kept)]
            scores = score_candidates(queries, doc_vectors, cands, scorer=scorer)
        else:
            scores = np.zeros((0, padded.shape[1]), dtype=np.float32)
        order = rank_candidates(scores)
        rankings[arm] = build_ranking(examples, plan, pools, scores, order, run)
    return rankings


def retrieve(examples: Sequence[Example], arm: str, **options: Unpack[RetrieveOptions]) -> Ranking:
    """Rank every example's hop-2 candidates with one arm; ``options`` are the keyword
    arguments of :func:`retrieve_arms` (``encoder`` and ``store`` required)."""
    return retrieve_arms(examples, (arm,), **options)[arm]
