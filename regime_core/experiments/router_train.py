"""The RegimeRouter end to end: selector quality, training on retrieval outcomes, the deployed rule.

The paper's router picks, per two-hop question, ``q`` (encode the question alone) or ``union``
(``f_q(q) + α·f_q(B_rel)``, α frozen at ``config.ALPHA``), from five surface features of the
question and the bridge. Nothing gold is read at inference: ``B_rel`` is the sentence chosen by
:func:`regime_core.router.select_b_rel`, never the dataset's relation sentence.

The flow, each step a function of its inputs (files only at the edges)::

    Sample ──build_routing_data──▶ RoutingData (features, selected B_rel, rank of the hop-2
                                    target under q and under union, per question)
                 │
                 ├─ outcome_labels ─▶ labels ─ cross_fit_predict ─▶ out-of-fold p(union)
                 │                                   │
                 │                          evaluate_routing ─▶ RoutingOutcome (routed hit@k vs
                 │                                               always-q / always-union / oracle)
                 └─ fit on every labelled item ─▶ the deployment router ─ save_router ─▶ JSON

:func:`train_router` runs it on 2WikiMultiHopQA (the paper's training set); comparison
("parallel") questions are **included**: they name both entities, so they are the canonical
Q-dominant case the router must learn to leave alone. :func:`default_router` loads the packaged
model (``regime_core/resources/default_router.json``), which ``regime route train`` rebuilds.

Routed hit@k uses the router's decision per question: ``hit_routed = hit_union`` where it says
union, else ``hit_q``. The oracle router takes the better of the two per question, so
``oracle − routed`` is what a perfect router would add.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config, paths
from regime_core.config import ConfigMixin
from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules, regime_table
from regime_core.encoders.base import Encoder
from regime_core.encoders.store import store_or_default
from regime_core.experiments.common import (
    EXPERIMENT_DATASETS,
    EncoderFactory,
    ExperimentConfig,
    Sample,
    default_encoder_factory,
    load_samples,
)
from regime_core.retrieval import (
    candidate_pools,
    combine_query_vectors,
    document_text,
    rank_candidates,
    score_candidates,
)
from regime_core.retrieval.corpus_scan import scan_corpus
from regime_core.router import (
    DROPPED,
    FEATURE_NAMES,
    TIE_RULES,
    RegimeRouter,
    RouteDecision,
    RouterRules,
    cross_fit_predict,
    describe_label_rule,
    featurize,
    load_router,
    outcome_labels,
    save_router,
    tie_mask,
)
from regime_core.router.rules import DEFAULT_ROUTER_RULES
from regime_core.schema import SPLITS, Example
from regime_core.stats import PairedComparison, compare_paired

#: The paper trains on 2WikiMultiHopQA and applies the router zero-shot to the other two.
TRAIN_DATASET: str = "2wikimultihopqa"
TRANSFER_DATASETS: tuple[str, ...] = ("musique", "hotpotqa")
#: File name of the packaged model inside ``regime_core/resources``.
DEFAULT_ROUTER_FILE: str = "default_router.json"
#: File name a training run writes the deployment router to, inside its output directory.
TRAINED_ROUTER_FILE: str = "router.json"

# The four routing policies every outcome reports, and the paired comparisons between them.
POLICIES: tuple[str, ...] = ("q", "union", "routed", "oracle")
COMPARISONS: dict[str, tuple[str, str]] = {
    "routed_vs_q": ("routed", "q"),
    "union_vs_q": ("union", "q"),
    "oracle_vs_q": ("oracle", "q"),
    "oracle_vs_routed": ("oracle", "routed"),  # the oracle gap
    # what a router is for: beating the policy that needs no router at all
    "routed_vs_union": ("routed", "union"),
}


# --------------------------------------------------------------------------------------------
# The packaged model
# --------------------------------------------------------------------------------------------


def default_router_path() -> Path:
    """Where the packaged router lives (package data, present right after ``pip install``)."""
    return Path(str(importlib.resources.files("regime_core") / "resources" / DEFAULT_ROUTER_FILE))


def default_router() -> RegimeRouter:
    """The packaged deployment router: fitted on every 2WikiMultiHopQA two-hop item with
    MiniLM retrieval outcomes, α = ``config.ALPHA``. Rebuild it with ``regime route train``.

    >>> decision = default_router().route(
    ...     "Who is the mother of the director of Kestrel Bay?",
    ...     ["Kestrel Bay is a film.", "It was directed by Ann Lee."],
    ... )
    >>> decision.b_rel, decision.action in ("q", "union")
    ('It was directed by Ann Lee.', True)
    """
    path = default_router_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"the packaged router {path} is missing; rebuild it with `regime route train`"
        )
    return load_router(path)


def resolve_router(model: str | os.PathLike[str] | RegimeRouter | None) -> RegimeRouter:
    """A router from a loaded model, a JSON file written by ``save_router``, or None (the
    packaged default). Raises ValueError for a path that is not a file."""
    if isinstance(model, RegimeRouter):
        return model
    if model is None:
        return default_router()
    if not isinstance(model, str | os.PathLike):
        raise ValueError(f"model must be a router file path or None, got {type(model).__name__}")
    path = Path(model)
    if not path.is_file():
        raise ValueError(f"router model file {path} does not exist or is not a file")
    return load_router(path)


def route_text(
    question: str,
    bridge: str,
    *,
    bridge_title: str | None = None,
    model: str | os.PathLike[str] | RegimeRouter | None = None,
) -> RouteDecision:
    """Route one question given the bridge passage as running text, exactly as ``regime route``
    and the book's ``router.js`` do: the text is split by
    :func:`regime_core.router.sentences.split_bridge`, then :meth:`RegimeRouter.route` selects
    ``B_rel``, computes the features and decides.

    Raises ValueError for a non-string or empty question or bridge, or a bad model file.
    """
    from regime_core.router.sentences import route_bridge_text

    return route_bridge_text(resolve_router(model), question, bridge, bridge_title)


def decision_dict(decision: RouteDecision) -> dict[str, Any]:
    """The JSON object ``regime route --json`` prints."""
    return {
        "action": decision.action,
        "probability": decision.probability,
        "b_rel": decision.b_rel,
        "b_rel_index": decision.b_rel_index,
        "features": dict(decision.features),
    }


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------


def check_bridge_source(value: Any, where: str) -> None:
    if value not in config.BRIDGE_SOURCES:
        raise ValueError(f"{where}.bridge_source is {value!r}, not one of {config.BRIDGE_SOURCES}")


def _check_positive_int(value: Any, where: str, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        hint = " or None" if allow_none else ""
        raise ValueError(f"{where} must be a positive integer{hint}, got {value!r}")


@dataclass(frozen=True)
class RouterConfig(ConfigMixin):
    """Everything that defines a router training run (and so the deployed model).

    ``tie_rule`` and ``label_k`` are the label rule of :func:`regime_core.router.outcome_labels`
    (``label_k=None``: union wins iff it ranks the hop-2 target strictly higher than q). Ties
    are dropped by default (``config.ROUTER_TRAIN_TIE_RULE``): where q and union rank the target
    alike the decision cannot matter, so those items carry no label; the router then learns
    ``P(union better | the two differ)``, and ``p > 0.5`` is the expected-gain rule.
    ``sample_size=None`` trains on every two-hop item of ``split``.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"label_k", "sample_size"})

    dataset: str = TRAIN_DATASET
    encoder: str = config.ENCODER
    pool: str = config.POOL_MODE
    alpha: float = config.ALPHA
    k: int = config.HEADLINE_K
    seed: int = config.SEED
    sample_size: int | None = None
    split: str = config.SPLIT
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE
    label_k: int | None = None
    n_splits: int = config.CV_FOLDS
    bootstrap_resamples: int = config.BOOTSTRAP_RESAMPLES
    confidence: float = config.CONFIDENCE
    exclude_bridge: bool = config.EXCLUDE_BRIDGE
    tiny_pools: str = config.TINY_POOLS  # pools with <= k hop-2 candidates: exclude or keep
    bridge_source: str = config.BRIDGE_SOURCE  # the bridge read: gold hop 1 or retrieved top-1

    def validate(self) -> None:
        where = type(self).__name__
        check_bridge_source(self.bridge_source, where)
        if self.dataset not in (*EXPERIMENT_DATASETS, "toyworld"):
            raise ValueError(
                f"{where}.dataset is {self.dataset!r}, not one of {EXPERIMENT_DATASETS}"
            )
        if self.tie_rule not in TIE_RULES:
            raise ValueError(f"{where}.tie_rule is {self.tie_rule!r}, not one of {TIE_RULES}")
        _check_positive_int(self.label_k, f"{where}.label_k", allow_none=True)
        _check_positive_int(self.n_splits, f"{where}.n_splits")
        if self.n_splits < 2:
            raise ValueError(f"{where}.n_splits must be at least 2, got {self.n_splits}")
        if self.split not in SPLITS:
            raise ValueError(f"{where}.split is {self.split!r}, not one of {SPLITS}")
        self.experiment_config()  # validates the shared fields with the shared messages

    def experiment_config(self) -> ExperimentConfig:
        """The shared experiment config of this run (one dataset, one encoder)."""
        return ExperimentConfig(
            datasets=(self.dataset,),
            encoders=(self.encoder,),
            pool=self.pool,
            alpha=self.alpha,
            k=self.k,
            seed=self.seed,
            sample_size=self.sample_size,
            split=self.split,
            bootstrap_resamples=self.bootstrap_resamples,
            confidence=self.confidence,
            exclude_bridge=self.exclude_bridge,
            tiny_pools=self.tiny_pools,
        )

    @property
    def label_rule(self) -> str:
        return describe_label_rule(tie_rule=self.tie_rule, k=self.label_k)


