"""The ``B_rel`` selectors measured: agreement with the gold sentence, and union hit@k with it.

Selectors (:data:`SELECTORS`, the values of the selector knob; :data:`MEASURED` adds every
learned variant of :data:`~regime_core.router.learned_selector.SELECTOR_VARIANTS`):

- ``rule``: :func:`~regime_core.router.select_b_rel`, the default;
- ``learned``: :class:`~regime_core.router.learned_selector.LearnedSelector`, cross-fitted on the
  training dataset (the router's folds) and applied zero-shot elsewhere;
- ``gold``: the dataset's relation sentence (an oracle: reads gold);
- ``first``: always the bridge's first sentence.

Two levels, each a pure kernel over per-item arrays:

- :func:`selector_agreement`: per dataset, selector and source of the gold sentence
  (``Example.relation_source``, ``config.MEANINGS["RELATION_SOURCES"]``; and ``all``), the share
  of items whose selection is the gold sentence (``Example.relation_sentence``, items without one
  left out and counted), beside chance (the mean of 1/#sentences);
- :func:`union_comparisons`: union hit@k with each selector's ``B_rel`` against union hit@k with
  the gold ``B_rel`` (:func:`~regime_core.data.regimes.gold_b_rel`: the relation sentence, else
  the first sentence mentioning the hop-2 entity; items without one left out and counted), and
  in the study also against the rule's, paired per question (bootstrap CI, exact McNemar:
  :func:`~regime_core.router.evaluation.paired_hits`).

:func:`measure_selectors` runs both on dataset samples: it reads the question and sentence
vectors from the embedding store (query mode, by content), ranks the hop-2 candidates once per
selector on one :class:`~regime_core.retrieval.geometry.UnionGeometry` (only ``B_rel``'s vector
differs), and is the only function here with a side effect (the store).
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
from regime_core.retrieval.geometry import UnionGeometry, build_geometry
from regime_core.retrieval.vectors import Vectors, checked_vectors, embed_vectors
from regime_core.router.evaluation import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    comparison_numbers,
    paired_hits,
)
from regime_core.router.learned_selector import (
    DEFAULT_VARIANT,
    SELECTOR_VARIANTS,
    LearnedSelector,
    SentenceRows,
    cross_fit_select,
    fit_selector,
    selector_folds,
    sentence_features,
    trainable,
)
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.selector import select_b_rel_batch
from regime_core.schema import Example, Passage
from regime_core.stats import PairedComparison

#: The values of the selector knob.
SELECTORS: tuple[str, ...] = ("rule", DEFAULT_VARIANT, "gold", "first")
#: Every selector measured, the knob's values and every learned variant.
MEASURED: tuple[str, ...] = ("rule", "first", "gold", *SELECTOR_VARIANTS)
AGREEMENT_COLUMNS: tuple[str, ...] = (
    "dataset", "selector", "relation_source", "n", "agreement", "chance",
)  # fmt: skip


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
    ``union_<reference>``): bootstrap CI of the difference and exact McNemar p; pure."""
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
    (booleans) against the baseline's, paired (bootstrap CI, exact McNemar); pure."""
    if baseline not in correct:
        raise ValueError(f"agreement_comparisons: no selector {baseline!r} in {list(correct)}")
    base = np.asarray(correct[baseline], dtype=bool)
    return {
        name: paired_hits(np.asarray(c, dtype=bool), base, (name, baseline), bootstrap=bootstrap)
        for name, c in correct.items()
        if name != baseline
    }


# --------------------------------------------------------------------------------------------
# One dataset's inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectorData:
    """Everything the selectors need about one dataset sample under one encoder.

    ``rows``: the per-sentence features; ``sentence_vectors``: ``(N, d)`` query-mode vectors of
    every bridge sentence in row order; ``gold``: ``Example.relation_sentence`` (-1: none), the
    agreement's gold; ``gold_b_rel``: the retrieval's gold ``B_rel`` index (-1: none);
    ``relation_source`` per item; ``rule``: the rule's choice per item.
    """

    dataset: str
    examples: tuple[Example, ...]
    rows: SentenceRows
    sentence_vectors: Vectors
    gold: np.ndarray
    gold_b_rel: np.ndarray
    relation_source: tuple[str, ...]
    rule: np.ndarray

    @property
    def n(self) -> int:
        return len(self.examples)


