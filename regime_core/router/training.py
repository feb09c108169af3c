"""Training the router on retrieval outcomes: routing data, labels, cross-fitting, selector quality.

The flow, each step a function of its inputs (the embedding store is the only side effect)::

    sample ──build_routing_data──▶ RoutingData (features, selected B_rel, rank of the hop-2
                                    target under q and under union, per question)
                 │
                 ├─ fit_routing: outcome_labels ─▶ labels ─ cross_fit_predict ─▶ out-of-fold
                 │               p(union), and the deployment router fitted on every label
                 │
                 └─ evaluate_routing (regime_core.router.evaluation) ─▶ RoutingOutcome

Nothing gold is read to route: ``B_rel`` is the sentence :func:`~regime_core.router.select_b_rel`
chooses, never the dataset's relation sentence; the gold sentence is read only to measure the
selector (:func:`agreement_table`, :func:`gold_b_rel_retrieval`) and, as an oracle, by the
selector knob's ``gold`` value: :func:`with_b_rel` swaps any selector's choice into the routing
data (:mod:`regime_core.router.selector_choices` makes the choices). The samples come from the
experiments (:class:`regime_core.experiments.sampling.Sample`); this module only needs what
:class:`SampleLike` names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.regimes import gold_b_rel, regime_table
from regime_core.encoders.base import Encoder
from regime_core.retrieval import EmbeddingSource, RetrievalSettings
from regime_core.retrieval.geometry import (
    UnionGeometry,
    build_geometry,
    hop1_top_pids,
    with_retrieved_bridges,
)
from regime_core.router.estimator import RegimeRouter, cross_fit_predict, one_blas_thread
from regime_core.router.evaluation import (
    DEFAULT_BOOTSTRAP,
    POLICIES,
    Bootstrap,
    RoutingOutcome,
    comparison_numbers,
    evaluate_routing,
    paired_hits,
    subset_outcome,
)
from regime_core.router.features import FEATURE_NAMES, extract_features, featurize
from regime_core.router.labels import EXCLUDED, describe_label_rule, outcome_labels, tie_mask
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.schema import Example, Passage
from regime_core.stats import PairedComparison


class SampleLike(Protocol):
    """What routing reads of a dataset sample (:class:`regime_core.experiments.sampling.Sample`)."""

    @property
    def dataset(self) -> str: ...
    @property
    def examples(self) -> Sequence[Example]: ...
    @property
    def corpus(self) -> Sequence[Passage]: ...
    @property
    def n(self) -> int: ...
    @property
    def n_available(self) -> int: ...
    @property
    def n_tiny_pool(self) -> int: ...
    @property
    def ids_hash(self) -> str: ...


# --------------------------------------------------------------------------------------------
# Routing data: one row per question
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingData:
    """Everything routing needs about one dataset sample under one encoder and settings.

    ``table`` has one row per question: ``qid, dataset, native_type, parallel, regime,
    relation_source, gold_relation_sentence`` (the dataset's, -1 when it has none),
    ``b_rel_index`` (the selector's choice), ``n_sentences``, ``hop1``, the five features, and
    ``rank_q``/``rank_union`` (1-based rank of the hop-2 target at ``settings.alpha``). It also
    carries how it was built (the retrieval ``settings``, the ``bridge_source``), so nothing
    downstream has to be told again.
    """

    dataset: str
    encoder: str
    settings: RetrievalSettings
    sample: SampleLike
    table: pd.DataFrame
    X: np.ndarray
    geometry: UnionGeometry
    bridge_source: str
    #: the examples routed, in table order (with ``bridge_source="retrieved"``, each with the
    #: passage hop 1 returned as its bridge)
    examples: tuple[Example, ...]
    hop1_counts: Mapping[str, int] | None = None  # with bridge_source="retrieved"
    #: the cross-fitting fold of each question when its ``B_rel`` was chosen by a selector
    #: cross-fitted on these questions (the router then uses the same folds); None otherwise
    folds: np.ndarray | None = None
    #: the selector that chose ``B_rel`` (:data:`regime_core.config.SELECTORS`)
    selector: str = config.SELECTOR
    #: the bridge weight of each question's union query when the α rule
    #: (:data:`regime_core.config.ALPHA_RULES`) is not ``fixed``; None: ``settings.alpha`` for all
    weights: np.ndarray | None = None
    #: the α rule that set ``rank_union`` (``fixed``: ``settings.alpha``; else ``weights``)
    alpha_rule: str = config.ALPHA_RULE

    @property
    def n(self) -> int:
        return len(self.table)

    @property
    def union_weights(self) -> np.ndarray:
        """Each question's bridge weight α under the union query (``weights``, else
        ``settings.alpha`` for every question)."""
        if self.weights is None:
            return np.full(self.n, float(self.settings.alpha))
        return np.asarray(self.weights, dtype=np.float64)

    def hits(self, ranks: np.ndarray) -> np.ndarray:
        return np.asarray(ranks) <= self.settings.k

    @property
    def hit_q(self) -> np.ndarray:
        return self.hits(self.table["rank_q"].to_numpy())

    @property
    def hit_union(self) -> np.ndarray:
        return self.hits(self.table["rank_union"].to_numpy())


def build_routing_data(
    sample: SampleLike,
    settings: RetrievalSettings,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    bridge_source: str,
    encoder_name: str | None = None,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> RoutingData:
    """Select ``B_rel`` and featurise every question of ``sample`` (no gold is read), then rank
    its hop-2 candidates under ``q`` and under ``union`` (at ``settings.alpha``) with the
    *selected* ``B_rel``.

    ``bridge_source="retrieved"`` first replaces each bridge by the question's hop-1 top-1
    passage (:func:`~regime_core.retrieval.geometry.with_retrieved_bridges`; the table's ``hop1``
    column says how hop 1 did)."""
    examples = list(sample.examples)  # never empty: sample_examples refuses that
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
        settings,
        encoder=encoder,
        store=store,
        corpus=sample.corpus,
    )
    regimes = regime_table(examples, settings.regime_rules)
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
    table["rank_union"] = geometry.target_ranks(settings.alpha)
    return RoutingData(
        dataset=sample.dataset,
        encoder=encoder_name or encoder.name,
        settings=settings,
        sample=sample,
        table=table,
        X=feats.X,
        geometry=geometry,
        bridge_source=bridge_source,
        hop1_counts=hop1_counts,
        examples=tuple(examples),
    )


def with_b_rel(
    data: RoutingData,
    chosen: Any,
    b_rel_vectors: Any,
    *,
    selector: str,
    folds: np.ndarray | None = None,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> RoutingData:
    """``data`` with another ``B_rel``: sentence ``chosen[i]`` of question ``i``'s bridge, whose
    query-mode vector is row ``i`` of ``b_rel_vectors``. The router's features are recomputed
    from the new sentences and the union ranks re-scored on the same geometry (only the
    ``B_rel`` vectors change); ``rank_q`` is untouched. ``selector`` names what chose them,
    ``folds`` the cross-fitting folds of a selector fitted on these questions; pure. ``chosen``
    comes from :func:`~regime_core.router.selector_choices.choose` (each index one of its
    bridge's sentences), its vectors from
    :meth:`~regime_core.router.selector_choices.SelectorData.vectors_at`."""
    examples = data.examples
    chosen = np.asarray(chosen, dtype=np.int64)
    bridges = [ex.bridge.sentences for ex in examples]
    X = extract_features(
        [ex.question for ex in examples],
        bridges,
        [b[int(c)] for b, c in zip(bridges, chosen, strict=True)],
        bridge_titles=[ex.bridge.title or None for ex in examples],
        rules=router_rules,
    )
    geometry = dataclasses.replace(data.geometry, b_rel_vectors=b_rel_vectors)
    table = data.table.copy()
    table["b_rel_index"] = chosen
    for j, name in enumerate(FEATURE_NAMES):
        table[name] = X[:, j]
    table["rank_union"] = geometry.target_ranks(data.union_weights)
    return dataclasses.replace(
        data, table=table, X=X, geometry=geometry, folds=folds, selector=selector
    )


def with_weights(data: RoutingData, weights: Any, *, alpha_rule: str) -> RoutingData:
    """``data`` with the union query's bridge weighted ``weights`` (one per question, or one for
    all) by the α rule ``alpha_rule``: only ``rank_union`` is re-scored, on the same geometry;
    the features, ``rank_q``, the folds and everything else are untouched; pure."""
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), (data.n,)).copy()
    table = data.table.copy()
    table["rank_union"] = data.geometry.target_ranks(w)
    return dataclasses.replace(data, table=table, weights=w, alpha_rule=alpha_rule)


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


def hop1_numbers(
    data: RoutingData, outcome: RoutingOutcome, *, bootstrap: Bootstrap = DEFAULT_BOOTSTRAP
) -> dict[str, Any]:
    """How hop 1 did (``bridge_source="retrieved"``) and the outcome on its correct subset."""
    out: dict[str, Any] = {"bridge_source": data.bridge_source}
    if data.bridge_source != "retrieved" or data.hop1_counts is None:
        return out
    out["hop1"] = {k: int(v) for k, v in data.hop1_counts.items()}
    correct = subset_outcome(
        outcome, data.table["hop1"].to_numpy() == "correct", bootstrap=bootstrap
    )
    if correct is not None:
        out["hop1_correct_outcome"] = correct.to_numbers()
    return out


# --------------------------------------------------------------------------------------------
# Labels, cross-fitting, the deployment fit, a frozen router applied
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FittedRouting:
    """Labels from retrieval outcomes, out-of-fold probabilities and the deployment router."""

    labels: np.ndarray  # 0 q, 1 union, EXCLUDED (-1) for ties excluded by tie_rule="exclude"
    n_ties: int
    probability: np.ndarray  # out of fold for labelled items; deployment model for excluded ones
    router: RegimeRouter  # fitted on every labelled item
    columns: tuple[int, ...]  # the feature columns used


def fit_routing(
    X: np.ndarray,
    rank_q: np.ndarray,
    rank_union: np.ndarray,
    *,
    alpha: float,
    tie_rule: str,
    label_k: int | None,
    n_splits: int,
    seed: int,
    columns: Sequence[int] | None = None,
    folds: Any = None,
) -> FittedRouting:
    """Label each question from its ranks (:func:`~regime_core.router.outcome_labels`), score it
    out of fold (:func:`~regime_core.router.cross_fit_predict`) and refit on every labelled item.

    With ``tie_rule="exclude"`` the tied items carry no label and never enter a fit; they are
    scored by the model fitted on all labelled items, which never saw them, so their
    probability is out of sample too. ``folds`` (one per question; None: stratified folds of the
    labels) fixes the labelled items' folds, as :attr:`RoutingData.folds` gives them. Raises
    ValueError when the labels hold one class only.
    """
    labels = outcome_labels(rank_q, rank_union, tie_rule=tie_rule, k=label_k)
    ties = tie_mask(rank_q, rank_union, k=label_k)
    cols = tuple(range(X.shape[1])) if columns is None else tuple(int(c) for c in columns)
    Xc = np.asarray(X, dtype=np.float64)[:, list(cols)]
    kept = labels != EXCLUDED
    if np.unique(labels[kept]).size < 2:
        raise ValueError(
            f"the outcome labels hold one class only ({np.unique(labels[kept]).tolist()}) under "
            f"rule {describe_label_rule(tie_rule=tie_rule, k=label_k)!r}: q and union never "
            "disagree the other way on these questions, so there is nothing to learn"
        )
    probability = np.empty(len(labels), dtype=np.float64)
    given = None if folds is None else np.asarray(folds)[kept]
    with one_blas_thread():  # six tiny fits: BLAS threads cost more than they save
        probability[kept] = cross_fit_predict(
            Xc[kept], labels[kept], n_splits=n_splits, seed=seed, folds=given
        )
        router = RegimeRouter(alpha=alpha).fit(Xc[kept], labels[kept])
    if (~kept).any():
        probability[~kept] = router.predict_proba(Xc[~kept])[:, 1]
    return FittedRouting(labels, int(ties.sum()), probability, router, cols)


def threshold_decisions(probability: np.ndarray, router: RegimeRouter) -> np.ndarray:
    """Out-of-fold decisions: union where ``p(union) > threshold`` (the router's rule)."""
    return np.asarray(probability) > router.threshold


def out_of_fold_auc(labels: np.ndarray, probability: np.ndarray) -> float:
    """ROC AUC of ``probability`` against the labelled items (NaN with one class)."""
    from sklearn.metrics import roc_auc_score

    kept = labels != EXCLUDED
    if np.unique(labels[kept]).size < 2:
        return float("nan")
    return float(roc_auc_score(labels[kept], probability[kept]))


def apply_router(
    router: RegimeRouter, data: RoutingData, *, bootstrap: Bootstrap = DEFAULT_BOOTSTRAP
) -> RoutingOutcome:
    """A frozen router's decisions on ``data`` (features already computed), scored; pure."""
    return evaluate_routing(
        data.hit_q,
        data.hit_union,
        router.predict_action(data.X) == "union",
        router.predict_proba(data.X)[:, 1],
        dataset=data.dataset,
        k=data.settings.k,
        bootstrap=bootstrap,
    )


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
    return pd.DataFrame(
        rows, columns=["dataset", "relation_source", "n", "selected", "first_sentence", "chance"]
    )


def gold_b_rel_retrieval(
    data: RoutingData,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> tuple[PairedComparison | None, int]:
    """Union hit@k with the selected vs the gold ``B_rel`` (same encoder and settings as
    ``data``) on the questions that have a gold one, and how many have none (then no
    comparison: None)."""
    examples = list(data.sample.examples)
    golds = [gold_b_rel(ex, data.settings.regime_rules) for ex in examples]
    keep = [i for i, g in enumerate(golds) if g.sentence is not None]
    if not keep:
        return None, len(examples)
    geometry = build_geometry(
        [examples[i] for i in keep],
        [str(golds[i].sentence) for i in keep],
        data.settings,
        encoder=encoder,
        store=store,
        corpus=data.sample.corpus,
    )
    hit_gold = geometry.target_ranks(data.union_weights[keep]) <= data.settings.k
    comparison = paired_hits(
        data.hit_union[keep], hit_gold, ("union_selected", "union_gold"), bootstrap=bootstrap
    )
    return comparison, len(examples) - len(keep)