# --------------------------------------------------------------------------------------------
# Retrieval geometry: ranks under q + a_i·B_rel for any per-question weights
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnionGeometry:
    """What ranking the hop-2 candidates under ``normalise(f_q(q) + a_i·f_q(B_rel_i))`` needs,
    for any weights ``a_i``: ``a = 0`` is the ``q`` arm, ``a = α`` the ``union`` arm, ``a = α·p``
    the soft router. Built once by :func:`build_geometry`; :meth:`target_ranks` is pure.

    The query vectors are combined, scored and ranked by the retrieval module's own kernels
    (:func:`~regime_core.retrieval.combine_query_vectors`,
    :func:`~regime_core.retrieval.score_candidates`,
    :func:`~regime_core.retrieval.rank_candidates`), so the ranks equal those of
    :func:`~regime_core.retrieval.retrieve_arms` (tested). In ``corpus`` mode ``candidates`` is
    None and ``excluded_rows[i]`` is the one row left out of question ``i``'s candidates (``-1``:
    none): the ranks are streamed by :func:`~regime_core.retrieval.corpus_scan.scan_corpus` in
    bounded
    memory, identical to the dense kernels' (tested).
    """

    query_ids: tuple[str, ...]
    question_vectors: np.ndarray  # (n, d)
    b_rel_vectors: np.ndarray  # (n, d)
    document_vectors: np.ndarray  # (m, d)
    candidates: np.ndarray | None  # (n, w) rows of document_vectors, -1 padding; None: corpus
    target_positions: np.ndarray  # (n,) position of the hop-2 target among the candidates
    pool: str
    excluded_rows: np.ndarray | None = None  # (n,) corpus mode: the row left out, -1 none

    @property
    def n(self) -> int:
        return len(self.query_ids)

    def target_ranks(self, weights: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """1-based rank of each question's hop-2 target with ``B_rel`` weighted ``weights[i]``
        (a scalar applies to every question)."""
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), (self.n,))
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("target_ranks: weights must be finite and >= 0")
        text_vectors = np.concatenate([self.question_vectors, self.b_rel_vectors])
        parts = [[(i, 1.0), (self.n + i, float(w[i]))] for i in range(self.n)]
        queries = combine_query_vectors(text_vectors, parts)
        if self.candidates is None:
            if self.excluded_rows is None:
                raise ValueError("UnionGeometry: give candidates or (corpus mode) excluded_rows")
            ex = self.excluded_rows
            # candidate position -> passage row: positions at or after the excluded row shift
            target_rows = np.where(
                (ex >= 0) & (self.target_positions >= ex),
                self.target_positions + 1,
                self.target_positions,
            )
            scan = scan_corpus(
                queries,
                self.document_vectors,
                excluded=ex,
                targets=target_rows,
                k=0,
                negatives=False,
            )
            return scan.target_ranks
        scores = score_candidates(queries, self.document_vectors, self.candidates)
        order = rank_candidates(scores)
        return (np.argmax(order == self.target_positions[:, None], axis=1) + 1).astype(np.int64)


