"""Tables for the executed pages: numbers formatted for a reader, names from one table.

Every notebook shows its numbers through :func:`table` (or one of the ready-made tables below, built
from a record's numbers), so every page writes them the same way:

========  =======================================================  =======================
kind      rule                                                     example
========  =======================================================  =======================
``pct``   a fraction as a percentage, one decimal                  0.6215 -> ``62.2%``
``pp``    a difference of fractions in signed percentage points    0.1234 -> ``+12.3 pp``
``p``     a p-value with two significant digits                    0.0213 -> ``0.021``
``int``   a count, an integer with thousands separators            485.0 -> ``485``
``frac``  any real with three decimals                             0.1266 -> ``0.127``
``r2``    a coefficient of determination, two decimals             0.912 -> ``0.91``
``yes``   a boolean as yes or no                                   True -> ``yes``
``g``     a knob value, shortest form                              0.250 -> ``0.25``
========  =======================================================  =======================

Missing values show as an em dash. Columns holding identifiers (``dataset``, ``encoder``,
``regime``, ``arm``...) are shown under their display names (:mod:`regime_core.book.names`).

>>> table(pd.DataFrame({"dataset": ["musique"], "n": [192.0], "hit": [0.5]}),
...       {"hit": "pct"}).frame.to_dict("records")
[{'dataset': 'MuSiQue', 'n': '192', 'hit': '50.0%'}]
"""

from __future__ import annotations

import html
import math
import numbers as _numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from regime_core.book import names

MISSING = "—"
_NUMERIC = re.compile(r"^[-+<]?\s?\d")


# --------------------------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return not math.isfinite(float(value))
    return value is pd.NA or value is pd.NaT


def _fixed(x: float, digits: int, signed: bool = False) -> str:
    text = f"{x:.{digits}f}"
    if float(text) == 0.0:
        return f"{0.0:.{digits}f}"  # never "-0.0" or "+0.0"
    return f"+{text}" if signed and x > 0 else text


def pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percentage: ``pct(0.6215)`` → ``'62.2%'``."""
    if _missing(value):
        return MISSING
    return f"{_fixed(100.0 * float(value), digits)}%"


def pp(value: Any, digits: int = 1, unit: bool = True) -> str:
    """A difference of fractions in signed percentage points: ``pp(-0.452)`` → ``'-45.2 pp'``."""
    if _missing(value):
        return MISSING
    text = _fixed(100.0 * float(value), digits, signed=True)
    return f"{text} pp" if unit else text


def p_value(value: Any) -> str:
    """A p-value with two significant digits, floored at 0.001.

    >>> p_value(0.0213), p_value(0.25), p_value(1.0), p_value(0.0004)
    ('0.021', '0.25', '1.0', '< 0.001')
    """
    if _missing(value):
        return MISSING
    x = float(value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"a p-value lies in [0, 1], got {x!r}")
    if x < 0.001:
        return "< 0.001"
    return f"{x:#.2g}"


def count(value: Any) -> str:
    """A count: ``count(485.0)`` → ``'485'``; a non-integral value is an error."""
    if _missing(value):
        return MISSING
    x = float(value)
    if x != round(x):
        raise ValueError(f"a count must be a whole number, got {value!r}")
    return f"{round(x):,}"


def frac(value: Any, digits: int = 3) -> str:
    if _missing(value):
        return MISSING
    return _fixed(float(value), digits)


def r2(value: Any) -> str:
    return frac(value, 2)


def yes_no(value: Any) -> str:
    if _missing(value):
        return MISSING
    return "yes" if bool(value) else "no"


def interval(diff: Any, lo: Any, hi: Any, kind: str = "pp", *, unit: bool = True) -> str:
    """An estimate with its CI: ``interval(0.12, 0.04, 0.2)`` → ``'+12.0 pp [+4.0, +20.0]'``
    (``unit=False``: ``'+12.0 [+4.0, +20.0]'``, for a column whose header names the unit)."""
    if kind == "pp":
        if _missing(diff):
            return MISSING
        return f"{pp(diff, unit=unit)} [{pp(lo, unit=False)}, {pp(hi, unit=False)}]"
    fmt = FORMATS[kind]
    return f"{fmt(diff)} [{fmt(lo)}, {fmt(hi)}]"


FORMATS: dict[str, Callable[[Any], str]] = {
    "pct": pct,
    "pp": pp,
    "p": p_value,
    "int": count,
    "frac": frac,
    "r2": r2,
    "yes": yes_no,
    "g": lambda v: MISSING if _missing(v) else f"{float(v):g}",
    "str": lambda v: MISSING if _missing(v) else str(v),
}

#: Columns that hold counts wherever they appear (shown as integers even when stored as floats).
COUNT_COLUMNS: frozenset[str] = frozenset(
    {"n", "questions", "available", "parallel", "two_hop", "excluded", "readings", "holding"}
)


def fmt(value: Any, kind: str) -> str:
    """``value`` formatted as ``kind`` (a key of :data:`FORMATS`)."""
    if kind not in FORMATS:
        raise ValueError(f"unknown format {kind!r}; known: {', '.join(FORMATS)}")
    return FORMATS[kind](value)


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A formatted table: every cell a string, an optional caption and a note below.

    In a notebook it renders as a plain HTML table (no index, scrollable on a phone); as text it
    prints aligned columns.
    """

    frame: pd.DataFrame
    caption: str | None = None
    note: str | None = None
    align_left: tuple[str, ...] = field(default=())

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in self.frame.columns)
        rows = []
        for values in self.frame.itertuples(index=False):
            cells = []
            for column, value in zip(self.frame.columns, values, strict=True):
                left = column in self.align_left
                # numbers and intervals never break; words may, so a table fits its column
                numeric = bool(_NUMERIC.match(str(value)))
                style = (
                    ' style="text-align: left"'
                    if left
                    else (' style="white-space: nowrap"' if numeric else "")
                )
                cells.append(f"<td{style}>{html.escape(str(value))}</td>")
            rows.append(f"<tr>{''.join(cells)}</tr>")
        caption = (
            f"<caption>{html.escape(self.caption)}</caption>" if self.caption is not None else ""
        )
        note = (
            f'<p class="regime-table-note"><small>{html.escape(self.note)}</small></p>'
            if self.note
            else ""
        )
        return (
            '<div class="regime-table" style="overflow-x: auto">'
            f'<table class="table">{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{note}</div>"
        )

    def __repr__(self) -> str:
        text = self.frame.to_string(index=False)
        parts = [self.caption, text, self.note]
        return "\n".join(p for p in parts if p)


def _name_values(frame: pd.DataFrame, skip: Sequence[str]) -> pd.DataFrame:
    for column, kind in names.VALUE_COLUMNS.items():
        if column in frame.columns and column not in skip:
            frame[column] = [
                MISSING if _missing(v) else names.display(kind, v) for v in frame[column]
            ]
    return frame


def _auto_kind(series: pd.Series, column: str) -> str:
    if column in COUNT_COLUMNS or pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_bool_dtype(series):
        return "yes"
    if pd.api.types.is_float_dtype(series):
        return "frac"
    return "str"


def table(
    frame: pd.DataFrame,
    formats: Mapping[str, str] | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    caption: str | None = None,
    note: str | None = None,
    index: bool | None = None,
    keep_names: Sequence[str] = (),
) -> Table:
    """Format ``frame`` for a page.

    ``formats`` maps columns to a kind of :data:`FORMATS`; other columns are formatted by type
    (counts as integers, booleans as yes/no, floats with three decimals, the rest as text).
    ``columns`` renames headers (after formatting). A named index is kept as the first
    column(s) (``index=True`` forces it, ``False`` drops it). Identifier columns
    (:data:`regime_core.book.names.VALUE_COLUMNS`) show display names, except ``keep_names``.
    """
    formats = dict(formats or {})
    data = frame.copy()
    named_index = any(n is not None for n in data.index.names)
    if index or (index is None and named_index):
        data = data.reset_index()
    data = _name_values(data, keep_names)
    out = pd.DataFrame(index=range(len(data)))
    for column in data.columns:
        series = data[column]
        kind = formats.get(str(column)) or _auto_kind(series, str(column))
        out[str(column)] = [fmt(v, kind) for v in series.tolist()]
    if columns:
        out = out.rename(columns=dict(columns))
    left = tuple(str(c) for c in out.columns if formats.get(str(c), "") == "str")
    return Table(out, caption=caption, note=note, align_left=left)