def selector_data(
    dataset: str,
    examples: Sequence[Example],
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
    regime_rules: RegimeRules = DEFAULT_REGIME_RULES,
) -> SelectorData:
    """Embed (through ``store``, query mode) every question and bridge sentence, compute the
    per-sentence features, the rule's choice and the gold indices."""
    examples = tuple(examples)
    if not examples:
        raise ValueError(f"selector_data: the {dataset} sample is empty")
    questions = [ex.question for ex in examples]
    bridges = [list(ex.bridge.sentences) for ex in examples]
    titles = [ex.bridge.title or None for ex in examples]
    sentences = [s for b in bridges for s in b]
    question_vectors = checked_vectors(
        embed_vectors(store, encoder, questions, "query"), len(questions), "questions"
    )
    sentence_vectors = checked_vectors(
        embed_vectors(store, encoder, sentences, "query"), len(sentences), "bridge sentences"
    )
    rows = sentence_features(
        questions,
        bridges,
        question_vectors,
        sentence_vectors,
        bridge_titles=titles,
        rules=router_rules,
    )
    rule = select_b_rel_batch(questions, bridges, bridge_titles=titles, rules=router_rules)
    golds = [gold_b_rel(ex, regime_rules) for ex in examples]
    return SelectorData(
        dataset=dataset,
        examples=examples,
        rows=rows,
        sentence_vectors=sentence_vectors,
        gold=np.asarray(
            [-1 if ex.relation_sentence is None else ex.relation_sentence for ex in examples],
            dtype=np.int64,
        ),
        gold_b_rel=np.asarray([-1 if g.index is None else g.index for g in golds], dtype=np.int64),
        relation_source=tuple(ex.relation_source for ex in examples),
        rule=np.asarray([s.index for s in rule], dtype=np.int64),
    )


def selection_geometry(
    data: SelectorData,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    pool: str = config.POOL_MODE,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    corpus: Sequence[Passage] | None = None,
) -> UnionGeometry:
    """The union geometry of ``data``'s questions with the rule's ``B_rel`` (see
    :func:`~regime_core.retrieval.geometry.build_geometry`); :func:`union_ranks` swaps in any
    other selection's vectors."""
    texts = [ex.bridge.sentences[int(data.rule[i])] for i, ex in enumerate(data.examples)]
    return build_geometry(
        list(data.examples),
        texts,
        encoder=encoder,
        store=store,
        pool=pool,
        exclude_bridge=exclude_bridge,
        corpus=corpus,
    )


def union_ranks(
    geometry: UnionGeometry, data: SelectorData, chosen: Any, alpha: float
) -> np.ndarray:
    """1-based rank of each hop-2 target under ``q + alpha·B_rel`` with ``B_rel`` the sentence
    ``chosen[i]`` of bridge ``i`` (its vector from ``data.sentence_vectors``); pure."""
    chosen = np.asarray(chosen, dtype=np.int64)
    if chosen.shape[0] != data.n or np.any(chosen < 0) or np.any(chosen >= data.rows.sizes):
        raise ValueError(
            f"union_ranks({data.dataset}): need one sentence index within its bridge per item"
        )
    rows = data.rows.offsets[:-1] + chosen
    swapped = dataclasses.replace(geometry, b_rel_vectors=data.sentence_vectors[rows])
    return swapped.target_ranks(alpha)


# --------------------------------------------------------------------------------------------
# The study
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSelections:
    """One dataset's selections by every measured selector, and its union ranks."""

    data: SelectorData
    choices: dict[str, np.ndarray]  # selector -> index per item (gold: -1 where none)
    rank_q: np.ndarray
    rank_union: dict[str, np.ndarray]  # selector -> rank at alpha (gold: on gold_b_rel items)
    cross_fitted: bool  # learned selections out of fold (training dataset) or zero-shot