def build_geometry(
    examples: Sequence[Example],
    b_rel_texts: Sequence[str],
    *,
    encoder: Encoder,
    store: Any,
    pool: str = config.POOL_MODE,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    corpus: Sequence[Any] | None = None,
) -> UnionGeometry:
    """Embed (through ``store``) the questions, the given ``B_rel`` texts and the candidate
    passages; ``corpus`` is the passage set of ``corpus`` pool mode (default: the examples'
    pools), as in :func:`regime_core.experiments.common.outcome_table`."""
    from regime_core.data import corpus_passages

    examples = list(examples)
    if len(b_rel_texts) != len(examples):
        raise ValueError(f"{len(b_rel_texts)} B_rel texts for {len(examples)} examples")
    if not examples:
        raise ValueError("build_geometry: no examples")
    passages = list(corpus) if pool == "corpus" and corpus is not None else None
    if passages is None:
        passages = corpus_passages(examples)
    pools = candidate_pools(examples, pool, exclude_bridge=exclude_bridge, passages=passages)
    row_of = {p.pid: row for row, p in enumerate(pools.passages)}
    targets = np.empty(len(examples), dtype=np.int64)
    for i, ex in enumerate(examples):
        target = row_of[ex.target_pid]
        if pools.excluded_rows is not None:  # corpus: every row but the excluded one
            excluded = int(pools.excluded_rows[i])
            if target == excluded:
                raise ValueError(f"example {ex.id!r}: its hop-2 target is not among its candidates")
            targets[i] = target - 1 if 0 <= excluded < target else target
            continue
        positions = np.flatnonzero(pools.candidates[i] == target)
        if positions.size == 0:
            raise ValueError(f"example {ex.id!r}: its hop-2 target is not among its candidates")
        targets[i] = positions[0]
    question_vectors = np.asarray(
        store.embed(encoder, [ex.question for ex in examples], "query"), dtype=np.float32
    )
    b_rel_vectors = np.asarray(store.embed(encoder, list(b_rel_texts), "query"), dtype=np.float32)
    documents = np.asarray(
        store.embed(encoder, [document_text(p) for p in pools.passages], "document"),
        dtype=np.float32,
    )
    return UnionGeometry(
        query_ids=tuple(ex.id for ex in examples),
        question_vectors=question_vectors,
        b_rel_vectors=b_rel_vectors,
        document_vectors=documents,
        candidates=None if pools.excluded_rows is not None else pools.padded(),
        target_positions=targets,
        pool=pool,
        excluded_rows=pools.excluded_rows,
    )


