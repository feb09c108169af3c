"""The ``B_rel`` selectors: what each one chooses on the routing data, and what it buys.

Selectors (:data:`SELECTORS`, the values of the selector knob, ``config.SELECTORS``;
:data:`MEASURED` adds every learned variant of
:data:`~regime_core.router.learned_selector.SELECTOR_VARIANTS`):

- ``rule``: :func:`~regime_core.router.select_b_rel`, the default;
- ``learned``: :class:`~regime_core.router.learned_selector.LearnedSelector`, cross-fitted on the
  training dataset (the router's folds, :func:`selection_folds`) and fitted on all of it and
  applied unchanged elsewhere;
- ``gold``: the dataset's gold ``B_rel`` (:func:`~regime_core.data.regimes.gold_b_rel`: the
  relation sentence, else the first sentence naming the hop-2 entity), the rule's choice where
  there is none (counted): an oracle, it reads gold;
- ``first``: always the bridge's first sentence.

Everything starts from the router's own routing data under the rule
(:class:`~regime_core.router.training.RoutingData`): :func:`selector_data` adds the per-sentence
features and vectors of the bridges the router reads (the one side effect here, the embedding
store), :func:`choose` makes every selector's choice, and
:func:`~regime_core.router.training.with_b_rel` turns a choice into the routing data the router
is trained on and applied to. Three levels are measured, each a pure kernel over per-item arrays:

1. :func:`selector_agreement`: per selector and source of the gold sentence
   (``Example.relation_source``; and ``all``), the share of items whose choice is the gold
   relation sentence (``Example.relation_sentence``; items without one left out and counted),
   beside chance (the mean of 1/#sentences); :func:`agreement_comparisons` pairs each selector
   with the rule;
2. :func:`union_comparisons`: union hit@k with each selector's ``B_rel`` against union hit@k
   with the gold ``B_rel``, on the items that have one, paired per question (exact McNemar);
3. :func:`routed_comparisons`: the router chapter's numbers with each selector's ``B_rel``
   (routed − q, routed − always-union, oracle − routed) against the same with the gold ``B_rel``,
   paired per question.

:class:`SelectionStudy` holds them all and writes the record's ``selection`` node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules, gold_b_rel
from regime_core.encoders.base import Encoder
from regime_core.retrieval import EmbeddingSource
from regime_core.retrieval.vectors import Vectors, checked_vectors, embed_vectors
from regime_core.router.evaluation import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    RoutingOutcome,
    comparison_numbers,
    paired_hits,
)
from regime_core.router.learned_selector import (
    SELECTOR_VARIANTS,
    LearnedSelector,
    cross_fit_select,
    fit_selector,
    selector_folds,
    trainable,
)
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector_features import SentenceRows, sentence_features
from regime_core.router.training import RoutingData, with_b_rel
from regime_core.stats import PairedComparison, compare_paired

#: The values of the selector knob.
SELECTORS: tuple[str, ...] = config.SELECTORS
#: Every selector measured at the first two levels: the knob's values and every learned variant.
MEASURED: tuple[str, ...] = ("rule", "first", "gold", *SELECTOR_VARIANTS)
AGREEMENT_COLUMNS: tuple[str, ...] = (
    "dataset", "selector", "relation_source", "n", "agreement", "chance",
)  # fmt: skip
#: The routed comparisons of level 3, each against the same with the gold ``B_rel``, and the
#: paired test of each: routed − q and oracle − routed are binary per question (McNemar, exact
#: interval); routed − always-union takes -1, 0 or 1 per question (exact sign test, percentile
#: bootstrap interval).
ROUTED_COMPARISONS: dict[str, str] = {
    "routed_vs_q": "mcnemar",
    "routed_vs_union": "sign",
    "oracle_vs_routed": "mcnemar",
}
#: Where a question's bridge is the gold hop-1 passage (its gold sentences apply to it).
_GOLD_BRIDGE: tuple[str, ...] = ("gold", "correct")


def check_selector(value: Any, where: str) -> str:
    """Raise ValueError naming ``where`` unless ``value`` is one of :data:`SELECTORS`."""
    if value not in SELECTORS:
        raise ValueError(f"{where}.selector is {value!r}, not one of {SELECTORS}")
    return str(value)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


def selector_agreement(
    dataset: str,
    choices: Mapping[str, Any],
    gold: Any,
    sizes: Any,
    sources: Sequence[str],
) -> pd.DataFrame:
    """Per selector and source of the gold sentence (``all`` first, then each source, sorted):
    ``n`` (items with a gold sentence), ``agreement`` (share selected = gold) and ``chance``
    (mean of 1/#sentences); pure. ``gold[i] = -1``: item ``i`` has no gold sentence and is left
    out. ``choices``: selector name -> the selected index per item."""
    gold = np.asarray(gold, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    source = np.asarray(list(sources), dtype=object)
    if not (gold.shape == sizes.shape == source.shape):
        raise ValueError(
            f"selector_agreement({dataset}): gold, sizes and sources hold {gold.shape[0]}, "
            f"{sizes.shape[0]} and {source.shape[0]} items"
        )
    has = gold >= 0
    groups = [("all", has)] + [(str(s), has & (source == s)) for s in sorted(set(source[has]))]
    rows = []
    for name, chosen in choices.items():
        chosen = np.asarray(chosen, dtype=np.int64)
        if chosen.shape != gold.shape:
            raise ValueError(
                f"selector_agreement({dataset}): selector {name!r} chose for {chosen.shape[0]} "
                f"items, not {gold.shape[0]}"
            )
        for group, mask in groups:
            if not mask.any():
                continue
            rows.append(
                {
                    "dataset": dataset,
                    "selector": name,
                    "relation_source": group,
                    "n": int(mask.sum()),
                    "agreement": float(np.mean(chosen[mask] == gold[mask])),
                    "chance": float(np.mean(1.0 / sizes[mask])),
                }
            )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def union_comparisons(
    hits: Mapping[str, Any],
    reference_hits: Any,
    *,
    reference: str = "gold",
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> dict[str, PairedComparison]:
    """Per selector, union hit@k with its ``B_rel`` against union hit@k with the ``reference``
    selector's (default the gold ``B_rel``) on the same questions (labels ``union_<name>`` and
    ``union_<reference>``): exact McNemar p and interval; pure."""
    reference_hits = np.asarray(reference_hits, dtype=bool)
    out = {}
    for name, h in hits.items():
        h = np.asarray(h, dtype=bool)
        if h.shape != reference_hits.shape:
            raise ValueError(
                f"union_comparisons: selector {name!r} has {h.shape[0]} hits, {reference} "
                f"{reference_hits.shape[0]}"
            )
        out[name] = paired_hits(
            h, reference_hits, (f"union_{name}", f"union_{reference}"), bootstrap=bootstrap
        )
    return out


def agreement_comparisons(
    correct: Mapping[str, Any],
    baseline: str,
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> dict[str, PairedComparison]:
    """Per selector other than ``baseline``, its per-item agreement with the gold sentence
    (booleans) against the baseline's, paired (exact McNemar); pure."""
    if baseline not in correct:
        raise ValueError(f"agreement_comparisons: no selector {baseline!r} in {list(correct)}")
    base = np.asarray(correct[baseline], dtype=bool)
    return {
        name: paired_hits(np.asarray(c, dtype=bool), base, (name, baseline), bootstrap=bootstrap)
        for name, c in correct.items()
        if name != baseline
    }


