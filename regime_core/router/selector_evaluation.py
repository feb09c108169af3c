"""What each ``B_rel`` selector buys, measured on the routing data.

The selectors and their choices are :mod:`~regime_core.router.selector_choices`'s
(``config.SELECTORS``, the values of the selector knob; :data:`MEASURED` adds every learned variant
of :data:`~regime_core.router.learned_selector.SELECTOR_VARIANTS`). Three levels are measured,
each a pure kernel over per-item arrays:

1. :func:`selector_agreement`: per selector and source of the gold sentence
   (``Example.relation_source``; and ``all``), the share of items whose choice is the gold
   relation sentence (``Example.relation_sentence``; items without one left out and counted),
   beside chance (the mean of 1/#sentences); :func:`agreement_comparisons` pairs each selector
   with the rule;
2. :func:`union_comparisons`: union hit@k with each selector's ``B_rel`` against union hit@k
   with the gold ``B_rel``, on the items that have one, paired per question (McNemar);
3. :func:`routed_comparisons`: the router chapter's numbers with each selector's ``B_rel``
   (routed − q, routed − always-union, oracle − routed) against the same with the gold ``B_rel``,
   paired per question.

:func:`measure_dataset` computes them on one dataset; :class:`SelectionStudy` holds them all and
writes the record's ``selection`` node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.inputs import Choice, check_value
from regime_core.router.evaluation import (
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    RoutingOutcome,
    comparison_numbers,
    paired_hits,
)
from regime_core.router.learned_selector import SELECTOR_VARIANTS
from regime_core.router.selector_choices import Choices, SelectorData
from regime_core.router.training import RoutingData
from regime_core.stats import PairedComparison

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


def check_selector(value: Any, where: str) -> str:
    """``value`` read as one of ``config.SELECTORS`` (a router file's ``training.extra``), or an
    :class:`~regime_core.inputs.InputError` naming ``where`` and the field ``selector``."""
    return str(check_value(Choice(config.SELECTORS), value, where=where, field="selector"))


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
    has = gold >= 0
    groups = [("all", has)] + [(str(s), has & (source == s)) for s in sorted(set(source[has]))]
    rows = []
    for name, chosen in choices.items():
        chosen = np.asarray(chosen, dtype=np.int64)
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
    ``union_<reference>``): McNemar p and interval; pure."""
    reference_hits = np.asarray(reference_hits, dtype=bool)
    out = {}
    for name, h in hits.items():
        h = np.asarray(h, dtype=bool)
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
    (booleans) against the baseline's, paired (McNemar); pure."""
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
    return hits["oracle"] - hits["routed"]  # oracle_vs_routed, the last of ROUTED_COMPARISONS


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
    ref = outcomes[reference]
    out: dict[str, dict[str, PairedComparison]] = {}
    for name, outcome in outcomes.items():
        if name == reference:
            continue
        out[name] = {
            comparison: paired_hits(
                _per_question(outcome, comparison),
                _per_question(ref, comparison),
                (f"{comparison}@{name}", f"{comparison}@{reference}"),
                bootstrap=bootstrap,
                test=test,
            )
            for comparison, test in ROUTED_COMPARISONS.items()
        }
    return out


def comparison_record(c: PairedComparison) -> dict[str, Any]:
    """A paired comparison as a record keeps it: ``n`` and :data:`COMPARISON_FIELDS`."""
    return {"n": c.n, **comparison_numbers(c)}


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
    chosen = {
        name: choices.of(dataset, name) for name in MEASURED if name in choices.by_dataset[dataset]
    }
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
            "selectors": ", ".join(config.SELECTORS),
            "measured": ", ".join(MEASURED),
            "k": self.k,
            "alpha": self.alpha,
            "n_trained": self.choices.n_trained,
            "n_single_sentence": self.choices.n_single_sentence,
            "coefficients": {
                name: {**s.coefficients(), "intercept": float(s.intercept_[0])}
                for name, s in self.choices.fitted.items()
            },
        }
        for dataset, selection in self.datasets.items():
            numbers[dataset] = {
                **selection.to_numbers(),
                "n_gold_fallback": int(self.choices.n_gold_fallback[dataset]),
            }
        return numbers