# --------------------------------------------------------------------------------------------
# Hop 1: the bridge the pipeline would read
# --------------------------------------------------------------------------------------------

#: What hop-1 retrieval returned at rank 1, per question (``RoutingData.table["hop1"]``).
HOP1_OUTCOMES: tuple[str, ...] = ("gold", "correct", "distractor", "target")


def hop1_top_pids(examples: Sequence[Example], *, encoder: Encoder, store: Any) -> list[str]:
    """The top-1 passage of each question's own pool under the question alone (nothing
    excluded; ties to the earlier pool position, as every ranking here)."""
    examples = list(examples)
    if not examples:
        return []
    from regime_core.data import corpus_passages

    passages = corpus_passages(examples)
    pools = candidate_pools(examples, "question", exclude_bridge=False, passages=passages)
    queries = np.asarray(
        store.embed(encoder, [ex.question for ex in examples], "query"), dtype=np.float32
    )
    documents = np.asarray(
        store.embed(encoder, [document_text(p) for p in pools.passages], "document"),
        dtype=np.float32,
    )
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
    if len(top_pids) != len(examples):
        raise ValueError(f"{len(top_pids)} hop-1 passages for {len(examples)} examples")
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


# --------------------------------------------------------------------------------------------
# Routing data: one row per question
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingData:
    """Everything routing needs about one dataset sample under one encoder and pool mode.

    ``table`` has one row per question: ``qid, dataset, native_type, parallel, regime,
    relation_source, gold_relation_sentence`` (the dataset's, -1 when it has none),
    ``b_rel_index`` (the selector's choice), ``n_sentences``, the five features, and
    ``rank_q``/``rank_union`` (1-based rank of the hop-2 target at ``alpha``).
    """

    dataset: str
    encoder: str
    pool: str
    alpha: float
    k: int
    sample: Sample
    table: pd.DataFrame
    X: np.ndarray
    geometry: UnionGeometry
    bridge_source: str = config.BRIDGE_SOURCE
    hop1_counts: Mapping[str, int] | None = None  # with bridge_source="retrieved"

    @property
    def n(self) -> int:
        return len(self.table)

    def hits(self, ranks: np.ndarray) -> np.ndarray:
        return np.asarray(ranks) <= self.k

    @property
    def hit_q(self) -> np.ndarray:
        return self.hits(self.table["rank_q"].to_numpy())

    @property
    def hit_union(self) -> np.ndarray:
        return self.hits(self.table["rank_union"].to_numpy())


def build_routing_data(
    sample: Sample,
    *,
    encoder: Encoder,
    store: Any,
    encoder_name: str | None = None,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    k: int = config.HEADLINE_K,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
    regime_rules: RegimeRules = DEFAULT_REGIME_RULES,
    bridge_source: str = config.BRIDGE_SOURCE,
) -> RoutingData:
    """Select ``B_rel`` and featurise every question of ``sample`` (no gold is read), then rank
    its hop-2 candidates under ``q`` and under ``union`` with the *selected* ``B_rel``.

    ``bridge_source="retrieved"`` first replaces each bridge by the question's hop-1 top-1
    passage (:func:`with_retrieved_bridges`; the table's ``hop1`` column says how hop 1 did)."""
    check_bridge_source(bridge_source, "build_routing_data")
    examples = list(sample.examples)
    if not examples:
        raise ValueError(f"build_routing_data: the {sample.dataset} sample is empty")
    hop1 = ["gold"] * len(examples)
    hop1_counts = None
    if bridge_source == "retrieved":
        top = hop1_top_pids(examples, encoder=encoder, store=store)
        examples, hop1, hop1_counts = with_retrieved_bridges(examples, top)
        if not examples:
            raise ValueError(
                f"build_routing_data: hop 1 returned the hop-2 passage for every "
                f"{sample.dataset} question; no bridge is left to route with"
            )
    feats = featurize(
        [ex.question for ex in examples],
        [ex.bridge.sentences for ex in examples],
        bridge_titles=[ex.bridge.title or None for ex in examples],
        rules=router_rules,
    )
    geometry = build_geometry(
        examples,
        [s.text for s in feats.selections],
        encoder=encoder,
        store=store,
        pool=pool,
        exclude_bridge=exclude_bridge,
        corpus=sample.corpus,
    )
    regimes = regime_table(examples, regime_rules)
    table = pd.DataFrame(
        {
            "qid": [ex.id for ex in examples],
            "dataset": sample.dataset,
            "native_type": [ex.native_type for ex in examples],
            "parallel": [ex.parallel for ex in examples],
            "regime": regimes["regime"].to_numpy(),
            "relation_source": [ex.relation_source for ex in examples],
            "gold_relation_sentence": [
                -1 if ex.relation_sentence is None else ex.relation_sentence for ex in examples
            ],
            "b_rel_index": [s.index for s in feats.selections],
            "n_sentences": [len(ex.bridge.sentences) for ex in examples],
            "hop1": hop1,
        }
    )
    for j, name in enumerate(FEATURE_NAMES):
        table[name] = feats.X[:, j]
    table["rank_q"] = geometry.target_ranks(0.0)
    table["rank_union"] = geometry.target_ranks(alpha)
    return RoutingData(
        dataset=sample.dataset,
        encoder=encoder_name or encoder.name,
        pool=pool,
        alpha=float(alpha),
        k=int(k),
        sample=sample,
        table=table,
        X=feats.X,
        geometry=geometry,
        bridge_source=bridge_source,
        hop1_counts=hop1_counts,
    )


