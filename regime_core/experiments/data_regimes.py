"""Notebook 01: what the prepared data holds, and how its questions fall into the regimes.

* counts after preparation, from the manifest ``regime data prepare`` wrote (questions read,
  two-hop items kept, exclusions by reason, for the chosen split);
* over the items used (the seeded sample; every item when ``sample_size`` is None): native
  types, hop-order rules, where ``B_rel`` came from;
* P1 and P2 shares and regime shares by dataset and native type
  (:func:`~regime_core.data.regimes.regime_table`, :func:`~regime_core.data.regimes.regime_shares`)
  over the
  same seeded sample the claim notebooks use;
* worked examples of each regime, chosen deterministically (the smallest
  ``sha256(seed:id)`` within each dataset × regime), with ``B_rel`` highlighted.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.item_sets import ALL, ITEM_SETS, filter_item_set
from regime_core.data.regimes import REGIMES, bridge_entity_mention, regime_shares, regime_table
from regime_core.experiments.common import ExperimentConfig, table_numbers
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.sampling import Sample, sample_numbers
from regime_core.inputs.configs import declared, integer
from regime_core.schema import Example
from regime_core.text import escape_markdown


@dataclass(frozen=True)
class OverviewConfig(ExperimentConfig):
    """Notebook 01's parameters; ``worked_examples`` is the number per dataset × regime.

    The data page describes every item, so tiny pools are kept here (and counted)."""

    worked_examples: int = declared(1, integer())
    tiny_pools: str = "keep"


@dataclass(frozen=True)
class WorkedExample:
    """One question shown in full: its regime, the bridge with ``B_rel`` marked, the entity."""

    dataset: str
    regime: str
    id: str
    native_type: str
    question: str
    bridge_title: str
    bridge_sentences: tuple[str, ...]
    b_rel_index: int | None
    hop2_entity: str
    bridge_mention: str | None
    target_title: str
    p1: bool
    p2: bool

    def markdown(
        self,
        *,
        dataset_name: Callable[[str], str] = str,
        regime_name: Callable[[str], str] = str,
    ) -> str:
        """The example as Markdown, ``B_rel`` in bold; ``dataset_name`` and ``regime_name``
        display the dataset and the regime (the book passes its display names)."""
        md = escape_markdown
        sentences = [
            f"**{md(s)}**" if i == self.b_rel_index else md(s)
            for i, s in enumerate(self.bridge_sentences)
        ]
        mention = self.bridge_mention if self.bridge_mention is not None else "not in the bridge"
        return "\n".join(
            [
                f"**{regime_name(self.regime)}** · {dataset_name(self.dataset)} · "
                f"{md(self.native_type)} · P1 {'yes' if self.p1 else 'no'}, "
                f"P2 {'yes' if self.p2 else 'no'}",
                "",
                f"- Question: {md(self.question)}",
                f"- Bridge ({md(self.bridge_title)}): " + " ".join(sentences),
                f"- Hop-2 entity: {md(self.hop2_entity)}; as the bridge writes it: "
                f"{md(mention)}; target passage: {md(self.target_title)}",
            ]
        )


@dataclass(frozen=True)
class OverviewResult:
    """Notebook 01's numbers and tables.

    ``prepared``: one row per dataset with ``questions``, ``two_hop`` and ``excluded`` for the
    split; ``exclusions``: (dataset, reason, count); ``hop_order``, ``relation_sources``,
    ``native_types``: (dataset, value, count) over the items used; ``shares``: the regime
    shares of the sample by dataset and native type (long format); ``predicates``: P1, P2 shares
    by dataset and native type.
    """

    config: OverviewConfig
    prepared: pd.DataFrame
    exclusions: pd.DataFrame
    hop_order: pd.DataFrame
    relation_sources: pd.DataFrame
    native_types: pd.DataFrame
    shares: pd.DataFrame
    predicates: pd.DataFrame
    worked: tuple[WorkedExample, ...]
    samples: Mapping[str, Mapping[str, Any]]
    tiny_pools: Mapping[str, int]
    #: per dataset and item set other than ``all`` (:mod:`regime_core.data.item_sets`), over the
    #: items used: the items considered, kept and removed (per first failing clause and per
    #: clause failed), and ``kept_not_tiny``, those kept whose pool is not tiny
    item_sets: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def to_numbers(self) -> dict[str, Any]:
        prepared = table_numbers(
            self.prepared, ("dataset",), dict.fromkeys(("questions", "two_hop", "excluded"), int)
        )
        for row in self.exclusions.itertuples(index=False):
            prepared[row.dataset].setdefault("excluded_by_reason", {})[row.reason] = int(row.count)

        def counts(frame: pd.DataFrame) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for row in frame.itertuples(index=False):
                out.setdefault(row.dataset, {})[str(row.value)] = int(row.count)
            return out

        regimes: dict[str, Any] = {}
        for row in self.shares.itertuples(index=False):
            node = regimes.setdefault(row.dataset, {}).setdefault(
                row.native_type, {"n": int(row.n)}
            )
            node[row.regime] = {"count": int(row.count), "share": float(row.share)}
        predicates = table_numbers(
            self.predicates,
            ("dataset", "native_type"),
            {
                "n": int,
                "p1_share": float,
                "p2_share": float,
                "p1_degenerate": bool,
                "p2_degenerate": bool,
            },
        )
        worked = {f"{w.dataset}_{w.regime}_{i}": w.id for i, w in enumerate(self.worked)}
        return {
            "split": self.config.split,
            "prepared": prepared,
            "hop_order_rules": counts(self.hop_order),
            "relation_sources": counts(self.relation_sources),
            "native_types": counts(self.native_types),
            "regimes": regimes,
            "predicates": predicates,
            "worked_examples": worked,
            "sample": {k: dict(v) for k, v in self.samples.items()},
            "tiny_pools": {ds: int(n) for ds, n in self.tiny_pools.items()},
            "item_sets": {
                ds: {k: dict(v) for k, v in by.items()} for ds, by in self.item_sets.items()
            },
            "predicate_names": self.config.predicate_names,
            "degenerate_share": config.DEGENERATE_SHARE,
        }


def _count_frame(samples: Mapping[str, Sample], field: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for dataset, sample in samples.items():
        examples = sample.examples
        counter = Counter(str(getattr(ex, field)) for ex in examples)
        rows.extend(
            {"dataset": dataset, "value": value, "count": count}
            for value, count in sorted(counter.items())
        )
    return pd.DataFrame(rows, columns=["dataset", "value", "count"])


def prepared_counts(
    manifest: Mapping[str, Any], datasets: Sequence[str], split: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per dataset counts, exclusions by reason)`` for one split, from the manifest; pure."""
    rows: list[dict[str, Any]] = []
    reasons: list[dict[str, Any]] = []
    entries = manifest.get("datasets", {})
    for dataset in datasets:
        entry = entries.get(dataset)
        if entry is None:
            raise ValueError(
                f"manifest: no entry for {dataset!r}; run `regime data prepare --dataset {dataset}`"
            )
        excluded = entry.get("excluded_by_split", {}).get(split, {})
        rows.append(
            {
                "dataset": dataset,
                "questions": int(entry.get("questions", {}).get(split, 0)),
                "two_hop": int(entry.get("two_hop", {}).get(split, 0)),
                "excluded": int(sum(excluded.values())),
            }
        )
        reasons.extend(
            {"dataset": dataset, "reason": reason, "count": int(count)}
            for reason, count in sorted(excluded.items())
        )
    return (
        pd.DataFrame(rows, columns=["dataset", "questions", "two_hop", "excluded"]),
        pd.DataFrame(reasons, columns=["dataset", "reason", "count"]),
    )


