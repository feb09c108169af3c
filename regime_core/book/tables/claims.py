"""Tables of the claims, built from a record's numbers (every number shown was read back from
``record.json``): T1, T2, T3, robustness and the data chapter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from regime_core.book import names
from regime_core.book.tables import (
    MISSING,
    Table,
    count,
    frac,
    interval,
    label,
    nested_counts,
    p_value,
    pct,
    r2,
    yes_no,
)


def _type_name(native_type: str) -> str:
    return "all types" if native_type == "all" else str(native_type)


def t1_table(numbers: Mapping[str, Any]) -> Table:
    """T1's per-cell table from a record's numbers: R² of both fits with CIs, σ, Spearman ρ."""
    rows = []
    for encoder, datasets in numbers["cells"].items():
        for dataset, types in datasets.items():
            for native_type, cell in types.items():
                row = {
                    "encoder": names.encoder(encoder),
                    "dataset": names.dataset(dataset),
                    "question type": _type_name(native_type),
                    "n": count(cell["n"]),
                }
                if cell["fitted"]:
                    for fit in ("probit", "logistic"):
                        row[f"R² {fit} [95% CI]"] = interval(
                            cell[f"r2_{fit}"], cell[f"r2_{fit}_lo"], cell[f"r2_{fit}_hi"], "r2"
                        )
                    row["σ (probit)"] = frac(cell["scale_probit"])
                    row["Spearman ρ"] = r2(cell.get("spearman_rho"))
                else:
                    row["R² probit [95% CI]"] = f"not fitted: {cell['reason']}"
                    row["R² logistic [95% CI]"] = MISSING
                    row["σ (probit)"] = MISSING
                    row["Spearman ρ"] = MISSING
                rows.append(row)
    return Table(pd.DataFrame(rows), align_left=("question type",))


#: T2's cells in page order (B-dominant, the two Q-dominant cells, neither).
T2_CELL_ORDER: tuple[str, ...] = ("P1-P2+", "P1+P2+", "P1+P2-", "P1-P2-")


def t2_table(
    numbers: Mapping[str, Any],
    comparison: str = "union_vs_q",
    *,
    levels: Sequence[str] | None = None,
) -> Table:
    """T2's per-cell table from a record's numbers, for the dataset ``levels`` given (default:
    all, the pooled ``"all"`` included; one level goes into the caption instead of a column).
    "significant" means Holm-adjusted p below the run's level in either direction; the intervals
    are Holm-adjusted too (the note says so), so each excludes zero exactly when it is."""
    level = float(numbers.get("significance", 0.05))
    k = numbers.get("k", 5)
    one_level = levels is not None and len(levels) == 1
    arms = list(reversed(comparison.split("_vs_", 1)))  # "union_vs_q" shows q, then union
    holm_levels = _holm_levels(numbers["cells"])
    rows = []
    for encoder, datasets in numbers["cells"].items():
        for dataset, cells in datasets.items():
            if levels is not None and dataset not in levels:
                continue
            order = [c for c in T2_CELL_ORDER if c in cells] + [
                c for c in cells if c not in T2_CELL_ORDER
            ]
            for cell_name in order:
                entry = cells[cell_name]
                c = entry[comparison]
                row = {"encoder": names.encoder(encoder)}
                if not one_level:
                    row["dataset"] = names.dataset(dataset)
                row.update(
                    {
                        "cell (regime)": (
                            f"{names.display('cell', cell_name)} ({names.regime(entry['regime'])})"
                        ),
                        "n": count(entry["n"]),
                        **{arm: pct(entry[f"hit_{arm}"]) for arm in arms},
                        **_holm_cells(
                            comparison,
                            c,
                            "diff",
                            holm_levels.get(f"{encoder}.{dataset}.{cell_name}.{comparison}"),
                        ),
                        "Holm p": p_value(c["p_holm"]),
                        "significant (either direction)": yes_no(c["p_holm"] < level),
                    }
                )
                rows.append(row)
    family = holm_family_text(numbers)
    where = f", {names.dataset(levels[0])}" if one_level and levels else ""
    return Table(
        pd.DataFrame(rows),
        caption=f"{names.comparison(comparison)} per cell, hit@{k}{where}",
        note=(
            f"{', '.join(arms)}: hit@{k} of each arm. p is the {_test_name()} p, Holm-adjusted "
            f"{family}. Each {HOLM_WORDS} is the score interval at the level Holm judged its "
            f"comparison (the level column), so it excludes zero exactly when significant = "
            f"Holm p < {level:g}, either direction; it is not a simultaneous interval, and the "
            "95% CI stands beside it."
        ),
    )


#: How each axis of a Holm family is named in words, and how its values are shown.
_FAMILY_AXES: tuple[tuple[str, str, Any], ...] = (
    ("comparison", "comparisons", lambda v: names.comparison(v)),
    ("encoder", "encoders", lambda v: names.encoder(v)),
    ("dataset", "dataset levels", lambda v: names.dataset(v)),
    ("cell", "cells", lambda v: names.display("cell", v)),
)


#: How the tables' notes name a Holm-level interval.
HOLM_WORDS = "Holm-level interval"


def _test_name() -> str:
    from regime_core.vocabulary import PAIRED_TEST, TEST_NAMES

    return TEST_NAMES[PAIRED_TEST]


def _holm_levels(family: Mapping[str, Any]) -> dict[str, float]:
    from regime_core.book.words import holm_levels

    return holm_levels(family)


def _holm_cells(
    comparison: str, c: Mapping[str, Any], effect: str, confidence: float | None
) -> dict[str, str]:
    """A comparison's Holm-level interval with its level, and its 95% CI where the record keeps
    it (the columns a reader compares with the paper)."""
    from regime_core.config import CONFIDENCE
    from regime_core.vocabulary import HOLM_LEVEL, interval_label

    name = names.comparison(comparison)
    out = {
        f"{name}, pp [{HOLM_LEVEL}]": interval(c[effect], c["ci_lo"], c["ci_hi"], unit=False),
        "level": "" if confidence is None else interval_label(confidence).removesuffix(" CI"),
    }
    if "ci_lo_unadjusted" in c and "ci_hi_unadjusted" in c:
        out[f"{name}, pp [{interval_label(CONFIDENCE)}]"] = interval(
            c[effect], c["ci_lo_unadjusted"], c["ci_hi_unadjusted"], unit=False
        )
    return out


def holm_family_text(numbers: Mapping[str, Any]) -> str:
    """The Holm family of a T2 or T3 record (its ``holm_family`` node), in words: how many tests
    were adjusted together, and which (every combination of the comparisons, encoders, dataset
    levels and, for T2, cells of the run); an adjusted p changes with any of them.

    >>> holm_family_text({"holm_family": {"tests": 4, "comparison": "union_vs_knockout",
    ...                   "encoder": "minilm, tfidf", "dataset": "musique, all"}})
    'together over the 4 tests of this run (comparison union − knockout × encoders MiniLM-L6, \
TF-IDF × dataset levels MuSiQue, pooled)'
    """
    family = numbers.get("holm_family")
    if not isinstance(family, Mapping):
        return "over every test of the run (this record does not list them)"
    parts = []
    for axis, plural, show in _FAMILY_AXES:
        if axis not in family:
            continue
        values = [v.strip() for v in str(family[axis]).split(",") if v.strip()]
        label = plural if len(values) > 1 else plural.split()[-1].removesuffix("s")
        if axis == "dataset" and len(values) == 1:
            label = "dataset level"
        parts.append(f"{label} {', '.join(show(v) for v in values)}")
    return f"together over the {count(family['tests'])} tests of this run ({' × '.join(parts)})"


def t3_table(numbers: Mapping[str, Any], comparison: str) -> Table:
    """One of T3's comparisons (``union_vs_knockout``, ``union_vs_entity``) from a record's
    numbers, datasets first and the pooled level last."""
    other = comparison.split("_vs_", 1)[1]
    holm_levels = _holm_levels(numbers["comparisons"])
    rows = []
    for encoder, datasets in numbers["comparisons"][comparison].items():
        order = [d for d in datasets if d != "all"] + (["all"] if "all" in datasets else [])
        for dataset in order:
            entry = datasets[dataset]
            row = {
                "encoder": names.encoder(encoder),
                "dataset": names.dataset(dataset),
                "n": count(entry["n"]),
                "union": pct(entry["hit_a"]),
                names.arm(other, short=True): pct(entry["hit_b"]),
                **_holm_cells(
                    comparison,
                    entry,
                    "drop",
                    holm_levels.get(f"{comparison}.{encoder}.{dataset}"),
                ),
                "Holm p": p_value(entry["p_holm"]),
            }
            if other == "knockout":
                row["in the paper's range"] = yes_no(entry["in_paper_range"])
            rows.append(row)
    return Table(
        pd.DataFrame(rows),
        note=(
            f"hit@k on the subset. p is the {_test_name()} p, Holm-adjusted "
            f"{holm_family_text(numbers)}. Each {HOLM_WORDS} is the score interval at the "
            "level Holm judged it (the level column), so it excludes zero exactly when Holm p < "
            "the run's level; it is not a simultaneous interval, and the 95% CI stands beside it."
        ),
    )


def robustness_table(numbers: Mapping[str, Any]) -> Table:
    """One row per claim from a robustness record: readings, holding, share, the most
    sensitive knob and the primary reading's verdict."""
    rows = [
        {
            "claim": claim_id,
            "primary verdict": s["primary_verdict"],
            "readings": count(s["readings"]),
            "holding": count(s["holding"]),
            "share holding": pct(s["share"]),
            "most sensitive knob": label(str(s["most_sensitive_knob"])),
        }
        for claim_id, s in numbers["claims"].items()
    ]
    return Table(pd.DataFrame(rows), align_left=("claim", "primary verdict"))


