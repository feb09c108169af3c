"""What every claim shares: the experiment config, seeded sampling, and per-query outcome tables.

The flow of every claim notebook is::

    config ──collect_outcomes──▶ outcome table (one row per query × arm × encoder)
                                      │
                                      ▼
                          analyse_t1 / analyse_t2 / analyse_t3 ──▶ result.to_numbers() ──▶ record

:func:`outcome_table` is the only place retrieval runs; it goes through the embedding store, so a
warm rerun encodes nothing. Everything downstream of the table is a pure function of it.

The outcome table's columns (:data:`OUTCOME_COLUMNS`): ``qid, dataset, encoder, arm`` then the
per-query metrics of :mod:`regime_core.metrics` (``rank``, ``hit@k``, ``mrr``, ``auc``,
``margin``, ``std_margin``), then the regime columns of :func:`regime_core.regimes.regime_table`
(``native_type, parallel, p1, p2, regime, b_rel_index, b_rel_source``) and, for the ``entity``
arm's audit, ``entity_mention`` (the hop-2 entity as written in the bridge) and
``entity_is_title`` (that mention normalises to the target passage's title).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config, paths
from regime_core.config import ConfigMixin
from regime_core.encoders.base import Encoder
from regime_core.encoders.registry import EncoderFactory
from regime_core.regimes import DEFAULT_REGIME_RULES, RegimeRules, hop2_names, regime_table
from regime_core.retrieval import Ranking, candidate_pools, document_text, retrieve_arms
from regime_core.schema import SPLITS, Example, Passage
from regime_core.text import find_mentions, normalize

# The datasets `regime data prepare` builds; the experiments default to all of them.
EXPERIMENT_DATASETS: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")
# A dense family and a lexical family: the smallest honest "across encoders" on a CPU machine.
EXPERIMENT_ENCODERS: tuple[str, ...] = (config.ENCODER, "tfidf")
# Where the entity arm's text comes from (see :func:`bridge_entity_mention`).
ENTITY_SOURCES: tuple[str, ...] = ("bridge_mention", "example")

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


OUTCOME_COLUMNS: tuple[str, ...] = outcome_columns(config.HEADLINE_K)


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExperimentConfig(ConfigMixin):
    """The parameters every claim shares; notebooks build it from their ``parameters`` cell.

    ``sample_size`` is per dataset (``None``: every two-hop item of the split); the sample is a
    seeded function of (seed, dataset, ids) only. ``bootstrap_resamples`` drives every CI.
    Lists are accepted (papermill passes YAML lists) and stored as tuples.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size"})  # None = all

    datasets: tuple[str, ...] = EXPERIMENT_DATASETS
    encoders: tuple[str, ...] = EXPERIMENT_ENCODERS
    pool: str = config.POOL_MODE
    alpha: float = config.ALPHA
    k: int = config.HEADLINE_K
    seed: int = config.SEED
    sample_size: int | None = None
    split: str = "dev"
    bootstrap_resamples: int = config.BOOTSTRAP_RESAMPLES
    confidence: float = config.CONFIDENCE
    exclude_bridge: bool = config.EXCLUDE_BRIDGE
    entity_source: str = "bridge_mention"
    tiny_pools: str = config.TINY_POOLS  # pools with <= k hop-2 candidates: exclude or keep
    knockout_single: str = config.KNOCKOUT_SINGLE  # knockout of a B_rel-only bridge: title/drop
    predicate_names: str = config.PREDICATE_NAMES  # names that make P1/P2: title(+linking)
    rules: RegimeRules = field(default_factory=lambda: DEFAULT_REGIME_RULES)

    def validate(self) -> None:
        for name in ("datasets", "encoders"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value))
        where = type(self).__name__
        if not self.datasets:
            raise ValueError(
                f"{where}.datasets is empty; name at least one of {EXPERIMENT_DATASETS}"
            )
        unknown = [d for d in self.datasets if d not in (*EXPERIMENT_DATASETS, "toyworld")]
        if unknown:
            raise ValueError(f"{where}.datasets: unknown {unknown}; known {EXPERIMENT_DATASETS}")
        if len(set(self.datasets)) != len(self.datasets):
            raise ValueError(f"{where}.datasets lists a dataset twice: {self.datasets}")
        if not self.encoders or len(set(self.encoders)) != len(self.encoders):
            raise ValueError(f"{where}.encoders must be distinct names, got {self.encoders}")
        if self.pool not in config.POOL_MODES:
            raise ValueError(f"{where}.pool is {self.pool!r}, not one of {config.POOL_MODES}")
        if not np.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError(f"{where}.alpha must be a finite number >= 0, got {self.alpha!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"{where}.k must be a positive integer, got {self.k!r}")
        if self.sample_size is not None and (
            isinstance(self.sample_size, bool)
            or not isinstance(self.sample_size, int)
            or self.sample_size < 1
        ):
            raise ValueError(
                f"{where}.sample_size must be a positive integer or None (all), "
                f"got {self.sample_size!r}"
            )
        if self.split not in SPLITS:
            raise ValueError(f"{where}.split is {self.split!r}, not one of {SPLITS}")
        if (
            isinstance(self.bootstrap_resamples, bool)
            or not isinstance(self.bootstrap_resamples, int)
            or self.bootstrap_resamples < 1
        ):
            raise ValueError(
                f"{where}.bootstrap_resamples must be a positive integer, "
                f"got {self.bootstrap_resamples!r}"
            )
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"{where}.confidence must lie in (0, 1), got {self.confidence!r}")
        if self.entity_source not in ENTITY_SOURCES:
            raise ValueError(
                f"{where}.entity_source is {self.entity_source!r}, not one of {ENTITY_SOURCES}"
            )
        if not isinstance(self.rules, RegimeRules):
            raise ValueError(f"{where}.rules must be a RegimeRules")
        if self.tiny_pools not in config.TINY_POOL_RULES:
            raise ValueError(
                f"{where}.tiny_pools is {self.tiny_pools!r}, not one of {config.TINY_POOL_RULES}"
            )
        if self.knockout_single not in config.KNOCKOUT_SINGLE_RULES:
            raise ValueError(
                f"{where}.knockout_single is {self.knockout_single!r}, not one of "
                f"{config.KNOCKOUT_SINGLE_RULES}"
            )
        # predicate_names is the flat (papermill-friendly) face of rules.predicate_names: a
        # value set on either side wins over the other's default; two set values must agree.
        if self.rules.predicate_names != self.predicate_names:
            if self.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(self, "predicate_names", self.rules.predicate_names)
            elif self.rules.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(
                    self,
                    "rules",
                    dataclasses.replace(self.rules, predicate_names=self.predicate_names),
                )
            else:  # pragma: no cover - two non-default values of a two-valued knob differ
                raise ValueError(
                    f"{where}: predicate_names={self.predicate_names!r} contradicts "
                    f"rules.predicate_names={self.rules.predicate_names!r}; set one of them"
                )


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------