def load_routing_data(
    datasets: Sequence[str],
    *,
    encoder: str = config.ENCODER,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    k: int = config.HEADLINE_K,
    seed: int = config.SEED,
    sample_size: int | None = None,
    split: str = config.SPLIT,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    tiny_pools: str = config.TINY_POOLS,
    bridge_source: str = config.BRIDGE_SOURCE,
    work: Path | str | None = None,
    examples: Mapping[str, Sequence[Example]] | None = None,
    encoder_factory: EncoderFactory | None = None,
    store: Any | None = None,
) -> dict[str, RoutingData]:
    """Sample each dataset (seeded, :func:`~regime_core.experiments.common.load_samples`) and
    build its :class:`RoutingData`. ``examples``/``encoder_factory``/``store`` replace the
    prepared files, the real encoders and the on-disk store (tests)."""
    cfg = ExperimentConfig(
        datasets=tuple(datasets),
        encoders=(encoder,),
        pool=pool,
        alpha=alpha,
        k=k,
        seed=seed,
        sample_size=sample_size,
        split=split,
        exclude_bridge=exclude_bridge,
        tiny_pools=tiny_pools,
    )
    samples = load_samples(cfg, work=work, examples=examples)
    factory = encoder_factory or default_encoder_factory
    store = store_or_default(store, work)
    out = {}
    for dataset, sample in samples.items():
        enc = factory(encoder, [document_text(p) for p in sample.corpus])
        out[dataset] = build_routing_data(
            sample,
            encoder=enc,
            store=store,
            encoder_name=encoder,
            pool=pool,
            alpha=alpha,
            k=k,
            exclude_bridge=exclude_bridge,
            bridge_source=bridge_source,
        )
    return out


# --------------------------------------------------------------------------------------------
# Evaluating a routing policy
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingOutcome:
    """hit@k of always-q, always-union, the router and the oracle router on one dataset, with
    paired comparisons (bootstrap CI of the mean difference, exact McNemar p)."""

    dataset: str
    k: int
    hits: Mapping[str, np.ndarray]  # policy -> (n,) bool
    probability: np.ndarray  # p(union) per question (out of fold when cross-fitted)
    routed_union: np.ndarray  # (n,) bool: the router said union
    comparisons: Mapping[str, PairedComparison]

    @property
    def n(self) -> int:
        return int(self.routed_union.size)

    def comparison(self, name: str) -> PairedComparison:
        return self.comparisons[name]

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {"n": self.n, "share_union": float(self.routed_union.mean())}
        for policy in POLICIES:
            numbers[f"hit@{self.k}_{policy}"] = float(np.mean(self.hits[policy]))
        for name, c in self.comparisons.items():
            numbers[name] = comparison_numbers(c)
        return numbers


def comparison_numbers(c: PairedComparison) -> dict[str, Any]:
    """The fields of a paired comparison that records keep (differences as fractions)."""
    return {
        "diff": c.diff,
        "ci_lo": c.ci_lo,
        "ci_hi": c.ci_hi,
        "p_value": c.p_value,
        "n_a_better": c.n_a_better,
        "n_b_better": c.n_b_better,
    }


def evaluate_routing(
    hit_q: Any,
    hit_union: Any,
    routed_union: Any,
    probability: Any,
    *,
    dataset: str,
    k: int = config.HEADLINE_K,
    resamples: int = config.BOOTSTRAP_RESAMPLES,
    confidence: float = config.CONFIDENCE,
    seed: int = config.SEED,
) -> RoutingOutcome:
    """Score a routing decision per question against the fixed policies; pure.

    ``hit_routed = where(routed_union, hit_union, hit_q)``, ``hit_oracle = hit_q | hit_union``.
    """
    q = np.asarray(hit_q, dtype=bool)
    u = np.asarray(hit_union, dtype=bool)
    routed = np.asarray(routed_union, dtype=bool)
    p = np.asarray(probability, dtype=np.float64)
    if not (q.shape == u.shape == routed.shape == p.shape) or q.ndim != 1:
        raise ValueError(
            f"evaluate_routing: hit_q {q.shape}, hit_union {u.shape}, routed_union "
            f"{routed.shape} and probability {p.shape} must be equal 1-d shapes"
        )
    if q.size == 0:
        raise ValueError(f"evaluate_routing: no questions for {dataset}")
    hits = {"q": q, "union": u, "routed": np.where(routed, u, q), "oracle": q | u}
    comparisons = {
        name: compare_paired(
            hits[a].astype(float),
            hits[b].astype(float),
            test="mcnemar",
            resamples=resamples,
            confidence=confidence,
            seed=seed,
            label_a=a,
            label_b=b,
        )
        for name, (a, b) in COMPARISONS.items()
    }
    return RoutingOutcome(dataset, int(k), hits, p, routed, comparisons)


