"""Per-query outcome tables: where retrieval runs for the claims, and how the tables are read.

:func:`collect_outcomes` samples every dataset of a config and builds its outcome tables;
:func:`outcome_table` ranks every query of an arm through the embedding store (a warm rerun
encodes nothing) and is the only place the claims retrieve; everything downstream of the table is
a pure function of it. Its columns (:func:`outcome_columns`): ``qid, dataset, encoder, arm``
then the per-query metrics of :mod:`regime_core.metrics` (``rank``, ``hit@k``, ``mrr``, ``auc``,
``margin``, ``std_margin``), then the regime columns of
:func:`~regime_core.data.regimes.regime_table`
(``native_type, parallel, p1, p2, regime, b_rel_index, b_rel_source``) and, for the ``entity``
arm's audit, ``entity_mention`` (the hop-2 entity as written in the bridge) and
``entity_is_title`` (that mention normalises to the target passage's title).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.regimes import RegimeRules, bridge_entity_mention, regime_table
from regime_core.encoders.base import Encoder
from regime_core.encoders.store import Mode
from regime_core.experiments.common import ExperimentConfig, table_numbers
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.sampling import Sample, sample_numbers
from regime_core.metrics import NEGATIVE_METRICS
from regime_core.retrieval import (
    EmbeddingSource,
    Ranking,
    RetrievalSettings,
    candidate_pools,
    retrieve_arms,
)
from regime_core.retrieval.vectors import embed_vectors
from regime_core.schema import Example, Passage
from regime_core.text import normalize

REGIME_COLUMNS: tuple[str, ...] = (
    "native_type",
    "parallel",
    "p1",
    "p2",
    "regime",
    "b_rel_index",
    "b_rel_source",
)


def metric_columns(k: int) -> tuple[str, ...]:
    """The per-query metric columns of an outcome table with headline cutoff ``k``."""
    return ("rank", f"hit@{k}", "mrr", "auc", "margin", "std_margin")


def outcome_columns(k: int) -> tuple[str, ...]:
    """The columns of an outcome table whose hit columns run to ``hit@k``, in order."""
    return (
        "qid",
        "dataset",
        "encoder",
        "arm",
        *metric_columns(k),
        *REGIME_COLUMNS,
        "entity_mention",
        "entity_is_title",
    )


def mention_is_title(mention: str | None, title: str, rules: RegimeRules) -> bool:
    """The mention normalises to the title (disambiguators such as "(film)" dropped)."""
    if mention is None:
        return False
    return normalize(mention, rules=rules.normalization) == normalize(
        title, rules=rules.normalization
    )


class CountingStore:
    """Wraps an embedding store and counts what it encodes vs. reads from disk (for the
    notebooks' "a warm rerun encodes nothing" line)."""

    def __init__(self, store: EmbeddingSource) -> None:
        self.store = store
        self.n_encoded = 0
        self.n_cached = 0

    def embed(self, encoder: Encoder, texts: Sequence[str], mode: Mode) -> np.ndarray:
        return self._counted(encoder, texts, mode, compact=False)

    def embed_compact(self, encoder: Encoder, texts: Sequence[str], mode: Mode) -> Any:
        """As ``embed``, passing on the wrapped store's compact (CSR) rows when it has them
        (:func:`regime_core.retrieval.vectors.embed_vectors`)."""
        return self._counted(encoder, texts, mode, compact=True)

    def _counted(self, encoder: Encoder, texts: Sequence[str], mode: Mode, compact: bool) -> Any:
        compact = compact and getattr(self.store, "embed_compact", None) is not None
        with_report = getattr(self.store, "embed_with_report", None)
        if with_report is not None:
            options = {"compact": True} if compact else {}
            vectors, report = with_report(encoder, texts, mode, **options)
            self.n_encoded += report.n_encoded
            self.n_cached += report.n_cached
            return vectors
        self.n_encoded += len(set(texts))
        return (
            embed_vectors(self.store, encoder, texts, mode)
            if compact
            else self.store.embed(encoder, texts, mode)
        )


def outcome_table(
    examples: Sequence[Example],
    settings: RetrievalSettings,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    arms: Sequence[str] = config.ARMS,
    corpus: Sequence[Passage] | None = None,
) -> pd.DataFrame:
    """One row per (query, arm) with its outcome metrics and regime columns, under ``settings``.

    Retrieval uses the gold ``B_rel`` of :func:`regime_core.data.regimes.gold_b_rel` (the example's
    relation sentence, else the first bridge sentence naming the hop-2 entity). The ``entity``
    arm queries with :func:`bridge_entity_mention` (``entity_source="bridge_mention"``) or with
    ``Example.hop2_entity`` (``"example"``). Queries an arm cannot build are absent from its rows
    and counted in ``table.attrs["missing"]`` (``{arm: {reason: count}}``). ``corpus`` is the
    passage set of ``corpus`` pool mode (default: the examples' own pools). Embeddings come from
    ``store``; the top lists keep ``settings.k`` passages.
    """
    examples = list(examples)
    rules = settings.regime_rules
    regimes = regime_table(examples, rules).set_index("id")
    b_rel = [None if pd.isna(v) else int(v) for v in regimes["b_rel_index"]]
    mentions = [
        bridge_entity_mention(ex, rel, rules) for ex, rel in zip(examples, b_rel, strict=True)
    ]
    is_title = [
        mention_is_title(m, ex.target.title, rules)
        for ex, m in zip(examples, mentions, strict=True)
    ]

    from regime_core.data import corpus_passages

    if settings.pool == "corpus" and corpus is not None:
        passages = list(corpus)
    else:
        passages = corpus_passages(examples)
    pools = candidate_pools(
        examples, settings.pool, exclude_bridge=settings.exclude_bridge, passages=passages
    )
    arms = tuple(dict.fromkeys(arms))
    by_mention = settings.entity_source == "bridge_mention"
    plain_arms = [a for a in arms if not (a == "entity" and by_mention)]

    def rank(queried: Sequence[Example], which: Sequence[str]) -> dict[str, Ranking]:
        return retrieve_arms(
            queried,
            which,
            settings,
            encoder=encoder,
            store=store,
            b_rel=b_rel,
            pools=pools,
            depth=settings.k,
        )

    rankings = rank(examples, plain_arms) if plain_arms else {}
    if "entity" not in plain_arms and "entity" in arms:
        # The bridge mention replaces the example's hop2_entity; no mention -> no entity query.
        with_mention = [
            dataclasses.replace(ex, hop2_entity=m or "")
            for ex, m in zip(examples, mentions, strict=True)
        ]
        rankings["entity"] = rank(with_mention, ("entity",))["entity"]

    frames = []
    missing: dict[str, dict[str, int]] = {}
    for arm in arms:
        ranking = rankings[arm]
        missing[arm] = ranking.missing_counts()
        per_query = ranking_metrics(ranking, settings.k)
        per_query = per_query.reset_index().rename(columns={"index": "qid"})
        per_query.insert(1, "arm", arm)
        frames.append(per_query)
    table = pd.concat(frames, ignore_index=True)
    meta = pd.DataFrame(
        {
            "qid": [ex.id for ex in examples],
            "dataset": [ex.dataset for ex in examples],
            "entity_mention": mentions,
            "entity_is_title": is_title,
        }
    )
    regime_part = regimes.loc[:, list(REGIME_COLUMNS)].reset_index().rename(columns={"id": "qid"})
    table = table.merge(meta, on="qid", how="left").merge(regime_part, on="qid", how="left")
    table.insert(2, "encoder", encoder.name)
    table["rank"] = table["rank"].astype("int64")
    columns = list(outcome_columns(settings.k))
    table = table[columns]
    table.attrs["missing"] = missing
    return table


@dataclass(frozen=True)
class Outcomes:
    """Every (dataset, encoder) outcome table of a config, concatenated, plus provenance."""

    table: pd.DataFrame
    samples: Mapping[str, Sample]
    missing: Mapping[str, Mapping[str, Mapping[str, Mapping[str, int]]]]  # enc -> ds -> arm
    n_encoded: int
    n_cached: int

    def sample_numbers(self) -> dict[str, dict[str, Any]]:
        """``{dataset: {n_available, n, n_tiny_pool, ids_hash}}`` for the record."""
        return {ds: sample_numbers(s) for ds, s in self.samples.items()}

    def input_hashes(self) -> dict[str, str]:
        """``{"sample_<dataset>": ids_hash}`` for the record's ``inputs``."""
        return {f"sample_{ds}": s.ids_hash for ds, s in self.samples.items()}


def collect_outcomes(
    cfg: ExperimentConfig, arms: Sequence[str], context: Context | None = None
) -> Outcomes:
    """Sample every dataset of ``cfg`` and build its outcome table for every encoder, under
    ``cfg.retrieval``; ``context`` replaces the prepared files, the real encoders or the store
    (tests use a synthetic world and a fake encoder). The table is sorted by encoder, dataset,
    arm, qid."""
    context = resolve(context)
    samples = context.samples(cfg, cfg.datasets)
    counting = CountingStore(context.embeddings)
    frames = []
    missing: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for encoder_name in cfg.encoders:
        missing[encoder_name] = {}
        for dataset, sample in samples.items():
            table = outcome_table(
                sample.examples,
                cfg.retrieval,
                encoder=context.encoder(encoder_name, sample.corpus),
                store=counting,
                arms=arms,
                corpus=sample.corpus,
            )
            # The encoder's own name may differ from the requested one (a hub id); keep the
            # requested name so that tables line up with the config.
            table["encoder"] = encoder_name
            missing[encoder_name][dataset] = table.attrs["missing"]
            frames.append(table)
    table = pd.concat(frames, ignore_index=True)
    table = table.sort_values(["encoder", "dataset", "arm", "qid"], kind="stable")
    table = table.reset_index(drop=True)
    return Outcomes(
        table=table,
        samples=samples,
        missing=missing,
        n_encoded=counting.n_encoded,
        n_cached=counting.n_cached,
    )


def ranking_metrics(ranking: Ranking, k: int) -> pd.DataFrame:
    """:func:`metric_columns` per query of a ranking (index ``qid``).

    A query whose candidates are all gold (a tiny pool: two passages, the bridge excluded) has
    no negative, so ``auc`` and the margins are undefined there: they are NaN (and left out of
    T1), while ``rank``, ``hit@k`` and ``mrr`` are defined for every query.
    """
    from regime_core.metrics import evaluate_per_query

    names = list(metric_columns(k))
    ranked = [m for m in names if m not in NEGATIVE_METRICS]
    table = ranking.per_query_metrics(k_values=(k,), metrics=ranked)
    for name in NEGATIVE_METRICS:
        table[name] = np.nan
    if ranking.negatives is not None:
        # corpus mode: the streamed statistics of the negatives, not the score rows
        from regime_core.metrics import QuerySummaries, evaluate_summaries_per_query

        summaries = ranking.summaries()
        keep_mask = summaries.negatives.count > 0
        if np.any(keep_mask):
            defined = evaluate_summaries_per_query(
                QuerySummaries(
                    target_rank=summaries.target_rank[keep_mask],
                    gold_ranks=summaries.gold_ranks[keep_mask],
                    negatives=summaries.negatives.subset(keep_mask),
                ),
                list(NEGATIVE_METRICS),
                query_ids=[q for q, kept in zip(ranking.query_ids, keep_mask, strict=True) if kept],
            )
            table.loc[defined.index, list(NEGATIVE_METRICS)] = defined.to_numpy()
        return table[names]
    targets, golds = ranking.positions()
    golds = [g if t in g else [*g, t] for t, g in zip(targets, golds, strict=True)]  # target: gold
    keep = [i for i, rows in enumerate(ranking.candidate_rows) if len(set(golds[i])) < len(rows)]
    if keep:
        defined = evaluate_per_query(
            [ranking.candidate_scores[i] for i in keep],
            [targets[i] for i in keep],
            list(NEGATIVE_METRICS),
            gold=[golds[i] for i in keep],
            query_ids=[ranking.query_ids[i] for i in keep],
        )
        table.loc[defined.index, list(NEGATIVE_METRICS)] = defined.to_numpy()
    return table[names]


#: The dataset level of a claim's tables that pools the evidence datasets' queries.
POOLED = "all"


def arm_matrix(table: pd.DataFrame, value: str, arms: Sequence[str]) -> pd.DataFrame:
    """Pivot an outcome table to one row per (encoder, dataset, qid), one column per arm,
    keeping only queries every listed arm has (pairing for paired tests)."""
    keys = ["encoder", "dataset", "qid"]
    part = table[table["arm"].isin(arms)]
    wide = part.pivot_table(index=keys, columns="arm", values=value, aggfunc="first")
    missing_arms = [a for a in arms if a not in wide.columns]
    if missing_arms:
        raise ValueError(f"outcome table has no rows for arm(s) {missing_arms}")
    wide = wide[list(arms)].dropna()
    attrs = (
        table.drop_duplicates(keys)
        .set_index(keys)
        .loc[:, ["native_type", "parallel", "p1", "p2", "regime", "entity_is_title"]]
    )
    return wide.join(attrs, how="left").reset_index()


def pq_label(p1: bool, p2: bool) -> str:
    """``"P1+P2-"``-style label of a predicate cell.

    >>> pq_label(False, True)
    'P1-P2+'
    """
    return f"P1{'+' if p1 else '-'}P2{'+' if p2 else '-'}"


#: What a claim's record keeps of its samples, per dataset its ``n_available``, ``n``,
#: ``n_tiny_pool`` and ``ids_hash`` (:meth:`Outcomes.sample_numbers`; None: none given).
SampleNumbers = Mapping[str, Mapping[str, Any]] | None


def run_on_outcomes(
    cfg: ExperimentConfig,
    arms: Sequence[str],
    analyse: Any,
    context: Context | None = None,
) -> tuple[Any, Outcomes]:
    """Collect the outcomes of ``arms`` (:func:`collect_outcomes`) and ``analyse`` them:
    ``(analyse(table, cfg, sample numbers), outcomes)``, the run of each claim T1-T3."""
    outcomes = collect_outcomes(cfg, arms, context)
    return analyse(outcomes.table, cfg, outcomes.sample_numbers()), outcomes


@dataclass(frozen=True)
class Evidence:
    """The datasets a pooled verdict pools (``pooled_datasets``: those whose P1 and P2 are both
    informative) and the degeneracy table they were chosen by (:func:`evidence_datasets`)."""

    pooled_datasets: tuple[str, ...] = ()
    degenerate: pd.DataFrame | None = None  # (dataset, predicate, n, share_true, degenerate)

    def numbers(self) -> dict[str, Any]:
        """The record's ``pooled_datasets`` and ``degenerate`` (``{dataset: {p1: {share_true,
        degenerate}, p2: {...}}}``)."""
        table = self.degenerate
        fields = {"share_true": float, "degenerate": bool}
        return {
            "pooled_datasets": ", ".join(self.pooled_datasets) or "none",
            "degenerate": {}
            if table is None
            else table_numbers(table, ("dataset", "predicate"), fields),
        }


def pooled_twin_mask(levels: pd.Series, pooled_datasets: Sequence[str]) -> pd.Series:
    """Which rows of a run's tests (``levels``: each row's dataset level) are a pooled level
    that pools one dataset alone, so repeat that dataset's test on the same questions; pure. A
    Holm family leaves them out (one dataset is never counted twice) and they take their
    twin's adjusted values.

    >>> pooled_twin_mask(pd.Series(["a", POOLED]), ["a"]).tolist()
    [False, True]
    >>> pooled_twin_mask(pd.Series(["a", "b", POOLED]), ["a", "b"]).tolist()
    [False, False, False]
    """
    if len(pooled_datasets) != 1:
        return pd.Series(False, index=levels.index)
    return levels == POOLED


def evidence_datasets(attrs: pd.DataFrame, threshold: float = config.DEGENERATE_SHARE) -> Evidence:
    """The datasets whose P1 and P2 are both informative, with the degeneracy table; pure.

    ``attrs`` has one row per (…, dataset, qid) with ``p1`` and ``p2`` (repeats across encoders
    are dropped). A dataset where a predicate is true (or false) for at least ``threshold`` of
    its items (:func:`regime_core.data.regimes.degenerate_predicates`) is no evidence about the
    predicate split, so pooled verdicts leave it out; its own cells are still reported.
    """
    from regime_core.data.regimes import degenerate_predicates

    items = attrs.drop_duplicates(["dataset", "qid"])
    table = degenerate_predicates(items, threshold)
    bad = set(table.loc[table["degenerate"], "dataset"])
    return Evidence(tuple(sorted(set(items["dataset"]) - bad)), table)
