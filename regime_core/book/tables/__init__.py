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

import dataclasses
import html
import math
import numbers as _numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from regime_core.book import names
from regime_core.runner.wording import format_number, interval_end

MISSING = "—"
_NUMERIC = re.compile(r"^[-+<]?\s?\d")


# --- Scalars -------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return not math.isfinite(float(value))
    return value is pd.NA or value is pd.NaT


def pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percentage: ``pct(0.6215)`` → ``'62.2%'``."""
    return MISSING if _missing(value) else format_number(float(value), "pct", digits)


def pp(value: Any, digits: int = 1, unit: bool = True) -> str:
    """A difference of fractions in signed percentage points: ``pp(-0.452)`` → ``'-45.2 pp'``."""
    if _missing(value):
        return MISSING
    text = format_number(float(value), "pp", digits)
    return text if unit else text.removesuffix(" pp")


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
    return MISSING if _missing(value) else format_number(float(value), "frac", digits)


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
        ends = (interval_end(float(v), unit=False) for v in (lo, hi))
        return f"{pp(diff, unit=unit)} [{', '.join(ends)}]"
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


# --- Tables --------------------------------------------------------------------------------------


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
) -> Table:
    """Format ``frame`` for a page.

    ``formats`` maps columns to a kind of :data:`FORMATS`; other columns are formatted by type
    (counts as integers, booleans as yes/no, floats with three decimals, the rest as text).
    ``columns`` renames headers (after formatting). A named index is kept as the first
    column(s). Identifier columns (:data:`regime_core.book.names.VALUE_COLUMNS`) show display
    names.
    """
    formats = dict(formats or {})
    data = frame.reset_index() if any(n is not None for n in frame.index.names) else frame
    out = pd.DataFrame(index=range(len(data)))
    for column in data.columns:
        series = data[column]
        if column in names.VALUE_COLUMNS:
            kind = names.VALUE_COLUMNS[column]
            series = pd.Series([MISSING if _missing(v) else names.display(kind, v) for v in series])
        kind = formats.get(str(column)) or _auto_kind(series, str(column))
        out[str(column)] = [FORMATS[kind](v) for v in series.tolist()]
    if columns:
        out = out.rename(columns=dict(columns))
    left = tuple(str(c) for c in out.columns if formats.get(str(c), "") == "str")
    return Table(out, caption=caption, align_left=left)


@dataclass(frozen=True)
class Borrowed:
    """Numbers a notebook repeats from another run's record: ``run`` (its id), ``what`` (which
    numbers, in the reader's words), ``source`` (the record's file) and ``config`` (the
    record's config; None: no record there, so nothing was repeated)."""

    run: str
    what: str
    source: str
    config: Mapping[str, Any] | None


def settings_table(
    config: Any,
    keys: Sequence[str],
    *,
    caption: str | None = None,
    borrowed: Sequence[Borrowed] = (),
) -> Table:
    """Selected fields of a run's config as a table (lists joined, names displayed), plus every
    field whose value differs from the run's default config (the config class built without
    arguments), each marked with its default; a note names every
    record ``borrowed`` from another run and its encoder, and says so plainly when that
    encoder is not this run's.

    For the settings a reader needs (datasets, encoders, sample size, resamples), never a
    one-line dump of the whole config; but no changed setting is left out.

    >>> from regime_core.experiments.t3_brel_knockout import T3Config
    >>> settings_table(T3Config(alpha=0.5), ["pool"]).frame.to_dict("records")[1]
    {'setting': 'alpha', 'value': '0.5', 'vs the default': 'changed (default 0.25)'}
    """
    base = type(config)()
    changed = _changed_fields(config, base)
    rows = []
    for key in [*keys, *(k for k in changed if k not in keys)]:
        value, was = attrgetter(key)(config), attrgetter(key)(base)
        leaf = key.rpartition(".")[2]
        mark = (
            "the default"
            if key not in changed
            else "changed from the default"
            if was is None  # None means "the run's own default": no value to name
            else f"changed (default {_setting_value(leaf, was)})"
        )
        rows.append(
            {
                "setting": key.replace(".", ": ").replace("_", " "),
                "value": _setting_value(leaf, value),
                "vs the default": mark,
            }
        )
    notes = [_borrowed_sentence(b, config) for b in borrowed]
    return Table(
        pd.DataFrame(rows, columns=["setting", "value", "vs the default"]),
        caption=caption,
        note=" ".join(notes) or None,
        align_left=("setting", "value", "vs the default"),
    )


def _setting_value(key: str, value: Any) -> str:
    """One config value as a settings row shows it (display names for datasets, encoders and
    pools; None as "all" for the sample size, else "default", the run's own)."""
    kinds = {
        "datasets": "dataset",
        "transfer_datasets": "dataset",
        "dataset": "dataset",
        "train_dataset": "dataset",
        "encoders": "encoder",
        "encoder": "encoder",
        "pool": "pool",
        "pools": "pool",
    }
    if value is None:
        return "all" if key == "sample_size" else "default"
    kind = kinds.get(key)
    items = list(value) if isinstance(value, list | tuple) else [value]
    return ", ".join(names.display(kind, v) if kind else _plain(v) for v in items)


def _comparable(value: Any) -> Any:
    """A value compared field by field: a list and a tuple of the same items are the same."""
    if isinstance(value, list | tuple):
        return tuple(_comparable(v) for v in value)
    return value


def _changed_fields(config: Any, default: Any) -> list[str]:
    """The fields of ``config`` whose value differs from ``default``'s, in field order; a
    nested config (a dataclass field) is compared field by field (dotted names), except a
    nested field that a top-level field of the same name mirrors (``predicate_names`` is the
    flat face of ``regime_rules.predicate_names``): it is shown once, at the top."""
    top = {f.name for f in dataclasses.fields(config)}

    def walk(ours: Any, theirs: Any, prefix: str) -> list[str]:
        found = []
        for f in dataclasses.fields(ours):
            a, b = getattr(ours, f.name), getattr(theirs, f.name)
            if prefix and f.name in top:
                continue
            if dataclasses.is_dataclass(a) and type(a) is type(b):
                found += walk(a, b, f"{prefix}{f.name}.")
            elif _comparable(a) != _comparable(b):
                found.append(prefix + f.name)
        return found

    return walk(config, default, "")


def _encoders_of(config: Any) -> tuple[str, ...]:
    """The encoder(s) a config (a config object or a record's config mapping) names."""
    read = config.get if isinstance(config, Mapping) else lambda k: getattr(config, k, None)
    for key in ("encoder", "encoders"):
        value = read(key)
        if value:
            return (value,) if isinstance(value, str) else tuple(value)
    return ()


def _borrowed_sentence(borrowed: Borrowed, config: Any) -> str:
    """What a note under the settings says of one borrowed record."""
    if borrowed.config is None:
        return (
            f"No record of run {borrowed.run} at {borrowed.source}, so this page shows none of "
            f"its numbers ({borrowed.what})."
        )
    theirs, ours = _encoders_of(borrowed.config), _encoders_of(config)
    named = ", ".join(names.encoder(e) for e in theirs) or "no encoder"
    sentence = (
        f"Taken from the record of run {borrowed.run} ({borrowed.source}), encoder {named}: "
        f"{borrowed.what}."
    )
    if theirs and ours and set(theirs) != set(ours):
        sentence += (
            f" That is not this run's encoder ({', '.join(names.encoder(e) for e in ours)}): "
            f"those numbers were measured with {named}, not with the encoder of this page."
        )
    return sentence


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, _numbers.Integral):
        return f"{int(value):,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def nested_counts(
    numbers: Mapping[str, Mapping[str, Any]],
    *,
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
        row.update({names.dataset(column): count(n) for column, n in counts.items()})
        rows.append(row)
    return Table(pd.DataFrame(rows), caption=caption, align_left=(value_header,))


def label(text: str) -> str:
    """A record key made readable: ``"hop_order_rules"`` → ``"hop order rules"``."""
    return text.replace("_", " ")


# The ready-made tables, one module per part of the book, all importable from here.
from regime_core.book.tables.claims import (  # noqa: E402, F401
    exclusions_table,
    labels_table,
    predicates_table,
    prepared_table,
    regimes_table,
    robustness_table,
    routing_data_table,
    t1_table,
    t2_table,
    t3_audit_table,
    t3_hits_table,
    t3_table,
    worked_example_markdown,
)
from regime_core.book.tables.router import (  # noqa: E402, F401
    ablation_summary,
    alpha_rule_table,
    breakdown_table,
    headline_table,
    latency_table,
    oracle_gap_table,
    pool_invariance_table,
    router_summary,
    routing_table,
    selection_routed_table,
    selection_table,
    selector_cost_table,
    selector_table,
    soft_table,
    transfer_comparison_table,
    transfer_table,
)
from regime_core.book.tables.teaching import (  # noqa: E402, F401
    demo_table,
    hit_table,
)