def records_table(
    rows: Sequence[Mapping[str, Any]],
    formats: Mapping[str, str] | None = None,
    **options: Any,
) -> Table:
    """:func:`table` over a list of row mappings."""
    return table(pd.DataFrame(list(rows)), formats, **options)


def settings_table(config: Any, keys: Sequence[str], *, caption: str | None = None) -> Table:
    """Selected fields of a run's config as a two-column table (lists joined, names displayed).

    For the settings a reader needs (datasets, encoders, sample size, resamples), never a
    one-line dump of the whole config."""
    kinds = {"datasets": "dataset", "transfer_datasets": "dataset", "dataset": "dataset",
             "train_dataset": "dataset", "encoders": "encoder", "encoder": "encoder",
             "pool": "pool", "pools": "pool"}  # fmt: skip
    rows = []
    for key in keys:
        value = getattr(config, key)
        kind = kinds.get(key)
        items = list(value) if isinstance(value, list | tuple) else [value]
        if value is None:
            shown = ["all" if key == "sample_size" else "default"]
        else:
            shown = [names.display(kind, v) if kind else _plain(v) for v in items]
        rows.append({"setting": key.replace("_", " "), "value": ", ".join(shown)})
    return Table(
        pd.DataFrame(rows, columns=["setting", "value"]),
        caption=caption,
        align_left=("setting", "value"),
    )


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, _numbers.Integral):
        return f"{int(value):,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def nested_counts(
    numbers: Mapping[str, Mapping[str, Any]],
    *,
    index_name: str = "dataset",
    value_names: Callable[[str], str] | None = None,
    caption: str | None = None,
    value_header: str = "",
) -> Table:
    """``{dataset: {value: count}}`` as a table with one row per value and one column per
    dataset (display names), 0 where a dataset lacks a value: narrow enough for a phone."""
    frame = pd.DataFrame(numbers).fillna(0)
    rows = []
    for value, counts in frame.iterrows():
        row = {value_header: value_names(str(value)) if value_names else str(value)}
        for column, n in counts.items():
            key = names.display(index_name, column) if index_name in names.VALUE_COLUMNS else column
            row[str(key)] = count(n)
        rows.append(row)
    return Table(pd.DataFrame(rows), caption=caption, align_left=(value_header,))


def label(text: str) -> str:
    """A record key made readable: ``"hop_order_rules"`` → ``"hop order rules"``."""
    return text.replace("_", " ")


