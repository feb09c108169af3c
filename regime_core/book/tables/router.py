"""The router, transfer and ablation tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.book import names
from regime_core.book.tables import (
    MISSING,
    Table,
    _plain,
    count,
    interval,
    label,
    p_value,
    pct,
    pp,
    yes_no,
)

POLICY_COLUMNS: tuple[str, ...] = ("q", "union", "routed", "oracle")

#: What every routing table's interval and p are: one procedure, so they cannot disagree.
EXACT_NOTE = (
    "CI and p: McNemar's test, one procedure (the CI excludes zero exactly when "
    f"p < {round(1 - config.CONFIDENCE, 10):g})."
)


def routing_table(
    frame: pd.DataFrame,
    keys: Sequence[str],
    *,
    k: int,
    extra: Sequence[str] = ("share_union",),
    headers: Mapping[str, str] | None = None,
    policies: Sequence[str] = POLICY_COLUMNS,
) -> Table:
    """Rows of routing outcomes (the ablation tables' columns ``n``, ``hit_<policy>``,
    ``share_union`` and, per comparison, ``<comparison>_diff``, ``_ci_lo``, ``_ci_hi``,
    ``_p_value``) formatted: ``keys`` first (display names; rows grouped by the keys in their
    order of appearance), hit@k per policy, routed − q and routed − union where the frame has
    them, with their CI and p, then ``extra`` columns."""
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
        for name in ("routed_vs_q", "routed_vs_union"):
            if f"{name}_diff" not in row:
                continue
            has_test = True
            head = names.comparison(name)
            out[f"{head}, pp [95% CI]"] = interval(
                row[f"{name}_diff"], row[f"{name}_ci_lo"], row[f"{name}_ci_hi"], unit=False
            )
            out[f"p ({head})"] = p_value(row.get(f"{name}_p_value"))
        for column in extra:
            if column == "share_union" and column in row:
                out["sent to union"] = pct(row[column])
            elif column == "degenerate" and show_degenerate:
                out["one label class"] = yes_no(row[column])
        rows.append(out)
    described = {
        "q": "always-q",
        "union": "always-union",
        "routed": "the router",
        "oracle": "the oracle (the better of q and union per question)",
    }
    present = [p for p in policies if p in described]
    note = f"{', '.join(present)}: hit@{k} of {', '.join(described[p] for p in present)}."
    if one_size:
        note += f" Every row has n = {count(next(iter(sizes)))} questions."
    if has_test:
        note += " " + EXACT_NOTE
    if show_degenerate:
        note += " One label class: every label was the same, so the router is constant."
    return Table(pd.DataFrame(rows), note=note)


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
        note=f"hit@{k}. {EXACT_NOTE}",
    )


def _ci(entry: Mapping[str, Any] | None) -> str:
    """A record's comparison node as its difference and interval; blank when there is none."""
    return interval(entry["diff"], entry["ci_lo"], entry["ci_hi"]) if entry else ""


def _p(entry: Mapping[str, Any] | None) -> str:
    return p_value(entry["p_value"]) if entry else ""


def router_summary(record: Mapping[str, Any]) -> Table:
    """The router's training-set outcome from notebook router_train's record."""
    train = record["numbers"]["train"]
    outcome = train["outcome"]
    k = next(key for key in outcome if key.startswith("hit@")).split("_")[0]
    policies = {"q": "always q", "union": "always union", "routed": "routed (cross-fitted)"}
    rows = [
        {"": f"{k}, {policies.get(p, p)}", "value": pct(outcome[f"{k}_{p}"]), "p": ""}
        for p in POLICY_COLUMNS
    ]
    for name in ("routed_vs_q", "routed_vs_union"):
        text = f"routed − always {name.rsplit('_', 1)[1]} [95% CI]"
        rows.append({"": text, "value": _ci(outcome[name]), "p": _p(outcome[name])})
    rows.append({"": "oracle − routed", "value": pp(outcome["oracle_vs_routed"]["diff"]), "p": ""})
    rows.append({"": "questions sent to union", "value": pct(outcome["share_union"]), "p": ""})
    return Table(
        pd.DataFrame(rows),
        caption=(
            f"{names.dataset(train['dataset'])}: {count(train['n'])} questions "
            f"({count(train['n_parallel'])} comparison questions, included)"
        ),
        note=EXACT_NOTE,
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
        c, u = outcome.comparison("routed_vs_q"), outcome.comparison("routed_vs_union")
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
            f"Differences in hit@{result.config.k}. CI and p: McNemar's test, one "
            "procedure. No regret: the router is not significantly worse than always-q."
        ),
    )