def ids_hash(ids: Sequence[str]) -> str:
    """sha256 (16 hex digits) of the sorted id list: names a sample independent of its order.

    >>> ids_hash(["b", "a"]) == ids_hash(["a", "b"])
    True
    """
    payload = "\n".join(sorted(ids)).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()[:16]


def sample_ids(ids: Sequence[str], size: int | None, *, seed: int, stream: str = "") -> list[str]:
    """A seeded sample of ``size`` ids without replacement, returned sorted; pure.

    The ids are sorted first, so the sample depends on the id *set*, the seed and ``stream``
    (the dataset name, so two datasets get independent draws) and not on file order.
    ``size=None`` or ``size >= len(ids)`` returns every id.

    >>> sample_ids(["c", "a", "b"], 2, seed=0) == sample_ids(["b", "c", "a"], 2, seed=0)
    True
    """
    ordered = sorted(ids)
    if len(set(ordered)) != len(ordered):
        raise ValueError("sample_ids: the ids are not unique; check the prepared examples")
    if size is None or size >= len(ordered):
        return ordered
    rng = np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])
    chosen = rng.choice(len(ordered), size=size, replace=False)
    return [ordered[i] for i in sorted(chosen)]


@dataclass(frozen=True)
class Sample:
    """The examples of one dataset a run uses, and how they were drawn."""

    dataset: str
    split: str
    n_available: int
    examples: tuple[Example, ...]
    ids_hash: str
    corpus: tuple[Passage, ...]  # every passage of the split (fits TF-IDF; corpus-mode pool)
    n_tiny_pool: int = 0  # items of the split left out before sampling: pool <= k candidates

    @property
    def n(self) -> int:
        return len(self.examples)


