"""The teaching tables: the demo and hit@k summaries."""

from __future__ import annotations

from typing import Any

import pandas as pd

from regime_core.book import names
from regime_core.book.tables import (
    Table,
    pct,
    pp,
    table,
)


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
    """A teaching summary (``regime, arm, n, hit@1, hit@5`` and knob columns) formatted. In a
    knockout summary, ``union`` built from the bridge with its relation sentence removed is
    the knockout arm, and is labelled so."""
    if "relation_sentence" in summary.columns and "arm" in summary.columns:
        summary = summary.copy()
        removed = (summary["relation_sentence"] == "removed") & (summary["arm"] == "union")
        summary.loc[removed, "arm"] = "knockout"
    formats = {c: "pct" for c in summary.columns if str(c).startswith("hit@")}
    formats.update({c: "g" for c in ("alpha", "distractor_similarity") if c in summary.columns})
    columns = {
        "relation_sentence": "relation sentence",
        "distractor_similarity": "distractor similarity",
        "alpha": "α",
    }
    return table(summary, formats, columns=columns, caption=caption)