def headline_table(record: Mapping[str, Any], datasets: Sequence[str]) -> Table:
    """The paper's headline table from notebook zero_shot_transfer's record: the training set
    (cross-fitted, from notebook router_train) and each zero-shot dataset, beside the paper."""
    numbers = record["numbers"]
    paper = numbers["paper"]

    def row(name: str, setting: str, versus_q: Any, versus_union: Any, gap: float, n: Any) -> Any:
        return {
            "dataset": names.dataset(name),
            "setting": setting,
            "n": count(n),
            "routed − q [95% CI]": _ci(versus_q),
            "p": _p(versus_q),
            "paper": f"{pp(paper[name]['delta'])} ({paper[name]['p']})"
            if name in paper
            else MISSING,
            "routed − always union [95% CI]": _ci(versus_union),
            "oracle − routed": pp(gap),
        }

    rows = []
    if "train" in numbers:
        t = numbers["train"]
        rows.append(row(t["dataset"], "cross-fitted", t, t["vs_union"], t["oracle_gap"], t["n"]))
    for name in datasets:
        t = numbers["transfer"][name]
        gap = t["oracle_vs_routed"]["diff"]
        rows.append(row(name, "zero-shot", t["routed_vs_q"], t["routed_vs_union"], gap, t["n"]))
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Differences in hit@5, percentage points. The paper's oracle gap is about "
            f"{pp(paper['oracle_gap'])}. {EXACT_NOTE}"
        ),
    )


# --- Ablations -----------------------------------------------------------------------------------


def _flat_interval(row: Mapping[str, Any], stem: str) -> str:
    """The CI cell of a comparison an ablation frame stores flat: ``<stem>_diff``,
    ``<stem>_ci_lo`` and ``<stem>_ci_hi``."""
    return interval(row[f"{stem}_diff"], row[f"{stem}_ci_lo"], row[f"{stem}_ci_hi"])


def _flat_test(row: Mapping[str, Any], stem: str, head: str, p: str = "p") -> dict[str, str]:
    """The CI cell (headed ``<head> [95% CI]``) and the p cell (headed ``p``) of a comparison an
    ablation frame stores flat (:func:`_flat_interval`, ``<stem>_p_value``)."""
    return {f"{head} [95% CI]": _flat_interval(row, stem), p: p_value(row[f"{stem}_p_value"])}


def soft_table(soft: pd.DataFrame, *, k: int) -> Table:
    """Soft routing (``AblationResult.soft``): hit@k of q, the hard router and soft routing, and
    soft − q, soft − routed with CIs and p."""
    rows = [
        {
            "dataset": names.dataset(row["dataset"]),
            "q": pct(row["hit_q"]),
            "routed": pct(row["hit_routed"]),
            "soft": pct(row["hit_soft"]),
            **_flat_test(row, "soft_vs_q", "soft − q", "p (vs q)"),
            **_flat_test(row, "soft_vs_routed", "soft − routed", "p (vs routed)"),
        }
        for row in soft.to_dict("records")
    ]
    return Table(pd.DataFrame(rows), note=f"hit@{k}. {EXACT_NOTE}")


def oracle_gap_table(frame: pd.DataFrame, *, k: int) -> Table:
    """What a perfect q/union choice would add over the router (``AblationResult.oracle_gap``)."""
    rows = [
        {
            "dataset": names.dataset(row["dataset"]),
            "n": count(row["n"]),
            "routed": pct(row["hit_routed"]),
            "oracle": pct(row["hit_oracle"]),
            "oracle − routed [95% CI]": _flat_interval(row, "oracle_vs_routed"),
            "oracle − q [95% CI]": _flat_interval(row, "oracle_vs_q"),
        }
        for row in frame.to_dict("records")
    ]
    return Table(pd.DataFrame(rows), note=f"hit@{k}. CI: 95% score interval.")