def _per_question(outcome: RoutingOutcome, comparison: str) -> np.ndarray:
    hits = {name: np.asarray(h, dtype=np.float64) for name, h in outcome.hits.items()}
    if comparison == "routed_vs_q":
        return hits["routed"]  # q is the same under every selector: routed alone differs
    if comparison == "routed_vs_union":
        return hits["routed"] - hits["union"]
    if comparison == "oracle_vs_routed":
        return hits["oracle"] - hits["routed"]
    raise ValueError(f"unknown routed comparison {comparison!r}; known {list(ROUTED_COMPARISONS)}")


def routed_comparisons(
    outcomes: Mapping[str, RoutingOutcome],
    *,
    reference: str = "gold",
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> dict[str, dict[str, PairedComparison]]:
    """Per selector other than ``reference``, each of :data:`ROUTED_COMPARISONS` with its
    ``B_rel`` against the same with the reference's, paired per question; pure.

    ``outcomes``: selector -> the routing outcome on one dataset's questions (the same questions
    in the same order). The difference is ``(a − b) − (a' − b')`` per question: for routed − q
    that is routed hit@k with the selector minus routed hit@k with the reference (q cancels),
    for oracle − routed the change of the oracle gap."""
    if reference not in outcomes:
        raise ValueError(f"routed_comparisons: no outcome of the reference {reference!r}")
    ref = outcomes[reference]
    out: dict[str, dict[str, PairedComparison]] = {}
    for name, outcome in outcomes.items():
        if name == reference:
            continue
        if outcome.n != ref.n:
            raise ValueError(
                f"routed_comparisons: selector {name!r} routed {outcome.n} questions, "
                f"{reference} {ref.n}"
            )
        out[name] = {
            comparison: compare_paired(
                _per_question(outcome, comparison),
                _per_question(ref, comparison),
                test=test,
                resamples=bootstrap.resamples,
                confidence=bootstrap.confidence,
                seed=bootstrap.seed,
                label_a=f"{comparison}@{name}",
                label_b=f"{comparison}@{reference}",
            )
            for comparison, test in ROUTED_COMPARISONS.items()
        }
    return out


def comparison_record(c: PairedComparison) -> dict[str, Any]:
    """A paired comparison as a record keeps it: ``n`` and :data:`COMPARISON_FIELDS`."""
    return {"n": c.n, **comparison_numbers(c)}


# --------------------------------------------------------------------------------------------
# One dataset's inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectorData:
    """What the selectors need about one dataset's routed questions, in the routing table's
    order: ``qids`` and ``bridge_pids`` (the bridge read); ``rows``, the per-sentence features;
    ``sentence_vectors``, ``(N, d)`` query-mode vectors of every bridge sentence in row order;
    ``gold``, the relation sentence (``Example.relation_sentence``, -1: none, or the bridge read
    is not the gold one), the agreement's gold and the learned selector's label; ``gold_b_rel``,
    the gold ``B_rel`` (:func:`~regime_core.data.regimes.gold_b_rel`, -1: none); and each
    item's ``relation_source``."""

    dataset: str
    qids: tuple[str, ...]
    bridge_pids: tuple[str, ...]
    rows: SentenceRows
    sentence_vectors: Vectors
    gold: np.ndarray
    gold_b_rel: np.ndarray
    relation_source: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.qids)

    def vectors_at(self, chosen: Any) -> Vectors:
        """The vector of sentence ``chosen[i]`` of bridge ``i``, per item."""
        chosen = np.asarray(chosen, dtype=np.int64)
        if chosen.shape != (self.n,) or np.any(chosen < 0) or np.any(chosen >= self.rows.sizes):
            raise ValueError(
                f"SelectorData({self.dataset}): need one sentence index within its bridge per item"
            )
        return self.sentence_vectors[self.rows.offsets[:-1] + chosen]

    def subset(self, qids: Sequence[str], bridge_pids: Sequence[str]) -> SelectorData | None:
        """The items ``qids`` in that order, or None when one is missing or reads another
        bridge (then the caller computes them afresh)."""
        position = {q: i for i, q in enumerate(self.qids)}
        items = [position.get(q) for q in qids]
        if any(i is None for i in items):
            return None
        index = np.asarray(items, dtype=np.int64)
        if any(self.bridge_pids[i] != pid for i, pid in zip(index, bridge_pids, strict=True)):
            return None
        offsets = self.rows.offsets
        rows = (
            np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in index])
            if index.size
            else np.zeros(0, dtype=np.int64)
        )
        return SelectorData(
            dataset=self.dataset,
            qids=tuple(qids),
            bridge_pids=tuple(bridge_pids),
            rows=self.rows.subset(index),
            sentence_vectors=self.sentence_vectors[rows],
            gold=self.gold[index],
            gold_b_rel=self.gold_b_rel[index],
            relation_source=tuple(self.relation_source[i] for i in index),
        )