@dataclass(frozen=True)
class SelectorStudy:
    """Every selector on every dataset: agreement, union hit@k against gold, the fits."""

    train_dataset: str
    k: int
    alpha: float
    datasets: dict[str, DatasetSelections]
    agreement: pd.DataFrame
    agreement_vs_rule: dict[str, dict[str, PairedComparison]]
    union: dict[str, dict[str, PairedComparison]]  # dataset -> selector -> vs gold
    union_vs_rule: dict[str, dict[str, PairedComparison]]  # same items, against the rule
    n_without_gold: dict[str, dict[str, int]]  # dataset -> {"sentence", "b_rel"} -> count
    selectors: dict[str, LearnedSelector]  # variant -> fitted on every training item
    n_trained: int
    n_single_sentence: int

    def to_numbers(self) -> dict[str, Any]:
        """The study as record-ready numbers (fractions, counts, coefficients)."""
        numbers: dict[str, Any] = {
            "train_dataset": self.train_dataset,
            "k": self.k,
            "alpha": self.alpha,
            "n_trained": self.n_trained,
            "n_single_sentence": self.n_single_sentence,
            "coefficients": {
                name: dict(
                    zip(SELECTOR_VARIANTS[name], s.coef_[0].tolist(), strict=True),
                    intercept=float(s.intercept_[0]),
                )
                for name, s in self.selectors.items()
            },
        }
        for row in self.agreement.itertuples(index=False):
            by_source = numbers.setdefault(str(row.dataset), {}).setdefault("agreement", {})
            cell = by_source.setdefault(
                str(row.relation_source), {"n": int(row.n), "chance": float(row.chance)}
            )
            cell[str(row.selector)] = float(row.agreement)
        for dataset, comparisons in self.agreement_vs_rule.items():
            entry = numbers.setdefault(dataset, {}).setdefault("agreement_vs_rule", {})
            for name, c in comparisons.items():
                entry[name] = comparison_numbers(c)
        for dataset, comparisons in self.union.items():
            entry = numbers.setdefault(dataset, {})
            entry["n_without_gold"] = dict(self.n_without_gold[dataset])
            union = entry.setdefault("union_vs_gold", {})
            for name, c in comparisons.items():
                union[name] = {"n": c.n, "hit": c.mean_a, "hit_gold": c.mean_b,
                               **comparison_numbers(c)}  # fmt: skip
            vs_rule = entry.setdefault("union_vs_rule", {})
            for name, c in self.union_vs_rule[dataset].items():
                vs_rule[name] = comparison_numbers(c)
            entry["cross_fitted"] = self.datasets[dataset].cross_fitted
        return numbers


def _variant(name: str) -> LearnedSelector:
    return LearnedSelector(features=SELECTOR_VARIANTS[name])