# --- The data chapter ----------------------------------------------------------------------------


def prepared_table(numbers: Mapping[str, Any]) -> Table:
    """Questions read, two-hop items kept and excluded per dataset (data_regimes record)."""
    rows = [
        {
            "dataset": names.dataset(ds),
            "dev questions read": count(entry["questions"]),
            "two-hop items kept": count(entry["two_hop"]),
            "excluded": count(entry["excluded"]),
        }
        for ds, entry in numbers["prepared"].items()
    ]
    return Table(pd.DataFrame(rows))


def exclusions_table(numbers: Mapping[str, Any]) -> Table:
    """Exclusions by reason per dataset (data_regimes record)."""
    reasons = {ds: entry.get("excluded_by_reason", {}) for ds, entry in numbers["prepared"].items()}
    return nested_counts(
        reasons, value_names=label, caption="Exclusions by reason", value_header="reason"
    )


def predicates_table(numbers: Mapping[str, Any]) -> Table:
    """P1 and P2 shares by dataset and question type (data_regimes record)."""
    rows = [
        {
            "dataset": names.dataset(ds),
            "question type": _type_name(t),
            "n": count(v["n"]),
            "P1": pct(v["p1_share"]),
            "P2": pct(v["p2_share"]),
        }
        for ds, types in numbers["predicates"].items()
        for t, v in types.items()
    ]
    return Table(pd.DataFrame(rows), align_left=("question type",))