def selector_data(
    data: RoutingData,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
    regime_rules: RegimeRules = DEFAULT_REGIME_RULES,
) -> SelectorData:
    """Embed (through ``store``, query mode) every sentence of every bridge ``data`` routes
    with, and compute the per-sentence features; the question vectors are the routing
    geometry's own. A bridge hop 1 got wrong (``bridge_source="retrieved"``) has no gold
    sentence: ``gold`` and ``gold_b_rel`` are -1 there."""
    examples = data.examples
    if not examples or len(examples) != data.n:
        raise ValueError(f"selector_data: the {data.dataset} routing data keeps no examples")
    bridges = [list(ex.bridge.sentences) for ex in examples]
    sentences = [s for b in bridges for s in b]
    sentence_vectors = checked_vectors(
        embed_vectors(store, encoder, sentences, "query"), len(sentences), "bridge sentences"
    )
    rows = sentence_features(
        [ex.question for ex in examples],
        bridges,
        data.geometry.question_vectors,
        sentence_vectors,
        bridge_titles=[ex.bridge.title or None for ex in examples],
        rules=router_rules,
    )
    on_gold_bridge = np.isin(data.table["hop1"].to_numpy(), _GOLD_BRIDGE)
    gold = np.asarray(
        [-1 if ex.relation_sentence is None else ex.relation_sentence for ex in examples],
        dtype=np.int64,
    )
    b_rel = [gold_b_rel(ex, regime_rules).index if ok else None
             for ex, ok in zip(examples, on_gold_bridge, strict=True)]  # fmt: skip
    return SelectorData(
        dataset=data.dataset,
        qids=tuple(ex.id for ex in examples),
        bridge_pids=tuple(ex.bridge_pid for ex in examples),
        rows=rows,
        sentence_vectors=sentence_vectors,
        gold=np.where(on_gold_bridge, gold, -1),
        gold_b_rel=np.asarray([-1 if i is None else i for i in b_rel], dtype=np.int64),
        relation_source=tuple(ex.relation_source for ex in examples),
    )


