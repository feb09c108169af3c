"""The retrieval verbs: :func:`retrieve_arms` (several arms over one set of encodings) and
:func:`retrieve` (one arm). The only step with a side effect is the embedding store, reached
through the :class:`EmbeddingSource` protocol; everything else is a pure step of
:mod:`~regime_core.retrieval.pools`, :mod:`~regime_core.retrieval.queries`,
:mod:`~regime_core.retrieval.scoring` and :mod:`~regime_core.retrieval.ranking`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from regime_core import config
from regime_core.encoders.base import Encoder
from regime_core.retrieval.pools import CandidatePools, candidate_pools, document_text
from regime_core.retrieval.queries import plan_arm
from regime_core.retrieval.ranking import (
    Ranking,
    RankingRun,
    build_ranking,
    rank_candidates,
    scan_ranking,
)
from regime_core.retrieval.scoring import default_scorer, score_candidates
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.retrieval.vectors import EmbeddingSource, checked_vectors, embed_vectors
from regime_core.schema import Example


def retrieve_arms(
    examples: Sequence[Example],
    arms: Iterable[str],
    settings: RetrievalSettings,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    depth: int | None,
    b_rel: Sequence[int | str | None] | None = None,
    scorer: str | None = None,
    pools: CandidatePools | None = None,
) -> dict[str, Ranking]:
    """Rank every example's hop-2 candidates for several arms, sharing one set of encodings.

    Every distinct query text of every arm is encoded once (query mode) and every passage once
    (document mode) through ``store``; the arms differ only in how the text vectors are combined,
    by ``settings`` (:class:`~regime_core.retrieval.settings.RetrievalSettings`: the pool, the
    bridge exclusion, α and the knockout rule, checked when it was built). ``b_rel[i]`` is
    example ``i``'s relation sentence (index or text); ``None`` uses the gold
    ``Example.relation_sentence``. ``scorer`` (``numpy`` or ``faiss``, identical up to float32
    rounding) defaults to the faster for the pools' shape (:func:`default_scorer`). ``depth``
    truncates the stored top list and the run file (``None``: all candidates); ranks, scores
    and metrics always use the full candidate list. ``pools`` reuses candidate pools already
    built over the same examples.

    >>> rankings = retrieve_arms(exs, ("q", "union"), settings, encoder=enc, store=store,
    ...                          depth=10)                                      # doctest: +SKIP
    >>> rankings["union"].metrics()["hit@5"]                                     # doctest: +SKIP
    """
    examples = list(examples)
    arms = tuple(dict.fromkeys(arms))
    unknown = [a for a in arms if a not in config.ARMS]
    if unknown:
        raise ValueError(f"arm(s) {unknown} not among {config.ARMS}")
    if b_rel is None:
        b_rel = [ex.relation_sentence for ex in examples]
    elif len(b_rel) != len(examples):
        raise ValueError(f"b_rel has {len(b_rel)} entries for {len(examples)} examples")
    pool, exclude_bridge = settings.pool, settings.exclude_bridge
    if pools is None:
        pools = candidate_pools(examples, pool, exclude_bridge=exclude_bridge)
    elif pools.mode != pool or pools.exclude_bridge != exclude_bridge:
        raise ValueError(
            f"the pools given were built with mode={pools.mode!r}, exclude_bridge="
            f"{pools.exclude_bridge}, but pool={pool!r}, exclude_bridge={exclude_bridge}"
        )
    if len(pools.candidates) != len(examples):
        raise ValueError(f"{len(pools.candidates)} candidate pools for {len(examples)} examples")

    plans = {arm: plan_arm(examples, arm, b_rel, settings) for arm in arms}
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
        run = RankingRun(
            arm=arm, encoder=encoder.name, alpha=settings.alpha, scorer=scorer, k=depth
        )
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


def retrieve(
    examples: Sequence[Example], arm: str, settings: RetrievalSettings, **options: Any
) -> Ranking:
    """Rank every example's hop-2 candidates with one arm: :func:`retrieve_arms` with the same
    keyword ``options`` (``encoder``, ``store`` and ``depth`` are required)."""
    return retrieve_arms(examples, (arm,), settings, **options)[arm]