def regimes_table(numbers: Mapping[str, Any]) -> Table:
    """Regime shares by dataset and question type (data_regimes record)."""
    from regime_core.data.regimes import REGIMES

    rows = [
        {
            "dataset": names.dataset(ds),
            "question type": _type_name(t),
            "n": count(v["n"]),
            **{names.regime(r): pct(v[r]["share"]) for r in REGIMES},
        }
        for ds, types in numbers["regimes"].items()
        for t, v in types.items()
    ]
    return Table(pd.DataFrame(rows), align_left=("question type",))


def worked_example_markdown(example: Any) -> str:
    """A worked example of the data chapter (``WorkedExample``) as Markdown, ``B_rel`` in bold
    and display names for the dataset and the regime."""
    return example.markdown(dataset_name=names.dataset, regime_name=names.regime)


# --- T3's other tables ---------------------------------------------------------------------------


def t3_hits_table(numbers: Mapping[str, Any]) -> Table:
    """hit@k of every arm on T3's subset, per encoder and dataset (T3 record)."""
    rows = [
        {
            "encoder": names.encoder(e),
            "dataset": names.dataset(d),
            **{names.arm(a, short=True): pct(v["hit"]) for a, v in arms.items()},
        }
        for e, by_ds in numbers["hits"].items()
        for d, arms in by_ds.items()
    ]
    return Table(pd.DataFrame(rows))


def t3_audit_table(numbers: Mapping[str, Any]) -> Table:
    """How often the entity arm's bridge mention equals the target's title (T3 record)."""
    rows = [
        {
            "encoder": names.encoder(e),
            "dataset": names.dataset(d),
            "questions in the subset": count(v["subset_n"]),
            "with a bridge mention": count(v["with_mention"]),
            "mention = target title": count(v["mention_is_title"]),
            "share": pct(v.get("mention_is_title_share")),
        }
        for e, by_ds in numbers["entity"].items()
        for d, v in by_ds.items()
    ]
    return Table(pd.DataFrame(rows))


def routing_data_table(data: Mapping[str, Any], *, k: int) -> Table:
    """Per dataset of ``load_routing_data``: questions used and available, comparison questions,
    and hit@k of q and union with the selected ``B_rel``."""
    rows = [
        {
            "dataset": names.dataset(name),
            "questions used": count(d.n),
            "available": count(d.sample.n_available),
            "comparison questions": count(int(d.table["parallel"].sum())),
            f"hit@{k}, q": pct(float(np.mean(d.hit_q))),
            f"hit@{k}, union": pct(float(np.mean(d.hit_union))),
        }
        for name, d in data.items()
    ]
    return Table(pd.DataFrame(rows))


def labels_table(result: Any) -> Table:
    """The router's training labels: the rule, how many items each label got, the ties, and the
    out-of-fold AUC of p(union) against the labels."""
    counts_ = result.label_counts
    rows = [
        {"": "label rule", "value": result.config.label_rule},
        {
            "": "labelled union (union ranked the hop-2 passage higher)",
            "value": count(counts_["union"]),
        },
        {"": "labelled q (q ranked it higher)", "value": count(counts_["q"])},
        {"": "excluded (ties, under the exclude rule)", "value": count(counts_["excluded"])},
        {"": "out-of-fold AUC of p(union) against the labels", "value": frac(result.auc)},
    ]
    return Table(pd.DataFrame(rows), align_left=("", "value"))