# --------------------------------------------------------------------------------------------
# Every selector's choice
# --------------------------------------------------------------------------------------------


def selection_folds(
    rule_data: RoutingData,
    inputs: SelectorData,
    *,
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE,
    label_k: int | None = None,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
) -> np.ndarray:
    """The training dataset's folds (:func:`~regime_core.router.learned_selector.selector_folds`):
    the router's own folds of the items its label rule labels under the rule's ``B_rel``, the
    tied items spread over the same folds, stratified by "the gold sentence is the first"."""
    table = rule_data.table
    return selector_folds(
        table["rank_q"].to_numpy(),
        table["rank_union"].to_numpy(),
        inputs.gold == 0,
        tie_rule=tie_rule,
        label_k=label_k,
        n_splits=n_splits,
        seed=seed,
    )


def _variant(name: str) -> LearnedSelector:
    return LearnedSelector(features=SELECTOR_VARIANTS[name])


@dataclass(frozen=True)
class Choices:
    """Every selector's ``B_rel`` per dataset (``by_dataset[dataset][selector]``: a sentence
    index per routed question). ``gold`` is the gold ``B_rel`` with the rule's choice where there
    is none (``n_gold_fallback`` counts them). On ``train_dataset`` the learned variants are
    cross-fitted on ``folds``; elsewhere ``fitted`` (each variant fitted on every trainable
    training item) chose."""

    train_dataset: str
    by_dataset: Mapping[str, Mapping[str, np.ndarray]]
    folds: np.ndarray | None
    fitted: Mapping[str, LearnedSelector]
    n_gold_fallback: Mapping[str, int]
    n_trained: int
    n_single_sentence: int

    def of(self, dataset: str, selector: str) -> np.ndarray:
        """The sentence index per question that ``selector`` chose on ``dataset``."""
        try:
            return self.by_dataset[dataset][selector]
        except KeyError:
            made = sorted(self.by_dataset.get(dataset, {}))
            raise ValueError(
                f"Choices: no choice of selector {selector!r} on {dataset!r}; made there: {made}"
            ) from None

    def cross_fitted(self, dataset: str, selector: str) -> bool:
        """The choice was cross-fitted on the dataset's own questions (its folds bind the
        router)."""
        return dataset == self.train_dataset and selector in SELECTOR_VARIANTS