def hop2_candidates(example: Example, exclude_bridge: bool = config.EXCLUDE_BRIDGE) -> int:
    """How many hop-2 candidates the question's own pool offers (the bridge excluded or not)."""
    pids = {p.pid for p in example.pool}
    if exclude_bridge:
        pids.discard(example.bridge.pid)
    return len(pids)


def is_tiny_pool(
    example: Example, k: int, pool: str = config.POOL_MODE, exclude_bridge: bool = True
) -> bool:
    """True when ``example``'s hop-2 candidates are at most ``k`` (then hit@k is 1 for every
    arm). Only question pools can be that small; a corpus pool never counts as tiny."""
    return pool == "question" and hop2_candidates(example, exclude_bridge) <= k


def sample_numbers(sample: Sample) -> dict[str, Any]:
    """What a record keeps of a sample: sizes, the tiny-pool exclusions and the ids' hash."""
    return {
        "n_available": sample.n_available,
        "n": sample.n,
        "n_tiny_pool": sample.n_tiny_pool,
        "ids_hash": sample.ids_hash,
    }


def sample_examples(
    examples: Sequence[Example],
    size: int | None,
    *,
    seed: int,
    dataset: str,
    split: str,
    tiny_pools: str = "keep",
    k: int = config.HEADLINE_K,
    pool: str = config.POOL_MODE,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
) -> Sample:
    """Seeded sample (see :func:`sample_ids`) of the ``split`` examples of ``dataset``.

    With ``tiny_pools="exclude"`` the items whose pool offers at most ``k`` hop-2 candidates
    (:func:`is_tiny_pool`) are left out *before* sampling and counted in ``Sample.n_tiny_pool``.
    The corpus (TF-IDF's vocabulary, the corpus-mode pool) is always the whole split's.
    """
    from regime_core.data import corpus_passages

    if tiny_pools not in config.TINY_POOL_RULES:
        raise ValueError(f"tiny_pools is {tiny_pools!r}, not one of {config.TINY_POOL_RULES}")
    pool_items = [ex for ex in examples if ex.dataset == dataset and ex.split == split]
    if not pool_items:
        raise ValueError(
            f"no {split} examples of {dataset!r}; run `regime data prepare` or check the split"
        )
    eligible = pool_items
    if tiny_pools == "exclude":
        eligible = [ex for ex in pool_items if not is_tiny_pool(ex, k, pool, exclude_bridge)]
    if not eligible:
        raise ValueError(
            f"every {split} example of {dataset!r} has a pool of at most {k} candidates; "
            "use tiny_pools='keep' or a smaller k"
        )
    chosen = set(sample_ids([ex.id for ex in eligible], size, seed=seed, stream=dataset))
    picked = tuple(sorted((ex for ex in eligible if ex.id in chosen), key=lambda ex: ex.id))
    return Sample(
        dataset=dataset,
        split=split,
        n_available=len(pool_items),
        examples=picked,
        ids_hash=ids_hash([ex.id for ex in picked]),
        corpus=tuple(corpus_passages(pool_items)),
        n_tiny_pool=len(pool_items) - len(eligible),
    )


def load_samples(
    cfg: ExperimentConfig,
    *,
    work: Path | str | None = None,
    examples: Mapping[str, Sequence[Example]] | None = None,
) -> dict[str, Sample]:
    """One :class:`Sample` per dataset of ``cfg``, from the prepared files under ``work`` (or
    from ``examples``, a mapping dataset -> examples, e.g. a synthetic world in tests)."""
    from regime_core.data import load_examples

    samples = {}
    for dataset in cfg.datasets:
        if examples is not None:
            if dataset not in examples:
                raise ValueError(f"examples: no entry for dataset {dataset!r}")
            found: Sequence[Example] = examples[dataset]
        else:
            found = load_examples(
                dataset, split=cfg.split, work=None if work is None else Path(work)
            )
        samples[dataset] = sample_examples(
            found,
            cfg.sample_size,
            seed=cfg.seed,
            dataset=dataset,
            split=cfg.split,
            tiny_pools=cfg.tiny_pools,
            k=cfg.k,
            pool=cfg.pool,
            exclude_bridge=cfg.exclude_bridge,
        )
    return samples


# --------------------------------------------------------------------------------------------
# The entity arm's text
# --------------------------------------------------------------------------------------------


