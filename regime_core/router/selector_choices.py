"""Every ``B_rel`` selector's choice on the routing data.

Selectors (the values of ``config.SELECTORS``, and every learned variant of
:data:`~regime_core.router.learned_selector.SELECTOR_VARIANTS`):

- ``rule``: :func:`~regime_core.router.select_b_rel`, the default;
- ``learned``: :class:`~regime_core.router.learned_selector.LearnedSelector`, cross-fitted on the
  training dataset (the router's folds,
  :func:`~regime_core.router.learned_selector.selector_folds`) and fitted on all of it and
  applied unchanged elsewhere;
- ``gold``: the dataset's gold ``B_rel`` (:func:`~regime_core.data.regimes.gold_b_rel`: the
  relation sentence, else the first sentence naming the hop-2 entity), the rule's choice where
  there is none (counted): an oracle, it reads gold;
- ``first``: always the bridge's first sentence.

Everything starts from the router's own routing data under the rule
(:class:`~regime_core.router.training.RoutingData`): :func:`selector_data` adds the per-sentence
features and vectors of the bridges the router reads (the one side effect here, the embedding
store), :func:`choose` makes every selector's choice, and :func:`reselected` turns a choice into
the routing data the router is trained on and applied to
(:func:`~regime_core.router.training.with_b_rel`). What each choice buys is measured in
:mod:`~regime_core.router.selector_evaluation`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules, gold_b_rel
from regime_core.encoders.base import Encoder
from regime_core.retrieval import EmbeddingSource
from regime_core.retrieval.vectors import Vectors, checked_vectors, embed_vectors
from regime_core.router.learned_selector import (
    SELECTOR_VARIANTS,
    LearnedSelector,
    cross_fit_select,
    fit_selector,
    trainable,
)
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector_features import SentenceRows, sentence_features
from regime_core.router.training import RoutingData, with_b_rel

#: Where a question's bridge is the gold hop-1 passage (its gold sentences apply to it).
_GOLD_BRIDGE: tuple[str, ...] = ("gold", "correct")


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
        return SelectorData(
            dataset=self.dataset,
            qids=tuple(qids),
            bridge_pids=tuple(bridge_pids),
            rows=self.rows.subset(index),
            sentence_vectors=self.sentence_vectors[self.rows.rows_of(index)],
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
    b_rel = [
        gold_b_rel(ex, regime_rules).index if ok else None
        for ex, ok in zip(examples, on_gold_bridge, strict=True)
    ]
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
        return self.by_dataset[dataset][selector]

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
    fitted: dict[str, LearnedSelector] = {}
    train = inputs.get(train_dataset)
    if train is not None and variants:
        fitted = {v: fit_selector(train.rows, train.gold, estimator=_variant(v)) for v in variants}
    by_dataset: dict[str, dict[str, np.ndarray]] = {}
    fallback: dict[str, int] = {}
    for dataset, data in inputs.items():
        rule_choice = np.asarray(rule[dataset], dtype=np.int64)
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