def choose(
    inputs: Mapping[str, SelectorData],
    rule: Mapping[str, Any],
    *,
    train_dataset: str,
    folds: Any = None,
    variants: Sequence[str] = tuple(SELECTOR_VARIANTS),
) -> Choices:
    """Every selector's choice on every dataset of ``inputs`` (``rule[dataset]``: the rule's
    choice per question, the routing table's ``b_rel_index``); pure and deterministic.

    The learned ``variants`` are fitted on ``train_dataset``'s trainable items (a gold sentence
    and two sentences or more) and applied to the other datasets unchanged; on
    ``train_dataset`` itself each item is chosen by a fit on the other ``folds`` only
    (:func:`~regime_core.router.learned_selector.cross_fit_select`). Without ``folds`` the
    training dataset gets no learned choice (a caller that needs none there)."""
    unknown = [v for v in variants if v not in SELECTOR_VARIANTS]
    if unknown:
        raise ValueError(f"choose: unknown learned variants {unknown}; known {SELECTOR_VARIANTS}")
    if variants and train_dataset not in inputs:
        raise ValueError(f"choose: no selector data of the training dataset {train_dataset!r}")
    fitted: dict[str, LearnedSelector] = {}
    train = inputs.get(train_dataset)
    if train is not None and variants:
        fitted = {v: fit_selector(train.rows, train.gold, estimator=_variant(v)) for v in variants}
    by_dataset: dict[str, dict[str, np.ndarray]] = {}
    fallback: dict[str, int] = {}
    for dataset, data in inputs.items():
        rule_choice = np.asarray(rule[dataset], dtype=np.int64)
        if rule_choice.shape != (data.n,):
            raise ValueError(
                f"choose({dataset}): {rule_choice.shape[0]} rule choices, {data.n} items"
            )
        has_gold = data.gold_b_rel >= 0
        fallback[dataset] = int((~has_gold).sum())
        chosen: dict[str, np.ndarray] = {
            "rule": rule_choice,
            "first": np.zeros(data.n, dtype=np.int64),
            "gold": np.where(has_gold, data.gold_b_rel, rule_choice),
        }
        for v in variants:
            if dataset != train_dataset:
                chosen[v] = fitted[v].select(data.rows.X, data.rows.sizes)
        by_dataset[dataset] = chosen
    can = trainable(train.rows.sizes, train.gold) if train is not None else np.zeros(0, dtype=bool)
    single = (train.gold >= 0) & (train.rows.sizes < 2) if train is not None else can
    choices = Choices(
        train_dataset=train_dataset,
        by_dataset=by_dataset,
        folds=None,
        fitted=fitted,
        n_gold_fallback=fallback,
        n_trained=int(can.sum()),
        n_single_sentence=int(single.sum()),
    )
    return choices if folds is None else cross_fitted(choices, inputs[train_dataset], folds)