def alpha_rule_table(frame: pd.DataFrame, *, k: int) -> Table:
    """The α rule (``AblationResult.alpha_rule``): per encoder and dataset, the best α of the
    grid, routed hit@k at the rule's α and at the best, and their paired difference."""
    rows = [
        {
            "encoder": names.encoder(row["encoder"]),
            "dataset": names.dataset(row["dataset"]),
            "best α": f"{row['best_alpha']:g}",
            "routed, the rule's α": pct(row["hit_routed_rule"]),
            "routed, best α": pct(row["hit_routed_best"]),
            **_flat_test(row, "rule_vs_best", "rule − best"),
        }
        for row in frame.to_dict("records")
    ]
    alphas = sorted({float(a) for a in frame["alpha"]}) if len(frame) else []
    rule = ", ".join(f"{a:g}" for a in alphas)
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Routed hit@{k} at the rule's α ({rule}) and at the best α of the grid, chosen on "
            "the same questions (ties: the α closest to the rule's, then the smaller), which "
            f"favours the best α. {EXACT_NOTE}"
        ),
    )


def pool_invariance_table(frame: pd.DataFrame, *, k: int) -> Table:
    """Pool invariance (``AblationResult.pool_invariance``): routed − q with corpus pools and
    with question pools, and their per-question difference."""
    rows = [
        {
            "dataset": names.dataset(row["dataset"]),
            "n": count(row["corpus_vs_question_n"]),
            "routed − q, corpus pools": pp(row["gain_corpus"]),
            "routed − q, question pools": pp(row["gain_question"]),
            **_flat_test(row, "corpus_vs_question", "corpus − question"),
        }
        for row in frame.to_dict("records")
    ]
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Gains in hit@{k}, percentage points, on the same questions under both pool modes. "
            "CI: percentile bootstrap of the mean per-question difference; p: sign-flip "
            "permutation test."
        ),
    )


def ablation_summary(record: Mapping[str, Any]) -> Table:
    """One row per dataset from an ablations record: routed − q at the main α, soft − q, the
    oracle gap, and routed − q under each pool and encoder that ran."""
    numbers = record["numbers"]

    def versus_q(node: Mapping[str, Any]) -> str:
        c = node["comparisons"]["routed_vs_q"]
        return f"{pp(c['diff'])} (p {p_value(c['p_value'])})"

    rows = []
    for name, entry in numbers["oracle_gap"].items():
        soft = numbers["soft"][name]
        row = {
            "dataset": names.dataset(name),
            "routed − q": versus_q(entry),
            "soft − q": f"{pp(soft['soft_vs_q_diff'])} (p {p_value(soft['soft_vs_q_p_value'])})",
            "oracle − routed": pp(entry["comparisons"]["oracle_vs_routed"]["diff"]),
        }
        for pool_name, by_ds in numbers["pools"].items():
            if name in by_ds:
                row[f"routed − q, {names.display('pool', pool_name)}"] = versus_q(by_ds[name])
        for enc, by_ds in numbers["encoders"].items():
            if name in by_ds:
                row[f"routed − q, {names.encoder(enc)}"] = versus_q(by_ds[name])
        rows.append(row)
    return Table(
        pd.DataFrame(rows),
        note="Differences in hit@5, percentage points, with the McNemar p.",
    )


# --- How much of the gain is selection (the router_train record's ``selection`` node) ------------


def _setting(entry: Mapping[str, Any]) -> str:
    return str(entry.get("setting", ""))


def selection_table(selection: Mapping[str, Any], datasets: Sequence[str]) -> Table:
    """Levels 1 and 2 per dataset and selector: agreement with the gold relation sentence (all
    items, beside chance) and union hit@k with the selector's ``B_rel`` against the gold one."""
    measured = [s.strip() for s in str(selection["measured"]).split(",")]
    rows = []
    for dataset in datasets:
        entry = selection[dataset]
        agreement = entry["agreement"].get("all", {})
        union = entry["union"]
        gold_hit = next(iter(union.values()))["hit_gold"] if union else None
        for name in measured:
            c = union.get(name)
            rows.append(
                {
                    "dataset": f"{names.dataset(dataset)} ({_setting(entry)})",
                    "selector": names.display("selector", name),
                    "agrees with gold": pct(agreement.get(name)),
                    "chance": pct(agreement.get("chance")),
                    "union hit": pct(c["hit"] if c else gold_hit if name == "gold" else None),
                    "− gold [95% CI]": _ci(c),
                    "p": _p(c),
                }
            )
    k = selection["k"]
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Agreement: share of the items with a gold relation sentence whose chosen sentence "
            f"is it. Union hit@{k} with each selector's B_rel, and its difference from union with "
            f"the gold B_rel, on the items that have one; CI: {_interval_name()}, p: the "
            f"{_test_name()}."
        ),
        align_left=("dataset", "selector"),
    )