def predicate_shares(
    table: pd.DataFrame, threshold: float = config.DEGENERATE_SHARE
) -> pd.DataFrame:
    """P1 and P2 shares by dataset and native type, and overall per dataset (type ``"all"``),
    with ``p1_degenerate``/``p2_degenerate``: true (or false) for at least ``threshold``."""
    both = pd.concat([table, table.assign(native_type="all")], ignore_index=True)
    grouped = both.groupby(["dataset", "native_type"], sort=True)
    out = grouped.agg(n=("id", "size"), p1_share=("p1", "mean"), p2_share=("p2", "mean"))
    for predicate in ("p1", "p2"):
        share = out[f"{predicate}_share"]
        # the rule of regime_core.data.regimes.degenerate_predicates, per group
        out[f"{predicate}_degenerate"] = np.maximum(share, 1.0 - share) >= threshold
    return out.reset_index()


def pick_worked_examples(
    examples: Sequence[Example], table: pd.DataFrame, *, per_regime: int, seed: int, rules: Any
) -> list[WorkedExample]:
    """``per_regime`` examples per dataset × regime, by smallest ``sha256(f"{seed}:{id}")``."""
    by_id = {ex.id: ex for ex in examples}
    picked: list[WorkedExample] = []
    for dataset in sorted(table["dataset"].unique()):
        for regime in REGIMES:
            rows = table[(table["dataset"] == dataset) & (table["regime"] == regime)]
            ranked = sorted(
                rows.itertuples(index=False),
                key=lambda r: hashlib.sha256(f"{seed}:{r.id}".encode()).hexdigest(),
            )
            for row in ranked[:per_regime]:
                ex = by_id[row.id]
                b_rel = None if pd.isna(row.b_rel_index) else int(row.b_rel_index)
                picked.append(
                    WorkedExample(
                        dataset=dataset,
                        regime=regime,
                        id=ex.id,
                        native_type=ex.native_type,
                        question=ex.question,
                        bridge_title=ex.bridge.title,
                        bridge_sentences=ex.bridge.sentences,
                        b_rel_index=b_rel,
                        hop2_entity=ex.hop2_entity,
                        bridge_mention=bridge_entity_mention(ex, b_rel, rules),
                        target_title=ex.target.title,
                        p1=bool(row.p1),
                        p2=bool(row.p2),
                    )
                )
    return picked