def cross_fitted(choices: Choices, train: SelectorData, folds: Any) -> Choices:
    """``choices`` with every fitted variant's choice on the training dataset made out of fold
    on ``folds`` (:func:`~regime_core.router.learned_selector.cross_fit_select`: each item by a
    fit on the other folds only); the zero-shot choices are kept. Pure; the multiverse calls it
    once per tie rule (the folds follow the router's labels)."""
    if train.dataset != choices.train_dataset:
        raise ValueError(
            f"cross_fitted: the choices were fitted on {choices.train_dataset!r}, not "
            f"{train.dataset!r}"
        )
    folds = np.asarray(folds, dtype=np.int64)
    by_dataset = {d: dict(c) for d, c in choices.by_dataset.items()}
    for v in choices.fitted:
        by_dataset[train.dataset][v] = cross_fit_select(
            train.rows, train.gold, folds, estimator=_variant(v)
        )
    return dataclasses.replace(choices, by_dataset=by_dataset, folds=folds)


def reselected(
    data: RoutingData,
    inputs: SelectorData,
    choices: Choices,
    selector: str,
    *,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
) -> RoutingData:
    """``data`` (the rule's routing data) with ``selector``'s ``B_rel``
    (:func:`~regime_core.router.training.with_b_rel`); the rule's is ``data`` itself. A choice
    cross-fitted on ``data``'s questions hands its folds to the router."""
    if selector == "rule":
        return data
    if inputs.qids != tuple(data.table["qid"]):
        raise ValueError(f"reselected({data.dataset}): selector data of other questions")
    chosen = choices.of(data.dataset, selector)
    folds = choices.folds if choices.cross_fitted(data.dataset, selector) else None
    return with_b_rel(
        data,
        chosen,
        inputs.vectors_at(chosen),
        selector=selector,
        folds=folds,
        router_rules=router_rules,
    )


# --------------------------------------------------------------------------------------------
# The study
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSelection:
    """One dataset's three levels: the agreement table's rows, the paired comparisons (against
    the gold ``B_rel`` and against the rule), and each knob value's routing outcome."""

    dataset: str
    cross_fitted: bool  # learned choices and routes out of fold (the training dataset)
    n: int
    agreement: pd.DataFrame
    agreement_vs_rule: Mapping[str, PairedComparison]
    union: Mapping[str, PairedComparison]  # selector -> union hit@k vs the gold B_rel
    union_vs_rule: Mapping[str, PairedComparison]
    routed: Mapping[str, RoutingOutcome]  # knob value -> outcome
    routed_vs_gold: Mapping[str, Mapping[str, PairedComparison]]
    routed_vs_rule: Mapping[str, Mapping[str, PairedComparison]]
    n_without_gold: Mapping[str, int]  # "sentence", "b_rel"

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {
            "setting": "cross-fitted" if self.cross_fitted else "zero-shot",
            "n": self.n,
            "n_without_gold": {k: int(v) for k, v in self.n_without_gold.items()},
        }
        agreement = numbers.setdefault("agreement", {})
        for row in self.agreement.itertuples(index=False):
            cell = agreement.setdefault(
                str(row.relation_source), {"n": int(row.n), "chance": float(row.chance)}
            )
            cell[str(row.selector)] = float(row.agreement)
        numbers["agreement_vs_rule"] = {
            name: comparison_record(c) for name, c in self.agreement_vs_rule.items()
        }
        numbers["union"] = {
            name: {"hit": c.mean_a, "hit_gold": c.mean_b, **comparison_record(c)}
            for name, c in self.union.items()
        }
        numbers["union_vs_rule"] = {
            name: comparison_record(c) for name, c in self.union_vs_rule.items()
        }
        routed: dict[str, Any] = {}
        for name, outcome in self.routed.items():
            entry = outcome.to_numbers()
            for comparison in outcome.comparisons:
                entry[comparison] = {"n": outcome.n, **entry[comparison]}
            for key, against in (
                ("vs_gold", self.routed_vs_gold),
                ("vs_rule", self.routed_vs_rule),
            ):
                if name in against:
                    entry[key] = {
                        comparison: comparison_record(c) for comparison, c in against[name].items()
                    }
            routed[name] = entry
        numbers["routed"] = routed
        return numbers