def measure_selectors(
    samples: Mapping[str, Any],
    *,
    encoders: Mapping[str, Encoder],
    store: EmbeddingSource,
    train_dataset: str,
    pool: str = config.POOL_MODE,
    alpha: float = config.ALPHA,
    k: int = config.HEADLINE_K,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    router_rules: RouterRules = DEFAULT_ROUTER_RULES,
    regime_rules: RegimeRules = DEFAULT_REGIME_RULES,
    tie_rule: str = config.ROUTER_TRAIN_TIE_RULE,
    n_splits: int = config.CV_FOLDS,
    seed: int = config.SEED,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> SelectorStudy:
    """Every selector of :data:`MEASURED` on every sample (``{dataset: sample}``, each with
    ``examples`` and ``corpus``; ``encoders[dataset]`` its encoder).

    On ``train_dataset`` each learned variant is cross-fitted (:func:`cross_fit_select`, the
    router's folds from :func:`selector_folds` with the rule's ranks); on the others the variant
    fitted on every training item is applied zero-shot."""
    if train_dataset not in samples:
        raise ValueError(f"measure_selectors: no sample of the training dataset {train_dataset!r}")
    inputs = {
        dataset: selector_data(
            dataset,
            sample.examples,
            encoder=encoders[dataset],
            store=store,
            router_rules=router_rules,
            regime_rules=regime_rules,
        )
        for dataset, sample in samples.items()
    }
    geometries = {
        dataset: selection_geometry(
            data,
            encoder=encoders[dataset],
            store=store,
            pool=pool,
            exclude_bridge=exclude_bridge,
            corpus=samples[dataset].corpus,
        )
        for dataset, data in inputs.items()
    }
    train = inputs[train_dataset]
    geometry = geometries[train_dataset]
    folds = selector_folds(
        geometry.target_ranks(0.0),
        union_ranks(geometry, train, train.rule, alpha),
        train.gold == 0,
        tie_rule=tie_rule,
        n_splits=n_splits,
        seed=seed,
    )
    fitted = {name: fit_selector(train.rows, train.gold, estimator=_variant(name))
              for name in SELECTOR_VARIANTS}  # fmt: skip

    datasets: dict[str, DatasetSelections] = {}
    agreement_frames = []
    agreement_vs_rule: dict[str, dict[str, PairedComparison]] = {}
    union: dict[str, dict[str, PairedComparison]] = {}
    union_vs_rule: dict[str, dict[str, PairedComparison]] = {}
    without: dict[str, dict[str, int]] = {}
    for dataset, data in inputs.items():
        choices: dict[str, np.ndarray] = {
            "rule": data.rule,
            "first": np.zeros(data.n, dtype=np.int64),
            "gold": data.gold,
        }
        cross = dataset == train_dataset
        for name in SELECTOR_VARIANTS:
            if cross:
                choices[name] = cross_fit_select(
                    data.rows, data.gold, folds, estimator=_variant(name)
                )
            else:
                choices[name] = fitted[name].select(data.rows.X, data.rows.sizes)
        choices = {name: choices[name] for name in MEASURED}
        agreement_frames.append(
            selector_agreement(dataset, choices, data.gold, data.rows.sizes, data.relation_source)
        )
        has_gold = data.gold >= 0
        agreement_vs_rule[dataset] = agreement_comparisons(
            {name: (c == data.gold)[has_gold] for name, c in choices.items() if name != "gold"},
            "rule",
            bootstrap=bootstrap,
        )
        g = geometries[dataset]
        has_b_rel = data.gold_b_rel >= 0
        ranks = {
            name: union_ranks(g, data, c, alpha) for name, c in choices.items() if name != "gold"
        }
        ranks["gold"] = union_ranks(g, data, np.where(has_b_rel, data.gold_b_rel, data.rule), alpha)
        without[dataset] = {
            "sentence": int((~has_gold).sum()),
            "b_rel": int((~has_b_rel).sum()),
        }
        if has_b_rel.any():
            hits = {name: r[has_b_rel] <= k for name, r in ranks.items()}
            gold_hits = hits.pop("gold")
            union[dataset] = union_comparisons(hits, gold_hits, bootstrap=bootstrap)
            union_vs_rule[dataset] = union_comparisons(
                {name: h for name, h in hits.items() if name != "rule"},
                hits["rule"],
                reference="rule",
                bootstrap=bootstrap,
            )
        datasets[dataset] = DatasetSelections(data, choices, g.target_ranks(0.0), ranks, cross)
    can = trainable(train.rows.sizes, train.gold)
    return SelectorStudy(
        train_dataset=train_dataset,
        k=int(k),
        alpha=float(alpha),
        datasets=datasets,
        agreement=pd.concat(agreement_frames, ignore_index=True),
        agreement_vs_rule=agreement_vs_rule,
        union=union,
        union_vs_rule=union_vs_rule,
        n_without_gold=without,
        selectors=fitted,
        n_trained=int(can.sum()),
        n_single_sentence=int(((train.gold >= 0) & (train.rows.sizes < 2)).sum()),
    )