def analyse_overview(
    samples: Mapping[str, Sample], manifest: Mapping[str, Any], cfg: OverviewConfig
) -> OverviewResult:
    """Notebook 01's tables from samples and the manifest; pure."""
    prepared, exclusions = prepared_counts(manifest, list(samples), cfg.split)
    all_examples = [ex for s in samples.values() for ex in s.examples]
    table = regime_table(all_examples, cfg.regime_rules)
    shares = regime_shares(
        pd.concat([table, table.assign(native_type="all")], ignore_index=True),
        by=("dataset", "native_type"),
    )
    return OverviewResult(
        config=cfg,
        prepared=prepared,
        exclusions=exclusions,
        hop_order=_count_frame(samples, "hop_order_rule"),
        relation_sources=_count_frame(samples, "relation_source"),
        native_types=_count_frame(samples, "native_type"),
        shares=shares,
        predicates=predicate_shares(table),
        worked=tuple(
            pick_worked_examples(
                all_examples,
                table,
                per_regime=cfg.worked_examples,
                seed=cfg.seed,
                rules=cfg.regime_rules,
            )
        ),
        samples={ds: sample_numbers(s) for ds, s in samples.items()},
        tiny_pools={
            ds: sum(cfg.retrieval.is_tiny_pool(ex) for ex in s.examples)
            for ds, s in samples.items()
        },
        item_sets={ds: item_set_counts(s.examples, cfg) for ds, s in samples.items()},
    )


def item_set_counts(examples: Sequence[Example], cfg: OverviewConfig) -> dict[str, Any]:
    """Per item set other than ``all``, what it keeps of ``examples`` and what each clause
    removes (:meth:`~regime_core.data.item_sets.ItemSetFilter.to_numbers`), with
    ``kept_not_tiny``: the items kept whose pool is not tiny under ``cfg``; pure."""
    out: dict[str, Any] = {}
    for item_set in ITEM_SETS:
        if item_set == ALL:
            continue
        chosen = filter_item_set(examples, item_set)
        numbers = chosen.to_numbers()
        numbers["kept_not_tiny"] = sum(not cfg.retrieval.is_tiny_pool(ex) for ex in chosen.kept)
        out[item_set] = numbers
    return out


def run_overview(
    cfg: OverviewConfig,
    context: Context | None = None,
    *,
    manifest: Mapping[str, Any] | None = None,
) -> OverviewResult:
    """Load the manifest (unless given) and the samples, and analyse them."""
    context = resolve(context)
    if manifest is None:
        from regime_core.data import load_manifest

        manifest = load_manifest(context.work)
    return analyse_overview(context.samples(cfg, cfg.datasets), manifest, cfg)