def measure_dataset(
    data: Mapping[str, RoutingData],
    inputs: SelectorData,
    choices: Choices,
    outcomes: Mapping[str, RoutingOutcome],
    *,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> DatasetSelection:
    """The three levels on one dataset; pure. ``data``: knob value -> its routing data (the
    rule's at least); ``outcomes``: knob value -> its routing outcome (``gold`` among them)."""
    rule = data["rule"]
    dataset = rule.dataset
    chosen = {name: choices.of(dataset, name) for name in MEASURED
              if name in choices.by_dataset[dataset]}  # fmt: skip
    agreement = selector_agreement(
        dataset, chosen, inputs.gold, inputs.rows.sizes, inputs.relation_source
    )
    has_gold = inputs.gold >= 0
    agreement_vs_rule = agreement_comparisons(
        {name: (c == inputs.gold)[has_gold] for name, c in chosen.items() if name != "gold"},
        "rule",
        bootstrap=bootstrap,
    )
    has_b_rel = inputs.gold_b_rel >= 0
    union: dict[str, PairedComparison] = {}
    union_vs_rule: dict[str, PairedComparison] = {}
    if has_b_rel.any():
        k = rule.settings.k
        hits = {}
        for name, c in chosen.items():
            if name in data:  # routed with: its routing data has the ranks already
                ranks = data[name].table["rank_union"].to_numpy()
            else:  # only B_rel's vector changes
                swapped = dataclasses.replace(rule.geometry, b_rel_vectors=inputs.vectors_at(c))
                ranks = swapped.target_ranks(rule.union_weights)
            hits[name] = ranks[has_b_rel] <= k
        gold_hits = hits.pop("gold")
        union = union_comparisons(hits, gold_hits, bootstrap=bootstrap)
        union_vs_rule = union_comparisons(
            {name: h for name, h in hits.items() if name != "rule"},
            hits["rule"],
            reference="rule",
            bootstrap=bootstrap,
        )
    return DatasetSelection(
        dataset=dataset,
        cross_fitted=dataset == choices.train_dataset,
        n=rule.n,
        agreement=agreement,
        agreement_vs_rule=agreement_vs_rule,
        union=union,
        union_vs_rule=union_vs_rule,
        routed=dict(outcomes),
        routed_vs_gold=routed_comparisons(outcomes, bootstrap=bootstrap),
        routed_vs_rule=routed_comparisons(outcomes, reference="rule", bootstrap=bootstrap),
        n_without_gold={"sentence": int((~has_gold).sum()), "b_rel": int((~has_b_rel).sum())},
    )


@dataclass(frozen=True)
class SelectionStudy:
    """Every selector on every dataset at the three levels, and the learned fits."""

    train_dataset: str
    selector: str  # the knob value the run trained its router with
    k: int
    alpha: float
    choices: Choices
    datasets: Mapping[str, DatasetSelection]

    def to_numbers(self) -> dict[str, Any]:
        """The record's ``selection`` node (fractions, counts, coefficients)."""
        numbers: dict[str, Any] = {
            "train_dataset": self.train_dataset,
            "selector": self.selector,
            "selectors": ", ".join(SELECTORS),
            "measured": ", ".join(MEASURED),
            "k": self.k,
            "alpha": self.alpha,
            "n_trained": self.choices.n_trained,
            "n_single_sentence": self.choices.n_single_sentence,
            "coefficients": {
                name: dict(
                    zip(SELECTOR_VARIANTS[name], s.coef_[0].tolist(), strict=True),
                    intercept=float(s.intercept_[0]),
                )
                for name, s in self.choices.fitted.items()
            },
        }
        for dataset, selection in self.datasets.items():
            numbers[dataset] = {
                **selection.to_numbers(),
                "n_gold_fallback": int(self.choices.n_gold_fallback[dataset]),
            }
        return numbers