#: The columns of :func:`selection_routed_table` after ``dataset`` and ``selector``.
_SELECTION_ROUTED_COLUMNS: tuple[str, ...] = (
    "routed − q",
    "routed − union",
    "oracle − routed",
    "routed − routed with gold [95% CI]",
    "p",
)


def selection_routed_table(selection: Mapping[str, Any], datasets: Sequence[str]) -> Table:
    """Level 3 per dataset and knob value: the router trained and applied with each selector's
    ``B_rel``, and routed hit@k with it against routed hit@k with the gold sentence. A dataset
    the router-training run did not measure (``not_measured``, e.g. one of one's own) is one row
    saying so, and the note gives the reason."""
    selectors = [s.strip() for s in str(selection["selectors"]).split(",")]
    not_measured: Mapping[str, str] = selection.get("not_measured", {})
    rows = []
    for dataset in datasets:
        if dataset in not_measured:
            rows.append(
                {"dataset": names.dataset(dataset), "selector": "not measured"}
                | {column: "" for column in _SELECTION_ROUTED_COLUMNS}
            )
            continue
        entry = selection[dataset]
        for name in selectors:
            routed = entry["routed"][name]
            vs_gold = routed.get("vs_gold", {}).get("routed_vs_q")
            rows.append(
                {
                    "dataset": f"{names.dataset(dataset)} ({_setting(entry)})",
                    "selector": names.display("selector", name),
                    "routed − q": pp(routed["routed_vs_q"]["diff"]),
                    "routed − union": pp(routed["routed_vs_union"]["diff"]),
                    "oracle − routed": pp(routed["oracle_vs_routed"]["diff"]),
                    "routed − routed with gold [95% CI]": _ci(vs_gold),
                    "p": _p(vs_gold),
                }
            )
    k = selection["k"]
    missing = "".join(
        f" Not measured on {names.dataset(d)}: {not_measured[d]}."
        for d in datasets
        if d in not_measured
    )
    return Table(
        pd.DataFrame(rows),
        note=(
            f"Differences in hit@{k}. Each row's router is trained with that selector's B_rel on "
            f"{names.dataset(selection['train_dataset'])} (cross-fitted there) and applied "
            "zero-shot to the other datasets with the same selector. The last columns pair each "
            "question's routed hit with its routed hit under the gold B_rel: McNemar "
            f"interval and p.{missing}"
        ),
        align_left=("dataset", "selector"),
    )


def latency_table(record: Mapping[str, Any]) -> Table:
    """The routing-latency record's timings: per language and measurement, how many timings,
    their median, 99th percentile and maximum."""
    from regime_core.runner.wording import format_number

    numbers = record["numbers"]
    rows = [
        {
            "timed": f"{names.language(language)}, {mode}",
            "n": count(s["n"]),
            "median": format_number(s["p50_seconds"], "time"),
            "99th percentile": format_number(s["p99_seconds"], "time"),
            "maximum": format_number(s["max_seconds"], "time"),
        }
        for language, modes in numbers["timings"].items()
        for mode, s in modes.items()
    ]
    machine = numbers["machine"]
    return Table(
        pd.DataFrame(rows),
        caption="Time to route one question",
        note=(
            f"Warm: one timing per question, the median of its {numbers['warm_passes']} passes "
            f"after {numbers['warmup_calls']} untimed calls; cold: the first call of each of "
            f"{numbers['cold_processes']} fresh processes. Machine: {machine['cpu']}, "
            f"{machine['cores']} cores, Python {machine['python']}, Node {machine['node']}, "
            f"load average {machine['load_average_1min']}."
        ),
        align_left=("timed",),
    )


def _interval_name() -> str:
    from regime_core.vocabulary import INTERVAL_NAMES, PAIRED_INTERVAL

    return INTERVAL_NAMES[PAIRED_INTERVAL]


def _test_name() -> str:
    from regime_core.vocabulary import PAIRED_TEST, TEST_NAMES

    return TEST_NAMES[PAIRED_TEST]