def subset_outcome(
    outcome: RoutingOutcome,
    mask: Any,
    *,
    resamples: int = config.BOOTSTRAP_RESAMPLES,
    confidence: float = config.CONFIDENCE,
    seed: int = config.SEED,
) -> RoutingOutcome | None:
    """The same decisions scored on the questions ``mask`` keeps (None when it keeps none)."""
    keep = np.asarray(mask, dtype=bool)
    if keep.shape != outcome.routed_union.shape:
        raise ValueError(f"subset_outcome: mask {keep.shape} for {outcome.n} questions")
    if not keep.any():
        return None
    return evaluate_routing(
        outcome.hits["q"][keep],
        outcome.hits["union"][keep],
        outcome.routed_union[keep],
        outcome.probability[keep],
        dataset=outcome.dataset,
        k=outcome.k,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


def hop1_numbers(
    data: RoutingData,
    outcome: RoutingOutcome,
    *,
    resamples: int = config.BOOTSTRAP_RESAMPLES,
    confidence: float = config.CONFIDENCE,
    seed: int = config.SEED,
) -> dict[str, Any]:
    """How hop 1 did (``bridge_source="retrieved"``) and the outcome on its correct subset."""
    out: dict[str, Any] = {"bridge_source": data.bridge_source}
    if data.bridge_source != "retrieved" or data.hop1_counts is None:
        return out
    out["hop1"] = {k: int(v) for k, v in data.hop1_counts.items()}
    correct = subset_outcome(
        outcome,
        data.table["hop1"].to_numpy() == "correct",
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )
    if correct is not None:
        out["hop1_correct_outcome"] = correct.to_numbers()
    return out


def breakdown(data: RoutingData, outcome: RoutingOutcome, by: str) -> pd.DataFrame:
    """Per value of a table column (``native_type``, ``regime``, ``parallel``): n, share routed
    to union and hit@k of each policy."""
    frame = pd.DataFrame({by: data.table[by].astype(str).to_numpy()})
    frame["routed_union"] = outcome.routed_union
    for policy in POLICIES:
        frame[policy] = outcome.hits[policy].astype(float)
    grouped = frame.groupby(by, sort=True)
    out = grouped.agg(
        n=("routed_union", "size"),
        share_union=("routed_union", "mean"),
        **{f"hit_{p}": (p, "mean") for p in POLICIES},
    )
    return out.reset_index()


# --------------------------------------------------------------------------------------------
# Labels, cross-fitting, the deployment fit
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FittedRouting:
    """Labels from retrieval outcomes, out-of-fold probabilities and the deployment router."""

    labels: np.ndarray  # 0 q, 1 union, DROPPED (-1) for ties dropped by tie_rule="drop"
    n_ties: int
    probability: np.ndarray  # out of fold for labelled items; deployment model for dropped ones
    router: RegimeRouter  # fitted on every labelled item
    columns: tuple[int, ...]  # the feature columns used


def fit_routing(
    X: np.ndarray,
    rank_q: np.ndarray,
    rank_union: np.ndarray,
    *,
    alpha: float = config.ALPHA,
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE,
    label_k: int | None = None,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
    columns: Sequence[int] | None = None,
) -> FittedRouting:
    """Label each question from its ranks (:func:`~regime_core.router.outcome_labels`), score it
    out of fold (:func:`~regime_core.router.cross_fit_predict`) and refit on every labelled item.

    With ``tie_rule="drop"`` the tied items carry no label and never enter a fit; they are
    scored by the model fitted on all labelled items, which never saw them, so their
    probability is out of sample too. Raises ValueError when the labels hold one class only.
    """
    labels = outcome_labels(rank_q, rank_union, tie_rule=tie_rule, k=label_k)
    ties = tie_mask(rank_q, rank_union, k=label_k)
    cols = tuple(range(X.shape[1])) if columns is None else tuple(int(c) for c in columns)
    Xc = np.asarray(X, dtype=np.float64)[:, list(cols)]
    kept = labels != DROPPED
    if np.unique(labels[kept]).size < 2:
        raise ValueError(
            f"the outcome labels hold one class only ({np.unique(labels[kept]).tolist()}) under "
            f"rule {describe_label_rule(tie_rule=tie_rule, k=label_k)!r}: q and union never "
            "disagree the other way on these questions, so there is nothing to learn"
        )
    probability = np.empty(len(labels), dtype=np.float64)
    probability[kept] = cross_fit_predict(Xc[kept], labels[kept], n_splits=n_splits, seed=seed)
    router = RegimeRouter(alpha=alpha).fit(Xc[kept], labels[kept])
    if (~kept).any():
        probability[~kept] = router.predict_proba(Xc[~kept])[:, 1]
    return FittedRouting(labels, int(ties.sum()), probability, router, cols)


def threshold_decisions(probability: np.ndarray, router: RegimeRouter) -> np.ndarray:
    """Out-of-fold decisions: union where ``p(union) > threshold`` (the router's rule)."""
    return np.asarray(probability) > router.threshold


# --------------------------------------------------------------------------------------------
# Selector quality
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectorQuality:
    """How often the selected ``B_rel`` is the dataset's gold relation sentence, against the
    first-sentence baseline and chance, and what the choice costs in union hit@k.

    ``agreement`` rows: dataset × relation_source (plus ``all``) with ``n`` (items with a gold
    sentence), ``selected``, ``first_sentence`` and ``chance`` (mean of 1/#sentences).
    ``retrieval`` rows: per dataset, on the items whose gold ``B_rel`` exists
    (:func:`regime_core.data.regimes.gold_b_rel`), union hit@k with the selected vs the gold
    sentence, as a paired comparison.
    """

    agreement: pd.DataFrame
    retrieval: Mapping[str, PairedComparison]
    n_without_gold: Mapping[str, int]

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {}
        for row in self.agreement.itertuples(index=False):
            cell = numbers.setdefault(str(row.dataset), {}).setdefault(str(row.relation_source), {})
            cell.update(
                n=int(row.n),
                selected=float(row.selected),
                first_sentence=float(row.first_sentence),
                chance=float(row.chance),
            )
        for dataset, c in self.retrieval.items():
            entry = numbers.setdefault(dataset, {})
            entry["retrieval"] = {
                "n": c.n,
                "hit_selected": c.mean_a,
                "hit_gold": c.mean_b,
                **comparison_numbers(c),
            }
            entry["n_without_gold"] = int(self.n_without_gold[dataset])
        return numbers


def agreement_table(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Selector agreement per dataset and relation source (and ``all``); pure."""
    rows = []
    for table in tables:
        gold = table[table["gold_relation_sentence"] >= 0]
        if gold.empty:
            continue
        groups = [("all", gold), *((str(s), g) for s, g in gold.groupby("relation_source"))]
        for source, part in groups:
            rows.append(
                {
                    "dataset": str(part["dataset"].iloc[0]),
                    "relation_source": source,
                    "n": len(part),
                    "selected": float(
                        (part["b_rel_index"] == part["gold_relation_sentence"]).mean()
                    ),
                    "first_sentence": float((part["gold_relation_sentence"] == 0).mean()),
                    "chance": float((1.0 / part["n_sentences"]).mean()),
                }
            )
    return pd.DataFrame(rows, columns=["dataset", "relation_source", "n", "selected",
                                       "first_sentence", "chance"])  # fmt: skip


def selector_quality(
    data: Mapping[str, RoutingData],
    *,
    encoder_factory: EncoderFactory | None = None,
    store: Any | None = None,
    work: Path | str | None = None,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    regime_rules: RegimeRules = DEFAULT_REGIME_RULES,
    resamples: int = config.BOOTSTRAP_RESAMPLES,
    confidence: float = config.CONFIDENCE,
    seed: int = config.SEED,
) -> SelectorQuality:
    """Agreement of the selector with the gold relation sentence, and union retrieval with the
    selected vs the gold ``B_rel`` (same encoder, pool and α as ``data``)."""
    from regime_core.data.regimes import gold_b_rel

    factory = encoder_factory or default_encoder_factory
    store = store_or_default(store, work)
    retrieval: dict[str, PairedComparison] = {}
    without: dict[str, int] = {}
    for dataset, d in data.items():
        examples = list(d.sample.examples)
        golds = [gold_b_rel(ex, regime_rules) for ex in examples]
        keep = [i for i, g in enumerate(golds) if g.sentence is not None]
        without[dataset] = len(examples) - len(keep)
        if not keep:
            continue
        enc = factory(d.encoder, [document_text(p) for p in d.sample.corpus])
        geometry = build_geometry(
            [examples[i] for i in keep],
            [str(golds[i].sentence) for i in keep],
            encoder=enc,
            store=store,
            pool=d.pool,
            exclude_bridge=exclude_bridge,
            corpus=d.sample.corpus,
        )
        hit_gold = geometry.target_ranks(d.alpha) <= d.k
        hit_selected = d.hit_union[keep]
        retrieval[dataset] = compare_paired(
            hit_selected.astype(float),
            hit_gold.astype(float),
            test="mcnemar",
            resamples=resamples,
            confidence=confidence,
            seed=seed,
            label_a="union_selected",
            label_b="union_gold",
        )
    return SelectorQuality(agreement_table([d.table for d in data.values()]), retrieval, without)


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouterTrainResult:
    """A cross-fitted router on the training dataset and its deployment refit."""

    config: RouterConfig
    data: RoutingData
    fitted: FittedRouting
    outcome: RoutingOutcome
    auc: float  # out-of-fold p(union) against the labels (labelled items)

    @property
    def router(self) -> RegimeRouter:
        return self.fitted.router

    @property
    def label_counts(self) -> dict[str, int]:
        labels = self.fitted.labels
        return {
            "q": int(np.sum(labels == 0)),
            "union": int(np.sum(labels == 1)),
            "dropped": int(np.sum(labels == DROPPED)),
        }

    def coefficients(self) -> dict[str, float]:
        """The deployment router's standardised coefficients by feature name."""
        names = [FEATURE_NAMES[c] for c in self.fitted.columns]
        return dict(zip(names, self.router.coef_[0].tolist(), strict=True))

    def to_numbers(self) -> dict[str, Any]:
        table = self.data.table
        by_type = breakdown(self.data, self.outcome, "native_type")
        by_regime = breakdown(self.data, self.outcome, "regime")
        return {
            "dataset": self.data.dataset,
            "n": self.data.n,
            "n_available": self.data.sample.n_available,
            "n_tiny_pool": self.data.sample.n_tiny_pool,
            "n_parallel": int(table["parallel"].sum()),
            "labels": {**self.label_counts, "ties": self.fitted.n_ties},
            "label_rule": self.config.label_rule,
            "auc_out_of_fold": self.auc,
            "outcome": self.outcome.to_numbers(),
            "by_type": _frame_numbers(by_type, "native_type"),
            "by_regime": _frame_numbers(by_regime, "regime"),
            "coefficients": self.coefficients(),
            "intercept": float(self.router.intercept_[0]),
            **hop1_numbers(
                self.data,
                self.outcome,
                resamples=self.config.bootstrap_resamples,
                confidence=self.config.confidence,
                seed=self.config.seed,
            ),
        }


def _frame_numbers(frame: pd.DataFrame, key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in frame.to_dict(orient="records"):
        name = str(row.pop(key)).replace(".", "_")
        out[name] = {k: (int(v) if k == "n" else float(v)) for k, v in row.items()}
    return out


def _auc(labels: np.ndarray, probability: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    kept = labels != DROPPED
    if np.unique(labels[kept]).size < 2:
        return float("nan")
    return float(roc_auc_score(labels[kept], probability[kept]))


def train_on_data(data: RoutingData, cfg: RouterConfig) -> RouterTrainResult:
    """Labels, cross-fitting, evaluation and the deployment refit on prepared routing data;
    pure given ``data``."""
    table = data.table
    fitted = fit_routing(
        data.X,
        table["rank_q"].to_numpy(),
        table["rank_union"].to_numpy(),
        alpha=cfg.alpha,
        tie_rule=cfg.tie_rule,
        label_k=cfg.label_k,
        n_splits=cfg.n_splits,
        seed=cfg.seed,
    )
    outcome = evaluate_routing(
        data.hit_q,
        data.hit_union,
        threshold_decisions(fitted.probability, fitted.router),
        fitted.probability,
        dataset=data.dataset,
        k=cfg.k,
        resamples=cfg.bootstrap_resamples,
        confidence=cfg.confidence,
        seed=cfg.seed,
    )
    return RouterTrainResult(cfg, data, fitted, outcome, _auc(fitted.labels, fitted.probability))


def train_router(
    cfg: RouterConfig | None = None,
    *,
    work: Path | str | None = None,
    examples: Mapping[str, Sequence[Example]] | None = None,
    encoder_factory: EncoderFactory | None = None,
    store: Any | None = None,
) -> RouterTrainResult:
    """Train the router on ``cfg.dataset``: retrieval outcomes with the selected ``B_rel``,
    outcome labels, 5-fold cross-fitted probabilities, routed hit@k against always-q,
    always-union and the oracle, and the deployment refit on every labelled item."""
    cfg = cfg or RouterConfig()
    data = load_routing_data(
        (cfg.dataset,),
        encoder=cfg.encoder,
        pool=cfg.pool,
        alpha=cfg.alpha,
        k=cfg.k,
        seed=cfg.seed,
        sample_size=cfg.sample_size,
        split=cfg.split,
        exclude_bridge=cfg.exclude_bridge,
        tiny_pools=cfg.tiny_pools,
        bridge_source=cfg.bridge_source,
        work=work,
        examples=examples,
        encoder_factory=encoder_factory,
        store=store,
    )[cfg.dataset]
    return train_on_data(data, cfg)


def save_trained_router(result: RouterTrainResult, path: str | os.PathLike[str]) -> Path:
    """Write the deployment router with what it was trained on (config, sample hash, labels)."""
    cfg = result.config
    return save_router(
        result.router,
        path,
        dataset=cfg.dataset,
        label_rule=cfg.label_rule,
        extra={
            "config": cfg.to_dict(),
            "config_hash": cfg.config_hash(),
            "split": cfg.split,
            "bridge_source": cfg.bridge_source,
            "ids_hash": result.data.sample.ids_hash,
            "n_available": result.data.sample.n_available,
            "n_tiny_pool": result.data.sample.n_tiny_pool,
            "labels": {**result.label_counts, "ties": result.fitted.n_ties},
            "parallel_items_included": int(result.data.table["parallel"].sum()),
        },
    )


def prepare_if_needed(
    datasets: Sequence[str],
    *,
    work: Path | str | None = None,
    data_dir: Path | str | None = None,
) -> list[str]:
    """Run ``regime data prepare`` for the datasets with no prepared file; returns those."""
    from regime_core.data import prepare

    missing = [
        d
        for d in datasets
        if not (paths.prepared_dir(None if work is None else Path(work)) / f"{d}.jsonl").is_file()
    ]
    if missing:
        prepare(
            paths.data_dir(data_dir),
            paths.prepared_dir(None if work is None else Path(work)),
            tuple(missing),
        )
    return missing