def bridge_entity_mention(
    example: Example, b_rel_index: int | None, rules: RegimeRules = DEFAULT_REGIME_RULES
) -> str | None:
    """The hop-2 entity *as the bridge writes it*: the first mention of any hop-2 name in
    ``B_rel``, else in the first bridge sentence that has one; None when the bridge never
    names it.

    Why: an entity arm queried with the target's *title* retrieves the target by name (it
    leaks the answer passage); the bridge's own words are what an iterative retriever has
    after hop 1 (design notes, "two traps").
    """
    names = hop2_names(example, rules)
    sentences = list(example.bridge.sentences)
    order = list(range(len(sentences)))
    if b_rel_index is not None and 0 <= b_rel_index < len(sentences):
        order.remove(b_rel_index)
        order.insert(0, b_rel_index)
    for i in order:
        found = find_mentions(sentences[i], names, rules.normalization)
        if found:
            return found[0].surface
    return None


def mention_is_title(mention: str | None, title: str, rules: RegimeRules) -> bool:
    """The mention normalises to the title (disambiguators such as "(film)" dropped)."""
    if mention is None:
        return False
    return normalize(mention, rules=rules.normalization) == normalize(
        title, rules=rules.normalization
    )


# --------------------------------------------------------------------------------------------
# Outcome tables
# --------------------------------------------------------------------------------------------