# --------------------------------------------------------------------------------------------
# Tables built from a record's numbers (every number shown was read back from record.json)
# --------------------------------------------------------------------------------------------


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
    "significant" means Holm-adjusted p below the run's level in either direction; the CIs are
    unadjusted (the note says so)."""
    level = float(numbers.get("significance", 0.05))
    k = numbers.get("k", 5)
    one_level = levels is not None and len(levels) == 1
    arms = list(reversed(comparison.split("_vs_", 1)))  # "union_vs_q" shows q, then union
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
                            f"{names.cell(cell_name)} ({names.regime(entry['regime'])})"
                        ),
                        "n": count(entry["n"]),
                        **{arm: pct(entry[f"hit_{arm}"]) for arm in arms},
                        f"{names.comparison(comparison)}, pp [95% CI]": interval(
                            c["diff"], c["ci_lo"], c["ci_hi"], unit=False
                        ),
                        "Holm p": p_value(c["p_holm"]),
                        "significant (either direction)": yes_no(c["p_holm"] < level),
                    }
                )
                rows.append(row)
    tests = numbers.get("tests")
    family = f"over all {tests} tests of the run" if tests else "over every test of the run"
    where = f", {names.dataset(levels[0])}" if one_level and levels else ""
    return Table(
        pd.DataFrame(rows),
        caption=f"{names.comparison(comparison)} per cell, hit@{k}{where}",
        note=(
            f"{', '.join(arms)}: hit@{k} of each arm. CIs are 95% paired bootstrap intervals, "
            f"not adjusted for multiple testing; p is the exact McNemar p, Holm-adjusted "
            f"{family}; significant = Holm p < {level:g}, either direction."
        ),
    )


def t3_table(numbers: Mapping[str, Any], comparison: str | None = None) -> Table:
    """T3's comparisons from a record's numbers: one comparison (``union_vs_knockout``,
    ``union_vs_entity``) per table, datasets first and the pooled level last; all of them
    when ``comparison`` is None."""
    comparisons = [comparison] if comparison else list(numbers["comparisons"])
    rows = []
    for name in comparisons:
        other = name.split("_vs_", 1)[1]
        for encoder, datasets in numbers["comparisons"][name].items():
            order = [d for d in datasets if d != "all"] + (["all"] if "all" in datasets else [])
            for dataset in order:
                entry = datasets[dataset]
                row = {
                    "encoder": names.encoder(encoder),
                    "dataset": names.dataset(dataset),
                    "n": count(entry["n"]),
                    "union": pct(entry["hit_a"]),
                    (names.arm(other, short=True) if comparison else "other arm"): pct(
                        entry["hit_b"]
                    ),
                    (
                        f"{names.comparison(name)}, pp [95% CI]"
                        if comparison
                        else "drop, pp [95% CI]"
                    ): interval(entry["drop"], entry["ci_lo"], entry["ci_hi"], unit=False),
                    "Holm p": p_value(entry["p_holm"]),
                }
                if other == "knockout" or comparison is None:
                    in_range = entry["in_paper_range"] if other == "knockout" else None
                    row["in the paper's range"] = yes_no(in_range)
                if comparison is None:
                    row = {"comparison": names.comparison(name), **row}
                rows.append(row)
    return Table(
        pd.DataFrame(rows),
        note=(
            "hit@k on the subset. CIs are 95% paired bootstrap intervals (unadjusted); p is the "
            "exact McNemar p, Holm-adjusted over every test of the run."
        ),
    )


def nested_counts_table(
    numbers: Mapping[str, Any], index_name: str = "dataset", column_name: str = "value"
) -> Table:
    """``{dataset: {value: count}}`` as a table (0 where a value is absent)."""
    return nested_counts(numbers, index_name=index_name, value_names=label, caption=None)


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


# --------------------------------------------------------------------------------------------
# The router, transfer and ablation tables
# --------------------------------------------------------------------------------------------

POLICY_COLUMNS: tuple[str, ...] = ("q", "union", "routed", "oracle")


def routing_table(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    k: int,
    versus: str = "q",
    extra: Sequence[str] = ("share_union",),
    caption: str | None = None,
    headers: Mapping[str, str] | None = None,
    policies: Sequence[str] = POLICY_COLUMNS,
) -> Table:
    """Rows of routing outcomes (the ablation tables' columns ``n, hit_<policy>, delta, ci_lo,
    ci_hi, p_value, oracle_gap, share_union``) formatted: ``keys`` first (display names; rows
    grouped by the keys in their order of appearance), hit@k per policy, routed − q with its CI
    and p, then ``extra`` columns."""
    shown_headers = {"alpha": "α", "native_type": "question type", **(headers or {})}
    ordered = frame.copy()
    for key in reversed(keys):
        rank = {v: i for i, v in enumerate(dict.fromkeys(ordered[key]))}
        ordered = ordered.sort_values(key, key=lambda s, r=rank: s.map(r), kind="stable")
    records = ordered.to_dict("records")
    sizes = {row["n"] for row in records if "n" in row}
    one_size = len(sizes) == 1 and len(records) > 1
    show_degenerate = "degenerate" in extra and any(row.get("degenerate") for row in records)
    rows = []
    has_test = False
    for row in records:
        out: dict[str, str] = {}
        for key in keys:
            kind = names.VALUE_COLUMNS.get(key)
            value = row[key]
            shown = names.display(kind, value) if kind else _plain(value)
            out[shown_headers.get(key, label(key))] = shown
        if "n" in row and not one_size:
            out["n"] = count(row["n"])
        for policy in policies:
            if f"hit_{policy}" in row:
                out[policy] = pct(row[f"hit_{policy}"])
        if versus == "q" and "delta" in row:
            has_test = True
            out["routed − q, pp [95% CI]"] = (
                interval(row["delta"], row["ci_lo"], row["ci_hi"], unit=False)
                if "ci_lo" in row
                else pp(row["delta"], unit=False)
            )
            out["p"] = p_value(row.get("p_value"))
        for column in extra:
            if column == "share_union" and column in row:
                out["sent to union"] = pct(row[column])
            elif column == "oracle_gap" and column in row:
                out["oracle − routed"] = pp(row[column])
            elif column == "degenerate" and show_degenerate:
                out["one label class"] = yes_no(row[column])
        rows.append(out)
    described = {
        "q": "always-q",
        "union": "always-union",
        "routed": "the router",
        "oracle": "the oracle (the better of q and union per question)",
    }
    shown = [p for p in policies if p in described]
    note = f"{', '.join(shown)}: hit@{k} of {', '.join(described[p] for p in shown)}."
    if one_size:
        note += f" Every row has n = {count(next(iter(sizes)))} questions."
    if has_test:
        note += " CI: 95% paired bootstrap; p: exact McNemar."
    if show_degenerate:
        note += " One label class: every label was the same, so the router is constant."
    return Table(pd.DataFrame(rows), caption=caption, note=note)


def breakdown_table(frame: pd.DataFrame, by: str, *, k: int) -> Table:
    """:func:`regime_core.experiments.router_train.breakdown` formatted."""
    return routing_table(frame, [by], k=k, extra=("share_union",))


def selector_table(quality: Any) -> Table:
    """How often the selector, the first sentence and a random sentence pick the gold
    ``B_rel`` (all relation sources)."""
    agreement = quality.agreement[quality.agreement["relation_source"] == "all"]
    rows = [
        {
            "dataset": names.dataset(row.dataset),
            "items with a gold B_rel": count(row.n),
            "selector": pct(row.selected),
            "first sentence": pct(row.first_sentence),
            "random sentence": pct(row.chance),
        }
        for row in agreement.itertuples(index=False)
    ]
    return Table(pd.DataFrame(rows))


def selector_cost_table(quality: Any, *, k: int) -> Table:
    """What the selector's choice costs: union hit@k with the selected against the gold
    ``B_rel``, on the items whose gold sentence exists."""
    rows = [
        {
            "dataset": names.dataset(name),
            "n": count(c.n),
            "union, selected B_rel": pct(c.mean_a),
            "union, gold B_rel": pct(c.mean_b),
            "selected − gold [95% CI]": interval(c.diff, c.ci_lo, c.ci_hi),
            "p": p_value(c.p_value),
        }
        for name, c in quality.retrieval.items()
    ]
    return Table(
        pd.DataFrame(rows),
        note=f"hit@{k}. CI: 95% paired bootstrap; p: exact McNemar.",
    )


def _comparison_row(entry: Mapping[str, Any]) -> tuple[str, str]:
    return interval(entry["diff"], entry["ci_lo"], entry["ci_hi"]), p_value(entry["p_value"])


def router_summary(record: Mapping[str, Any]) -> Table:
    """The router's training-set outcome from notebook router_train's record."""
    train = record["numbers"]["train"]
    outcome = train["outcome"]
    k = next(key for key in outcome if key.startswith("hit@")).split("_")[0]
    rows = [
        {"": f"{k}, always q", "value": pct(outcome[f"{k}_q"]), "p": ""},
        {"": f"{k}, always union", "value": pct(outcome[f"{k}_union"]), "p": ""},
        {"": f"{k}, routed (cross-fitted)", "value": pct(outcome[f"{k}_routed"]), "p": ""},
        {"": f"{k}, oracle", "value": pct(outcome[f"{k}_oracle"]), "p": ""},
    ]
    for name, text in (
        ("routed_vs_q", "routed − always q [95% CI]"),
        ("routed_vs_union", "routed − always union [95% CI]"),
    ):
        shown, p = _comparison_row(outcome[name])
        rows.append({"": text, "value": shown, "p": p})
    rows.append({"": "oracle − routed", "value": pp(outcome["oracle_vs_routed"]["diff"]), "p": ""})
    rows.append({"": "questions sent to union", "value": pct(outcome["share_union"]), "p": ""})
    return Table(
        pd.DataFrame(rows),
        caption=(
            f"{names.dataset(train['dataset'])}: {count(train['n'])} questions "
            f"({count(train['n_parallel'])} comparison questions, included)"
        ),
        note="CI: 95% paired bootstrap; p: exact McNemar.",
        align_left=("",),
    )


def transfer_table(result: Any) -> Table:
    """hit@k of the four policies on each dataset the frozen router never saw."""
    rows = [
        {
            "dataset": names.dataset(name),
            "n": count(outcome.n),
            **{p: pct(float(np.mean(outcome.hits[p]))) for p in POLICY_COLUMNS},
            "sent to union": pct(float(np.mean(outcome.routed_union))),
        }
        for name, outcome in result.outcomes.items()
    ]
    return Table(
        pd.DataFrame(rows),
        note=(
            f"hit@{result.config.k} of always-q, always-union, the frozen router and the oracle "
            "(the better of q and union per question)."
        ),
    )


def transfer_comparison_table(result: Any) -> Table:
    """The frozen router against always-q and always-union, and the no-regret check."""
    rows = []
    for name, outcome in result.outcomes.items():
        c = outcome.comparison("routed_vs_q")
        u = outcome.comparison("routed_vs_union")
        rows.append(
            {
                "dataset": names.dataset(name),
                "routed − q [95% CI]": interval(c.diff, c.ci_lo, c.ci_hi),
                "p (vs q)": p_value(c.p_value),
                "routed − union [95% CI]": interval(u.diff, u.ci_lo, u.ci_hi),
                "p (vs union)": p_value(u.p_value),
                "no regret": yes_no(result.no_regret(name)),
            }
        )
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Differences in hit@{result.config.k}. CI: 95% paired bootstrap; p: exact "
            "McNemar. No regret: the router is not significantly worse than always-q."
        ),
    )


def headline_table(record: Mapping[str, Any], datasets: Sequence[str]) -> Table:
    """The paper's headline table from notebook zero_shot_transfer's record: the training set
    (cross-fitted, from notebook router_train) and each zero-shot dataset, beside the paper."""
    numbers = record["numbers"]
    rows = []
    entries: list[tuple[str, str, Mapping[str, Any], Mapping[str, Any], float, Any]] = []
    if "train" in numbers:
        train = numbers["train"]
        entries.append(
            (
                train["dataset"],
                "cross-fitted",
                train,
                train["vs_union"],
                train["oracle_gap"],
                train["n"],
            )
        )
    for name in datasets:
        t = numbers["transfer"][name]
        entries.append(
            (
                name,
                "zero-shot",
                t["routed_vs_q"],
                t["routed_vs_union"],
                t["oracle_vs_routed"]["diff"],
                t["n"],
            )
        )
    paper = numbers["paper"]
    for name, setting, versus_q, versus_union, gap, n in entries:
        rows.append(
            {
                "dataset": names.dataset(name),
                "setting": setting,
                "n": count(n),
                "routed − q [95% CI]": interval(
                    versus_q["diff"], versus_q["ci_lo"], versus_q["ci_hi"]
                ),
                "p": p_value(versus_q["p_value"]),
                "paper": f"{pp(paper[name]['delta'])} ({paper[name]['p']})"
                if name in paper
                else MISSING,
                "routed − always union [95% CI]": interval(
                    versus_union["diff"], versus_union["ci_lo"], versus_union["ci_hi"]
                ),
                "oracle − routed": pp(gap),
            }
        )
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Differences in hit@5, percentage points. The paper's oracle gap is about "
            f"{pp(paper['oracle_gap'])}. CI: 95% paired bootstrap; p: exact McNemar."
        ),
    )


# --------------------------------------------------------------------------------------------
# Teaching
# --------------------------------------------------------------------------------------------


def demo_table(demo: Any) -> Table:
    """``regime demo``'s table (a :class:`regime_core.teaching.demo.DemoResult`): hit@1 and
    hit@5 per policy and regime, the regime sizes in the headers."""
    wide = demo.wide()
    sizes = demo.table.drop_duplicates("regime").set_index("regime")["n"]
    rows = []
    for policy, values in wide.iterrows():
        row = {"query": names.arm(policy)}
        for (regime, metric), value in values.items():
            row[f"{names.regime(regime)} (n = {int(sizes[regime])}), {metric}"] = pct(value)
        rows.append(row)
    effects = "; ".join(
        f"{names.regime(regime)}: " + ", ".join(f"{pp(v)} {m}" for m, v in deltas.items())
        for regime, deltas in demo.effect.items()
    )
    note = f"union − q: {effects}. Router: {demo.router_source}."
    if demo.share_union:
        shares = ", ".join(f"{names.regime(r)} {pct(v)}" for r, v in demo.share_union.items())
        note += f" The router sends to union: {shares}."
    return Table(pd.DataFrame(rows), note=note, align_left=("query",))


def hit_table(summary: pd.DataFrame, caption: str | None = None) -> Table:
    """A teaching summary (``regime, arm, n, hit@1, hit@5`` and knob columns) formatted."""
    formats = {c: "pct" for c in summary.columns if str(c).startswith("hit@")}
    formats.update({c: "g" for c in ("alpha", "distractor_similarity") if c in summary.columns})
    columns = {
        "relation_sentence": "relation sentence",
        "distractor_similarity": "distractor similarity",
        "alpha": "α",
    }
    return table(summary, formats, columns=columns, caption=caption)


# --------------------------------------------------------------------------------------------
# The data chapter
# --------------------------------------------------------------------------------------------


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


def markdown_text(text: str) -> str:
    """``text`` with the characters Markdown would read as formatting escaped."""
    escaped = html.escape(str(text), quote=False)
    for ch in ("\\", "*", "_", "`", "[", "]", "#", "|"):
        escaped = escaped.replace(ch, "\\" + ch)
    return escaped


def worked_example_markdown(example: Any) -> str:
    """A worked example of the data chapter (``WorkedExample``) as Markdown, ``B_rel`` in bold
    and display names for the dataset."""
    sentences = [
        f"**{markdown_text(s)}**" if i == example.b_rel_index else markdown_text(s)
        for i, s in enumerate(example.bridge_sentences)
    ]
    mention = example.bridge_mention if example.bridge_mention is not None else "not in the bridge"
    return "\n".join(
        [
            f"**{names.regime(example.regime)}** · {names.dataset(example.dataset)} · "
            f"{markdown_text(example.native_type)} · P1 {'yes' if example.p1 else 'no'}, "
            f"P2 {'yes' if example.p2 else 'no'}",
            "",
            f"- Question: {markdown_text(example.question)}",
            f"- Bridge ({markdown_text(example.bridge_title)}): " + " ".join(sentences),
            f"- Hop-2 entity: {markdown_text(example.hop2_entity)}; as the bridge writes it: "
            f"{markdown_text(mention)}; target passage: {markdown_text(example.target_title)}",
        ]
    )


# --------------------------------------------------------------------------------------------
# T3's other tables
# --------------------------------------------------------------------------------------------


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
        {"": "dropped (ties, under the drop rule)", "value": count(counts_["dropped"])},
        {"": "out-of-fold AUC of p(union) against the labels", "value": frac(result.auc)},
    ]
    return Table(pd.DataFrame(rows), align_left=("", "value"))


# --------------------------------------------------------------------------------------------
# Ablations
# --------------------------------------------------------------------------------------------


def soft_table(soft: pd.DataFrame, *, k: int) -> Table:
    """Soft routing (``AblationResult.soft``): hit@k of q, the hard router and soft routing, and
    soft − q, soft − routed with CIs and p."""
    rows = []
    for row in soft.to_dict("records"):
        rows.append(
            {
                "dataset": names.dataset(row["dataset"]),
                "q": pct(row["hit_q"]),
                "routed": pct(row["hit_routed"]),
                "soft": pct(row["hit_soft"]),
                "soft − q [95% CI]": interval(
                    row["soft_vs_q_diff"], row["soft_vs_q_ci_lo"], row["soft_vs_q_ci_hi"]
                ),
                "p (vs q)": p_value(row["soft_vs_q_p_value"]),
                "soft − routed [95% CI]": interval(
                    row["soft_vs_routed_diff"],
                    row["soft_vs_routed_ci_lo"],
                    row["soft_vs_routed_ci_hi"],
                ),
                "p (vs routed)": p_value(row["soft_vs_routed_p_value"]),
            }
        )
    return Table(
        pd.DataFrame(rows),
        note=f"hit@{k}. CI: 95% paired bootstrap; p: exact McNemar.",
    )


def oracle_gap_table(frame: pd.DataFrame, *, k: int) -> Table:
    """What a perfect q/union choice would add over the router (``AblationResult.oracle_gap``)."""
    rows = [
        {
            "dataset": names.dataset(row["dataset"]),
            "n": count(row["n"]),
            "routed": pct(row["hit_routed"]),
            "oracle": pct(row["hit_oracle"]),
            "oracle − routed [95% CI]": interval(
                row["oracle_gap"], row["oracle_gap_ci_lo"], row["oracle_gap_ci_hi"]
            ),
        }
        for row in frame.to_dict("records")
    ]
    return Table(pd.DataFrame(rows), note=f"hit@{k}. CI: 95% paired bootstrap.")


def ablation_summary(record: Mapping[str, Any]) -> Table:
    """One row per dataset from an ablations record: routed − q at the main α, soft − q, the
    oracle gap, and routed − q under each pool and encoder that ran."""
    numbers = record["numbers"]
    rows = []
    for name, entry in numbers["oracle_gap"].items():
        soft = numbers["soft"][name]
        row = {
            "dataset": names.dataset(name),
            "routed − q": f"{pp(entry['delta'])} (p {p_value(entry['p_value'])})",
            "soft − q": f"{pp(soft['soft_vs_q_diff'])} (p {p_value(soft['soft_vs_q_p_value'])})",
            "oracle − routed": pp(entry["oracle_gap"]),
        }
        for pool_name, by_ds in numbers["pools"].items():
            if name in by_ds:
                c = by_ds[name]
                row[f"routed − q, {names.pool(pool_name)}"] = (
                    f"{pp(c['delta'])} (p {p_value(c['p_value'])})"
                )
        for enc, by_ds in numbers["encoders"].items():
            if name in by_ds:
                c = by_ds[name]
                row[f"routed − q, {names.encoder(enc)}"] = (
                    f"{pp(c['delta'])} (p {p_value(c['p_value'])})"
                )
        rows.append(row)
    return Table(
        pd.DataFrame(rows),
        note="Differences in hit@5, percentage points, with the exact McNemar p.",
    )