class CountingStore:
    """Wraps an embedding store and counts what it encodes vs. reads from disk (for the
    notebooks' "a warm rerun encodes nothing" line)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.n_encoded = 0
        self.n_cached = 0

    def embed(self, encoder: Encoder, texts: Sequence[str], mode: str) -> np.ndarray:
        if hasattr(self.store, "embed_with_report"):
            vectors, report = self.store.embed_with_report(encoder, texts, mode)
            self.n_encoded += report.n_encoded
            self.n_cached += report.n_cached
            return vectors
        self.n_encoded += len(set(texts))
        return self.store.embed(encoder, texts, mode)


def _store_for(work: Path | str | None, store: Any | None) -> Any:
    if store is not None:
        return store
    from regime_core.encoders import EmbeddingStore

    return EmbeddingStore(paths.embeddings_dir(None if work is None else Path(work)))


def outcome_table(
    examples: Sequence[Example],
    *,
    encoder: Encoder,
    arms: Sequence[str] = config.ARMS,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    k: int = config.HEADLINE_K,
    work: Path | str | None = None,
    store: Any | None = None,
    corpus: Sequence[Passage] | None = None,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    entity_source: str = "bridge_mention",
    rules: RegimeRules = DEFAULT_REGIME_RULES,
    knockout_single: str = config.KNOCKOUT_SINGLE,
) -> pd.DataFrame:
    """One row per (query, arm) with its outcome metrics and regime columns.

    Retrieval uses the gold ``B_rel`` of :func:`regime_core.regimes.gold_b_rel` (the example's
    relation sentence, else the first bridge sentence naming the hop-2 entity). The ``entity``
    arm queries with :func:`bridge_entity_mention` (``entity_source="bridge_mention"``) or with
    ``Example.hop2_entity`` (``"example"``). Queries an arm cannot build are absent from its rows
    and counted in ``table.attrs["missing"]`` (``{arm: {reason: count}}``). ``corpus`` is the
    passage set of ``corpus`` pool mode (default: the examples' own pools). Embeddings come from
    ``store`` (default: the store under ``work``).
    """
    examples = list(examples)
    if not examples:
        raise ValueError("outcome_table: no examples")
    if entity_source not in ENTITY_SOURCES:
        raise ValueError(f"entity_source {entity_source!r} is not one of {ENTITY_SOURCES}")
    store = _store_for(work, store)
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

    if pool == "corpus" and corpus is not None:
        passages = list(corpus)
    else:
        passages = corpus_passages(examples)
    pools = candidate_pools(examples, pool, exclude_bridge=exclude_bridge, passages=passages)
    arms = tuple(dict.fromkeys(arms))
    plain_arms = [a for a in arms if not (a == "entity" and entity_source == "bridge_mention")]
    common = dict(
        encoder=encoder,
        store=store,
        pool=pool,
        alpha=alpha,
        exclude_bridge=exclude_bridge,
        b_rel=b_rel,
        k=k,
        pools=pools,
        knockout_single=knockout_single,
    )
    rankings = retrieve_arms(examples, plain_arms, **common) if plain_arms else {}
    if "entity" not in plain_arms and "entity" in arms:
        # The bridge mention replaces the example's hop2_entity; no mention -> no entity query.
        with_mention = [
            dataclasses.replace(ex, hop2_entity=m or "")
            for ex, m in zip(examples, mentions, strict=True)
        ]
        rankings["entity"] = retrieve_arms(with_mention, ("entity",), **common)["entity"]

    frames = []
    missing: dict[str, dict[str, int]] = {}
    for arm in arms:
        ranking = rankings[arm]
        missing[arm] = ranking.missing_counts()
        per_query = ranking_metrics(ranking, k)
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
    columns = list(outcome_columns(k))
    table = table[columns]
    table.attrs["missing"] = missing
    return table


# Metrics defined only against negatives (non-gold candidates).
NEGATIVE_METRICS: tuple[str, ...] = ("auc", "margin", "std_margin")


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
    row_of = {pid: row for row, pid in enumerate(ranking.passage_pids)}
    targets: list[int] = []
    golds: list[list[int]] = []
    keep: list[int] = []
    for i, rows in enumerate(ranking.candidate_rows):
        position = {int(row): pos for pos, row in enumerate(rows)}
        gold = [position[row_of[g]] for g in ranking.gold_pids[i] if row_of[g] in position]
        target = position[row_of[ranking.target_pids[i]]]
        if target not in gold:
            gold.append(target)
        if len(set(gold)) < len(rows):
            keep.append(i)
            targets.append(target)
            golds.append(gold)
    if keep:
        defined = evaluate_per_query(
            [ranking.candidate_scores[i] for i in keep],
            targets,
            list(NEGATIVE_METRICS),
            gold=golds,
            query_ids=[ranking.query_ids[i] for i in keep],
        )
        table.loc[defined.index, list(NEGATIVE_METRICS)] = defined.to_numpy()
    return table[names]


@functools.cache
def _cached_dense_encoder(name: str) -> Encoder:
    from regime_core.encoders import get_encoder

    return get_encoder(name)


def default_encoder_factory(name: str, corpus_texts: Sequence[str]) -> Encoder:
    """``get_encoder(name)``; dense models are loaded once per process, TF-IDF is fitted on the
    dataset split's corpus (so its vectors do not depend on the sample)."""
    from regime_core.encoders import get_encoder

    if name == "tfidf":
        return get_encoder(name, corpus=list(corpus_texts))
    return _cached_dense_encoder(name)


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
    cfg: ExperimentConfig,
    arms: Sequence[str],
    *,
    work: Path | str | None = None,
    examples: Mapping[str, Sequence[Example]] | None = None,
    encoder_factory: EncoderFactory | None = None,
    store: Any | None = None,
) -> Outcomes:
    """Sample every dataset of ``cfg`` and build its outcome table for every encoder.

    ``examples`` and ``encoder_factory`` replace the prepared files and the real encoders (tests
    use a synthetic world and a fake encoder). The table is sorted by encoder, dataset, arm, qid.
    """
    samples = load_samples(cfg, work=work, examples=examples)
    factory = encoder_factory or default_encoder_factory
    counting = CountingStore(_store_for(work, store))
    frames = []
    missing: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for encoder_name in cfg.encoders:
        missing[encoder_name] = {}
        for dataset, sample in samples.items():
            encoder = factory(encoder_name, [document_text(p) for p in sample.corpus])
            table = outcome_table(
                sample.examples,
                encoder=encoder,
                arms=arms,
                pool=cfg.pool,
                alpha=cfg.alpha,
                k=cfg.k,
                store=counting,
                corpus=sample.corpus,
                exclude_bridge=cfg.exclude_bridge,
                entity_source=cfg.entity_source,
                rules=cfg.rules,
                knockout_single=cfg.knockout_single,
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


def evidence_datasets(
    attrs: pd.DataFrame, threshold: float = config.DEGENERATE_SHARE
) -> tuple[list[str], pd.DataFrame]:
    """The datasets whose P1 and P2 are both informative, and the degeneracy table; pure.

    ``attrs`` has one row per (…, dataset, qid) with ``p1`` and ``p2`` (repeats across encoders
    are dropped). A dataset where a predicate is true (or false) for at least ``threshold`` of
    its items (:func:`regime_core.regimes.degenerate_predicates`) is no evidence about the
    predicate split, so pooled verdicts leave it out; its own cells are still reported.
    """
    from regime_core.regimes import degenerate_predicates

    items = attrs.drop_duplicates(["dataset", "qid"])
    table = degenerate_predicates(items, threshold)
    bad = set(table.loc[table["degenerate"], "dataset"])
    return sorted(set(items["dataset"]) - bad), table
