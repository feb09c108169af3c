"""The executed pages' table formatting: percentages, points, p-values, counts, names."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from regime_core.book import tables


def test_scalar_formats() -> None:
    assert tables.pct(0.6215) == "62.2%"
    assert tables.pp(0.1234) == "+12.3 pp"
    assert tables.pp(-0.452) == "-45.2 pp"
    assert tables.pp(-0.00049) == "0.0 pp"
    assert tables.count(485.0) == "485"
    assert tables.count(12576) == "12,576"
    assert tables.pct(math.nan) == tables.MISSING
    with pytest.raises(ValueError):
        tables.count(2.5)


@pytest.mark.parametrize(
    ("p", "shown"),
    [(0.0213, "0.021"), (0.25, "0.25"), (1.0, "1.0"), (0.5, "0.50"), (0.0004, "< 0.001"),
     (0.001, "0.0010"), (0.04999, "0.050")],
)  # fmt: skip
def test_p_values_have_two_significant_digits(p: float, shown: str) -> None:
    assert tables.p_value(p) == shown


def test_interval() -> None:
    assert tables.interval(0.12, 0.04, 0.2) == "+12.0 pp [+4.0, +20.0]"
    assert tables.interval(0.9, 0.81, 0.95, "r2") == "0.90 [0.81, 0.95]"


def test_table_formats_counts_names_and_hides_the_index() -> None:
    frame = pd.DataFrame(
        {"dataset": ["2wikimultihopqa", "musique"], "encoder": ["minilm", "tfidf"],
         "n": [485.0, 192.0], "hit": [0.5, 0.25], "p": [0.0213, 0.9]}
    )  # fmt: skip
    shown = tables.table(frame, {"hit": "pct", "p": "p"}, columns={"hit": "hit@5"})
    assert shown.frame.to_dict("records") == [
        {"dataset": "2WikiMultiHopQA", "encoder": "MiniLM-L6", "n": "485", "hit@5": "50.0%",
         "p": "0.021"},
        {"dataset": "MuSiQue", "encoder": "TF-IDF", "n": "192", "hit@5": "25.0%", "p": "0.90"},
    ]  # fmt: skip
    html = shown._repr_html_()
    assert "<table" in html and "overflow-x: auto" in html
    assert "485.0" not in html and "<th></th>" not in html


def test_a_named_index_becomes_a_column() -> None:
    frame = pd.DataFrame({"n": [3]}, index=pd.Index(["hotpotqa"], name="dataset"))
    assert tables.table(frame).frame.to_dict("records") == [{"dataset": "HotpotQA", "n": "3"}]


def test_t2_table_calls_either_direction_significant_and_notes_the_adjustment() -> None:
    entry = {
        "n": 40, "regime": "Q-dominant", "hit_q": 0.9, "hit_bridge": 0.4, "hit_union": 0.45,
        "union_vs_q": {"diff": -0.452, "ci_lo": -0.6, "ci_hi": -0.3, "p": 0.00002,
                       "p_holm": 0.0001, "ci_lo_unadjusted": -0.58, "ci_hi_unadjusted": -0.32},
    }  # fmt: skip
    family = {
        "tests": 60,
        "comparison": "union_vs_q, bridge_vs_q",
        "encoder": "minilm, tfidf",
        "dataset": "hotpotqa, musique, all",
        "cell": "P1+P2+, P1+P2-, P1-P2+, P1-P2-",
    }
    numbers = {"k": 5, "significance": 0.05, "tests": 60, "holm_family": family,
               "cells": {"minilm": {"all": {"P1+P2+": entry}}}}  # fmt: skip
    shown = tables.t2_table(numbers, "union_vs_q")
    row = shown.frame.iloc[0]
    assert row["significant (either direction)"] == "yes"
    assert row["union − q, pp [Holm-level interval]"] == "-45.2 [-60.0, -30.0]"
    assert row["level"] == "95%"  # the only test of the family: Holm tests it at 5%
    assert row["union − q, pp [95% CI]"] == "-45.2 [-58.0, -32.0]"
    assert row["cell (regime)"] == "question and bridge name it (Q-dominant)"
    assert row["Holm p"] == "< 0.001"
    assert "excludes zero exactly" in shown.note
    # issue 33: the family, read from the record (it changes with the run's datasets)
    assert (
        "Holm-adjusted together over the 60 tests of this run (comparisons union − q, bridge − q"
        " × encoders MiniLM-L6, TF-IDF × dataset levels HotpotQA, MuSiQue, pooled × cells "
    ) in shown.note


def test_settings_table_lists_display_names() -> None:
    from regime_core.experiments.t2_regime_decomposition import T2Config

    cfg = T2Config(datasets=("musique",), encoders=("tfidf",), sample_size=None)
    shown = tables.settings_table(cfg, ["datasets", "encoders", "sample_size"]).frame
    assert shown["value"].tolist() == ["MuSiQue", "TF-IDF", "all"]


def test_settings_table_adds_every_field_changed_from_the_default_with_its_default() -> None:
    """Issue 33: a notebook that lists only some keys still shows alpha, k and the seed when a
    run changes them (papermill's injected cell is no longer the only place saying so)."""
    from regime_core.experiments.t3_brel_knockout import T3Config

    default = T3Config()
    cfg = T3Config(alpha=default.alpha * 2, k=default.k + 5, seed=default.seed + 1)
    shown = tables.settings_table(cfg, ["pool", "k"]).frame
    assert shown["setting"].tolist() == [
        "pool",
        "k",
        "alpha",
        "seed",
    ]  # listed first, then field order
    marks = dict(zip(shown["setting"], shown["vs the default"], strict=True))
    assert marks["pool"] == "the default"
    assert marks["k"] == f"changed (default {default.k})"
    assert marks["alpha"] == f"changed (default {default.alpha:g})"
    assert marks["seed"] == f"changed (default {default.seed})"
    assert dict(zip(shown["setting"], shown["value"], strict=True))["alpha"] == f"{cfg.alpha:g}"
    # a list given where the default is a tuple of the same items is not a change
    assert tables.settings_table(T3Config(datasets=list(default.datasets)), []).frame.empty


def test_settings_table_compares_nested_configs_field_by_field() -> None:
    from regime_core.data.regimes import RegimeRules
    from regime_core.experiments.t2_regime_decomposition import T2Config

    cfg = T2Config(regime_rules=RegimeRules(use_title=False))
    shown = tables.settings_table(cfg, []).frame
    assert shown["setting"].tolist() == ["regime rules: use title"]
    assert shown["value"].tolist() == ["no"] and shown["vs the default"].tolist() == [
        "changed (default yes)"
    ]
    # predicate_names is the flat face of regime_rules.predicate_names: one row, not two
    other = "title+linking" if T2Config().predicate_names == "title" else "title"
    flat = tables.settings_table(T2Config(predicate_names=other), []).frame
    assert flat["setting"].tolist() == ["predicate names"]


def test_settings_table_names_a_borrowed_record_and_its_encoder() -> None:
    from regime_core.experiments.zero_shot_transfer import TransferConfig

    lent = tables.Borrowed(
        "router_train", "the training row", "results/router_train/record.json",
        {"encoder": "minilm", "dataset": "2wikimultihopqa"},
    )  # fmt: skip
    same = tables.settings_table(TransferConfig(encoder="minilm"), ["encoder"], borrowed=[lent])
    assert same.note == (
        "Taken from the record of run router_train (results/router_train/record.json), "
        "encoder MiniLM-L6: the training row."
    )
    other = tables.settings_table(TransferConfig(encoder="tfidf"), ["encoder"], borrowed=[lent])
    assert other.note is not None and other.note.startswith(same.note)
    assert (
        "That is not this run's encoder (TF-IDF): those numbers were measured with MiniLM-L6"
        in (other.note)
    )
    missing = tables.Borrowed("router_train", "the training row", "elsewhere.json", None)
    note = tables.settings_table(TransferConfig(), [], borrowed=[missing]).note
    assert note == (
        "No record of run router_train at elsewhere.json, so this page shows none of its "
        "numbers (the training row)."
    )
    assert tables.settings_table(TransferConfig(), ["encoder"]).note is None


def test_t3_table_puts_the_pooled_level_last_and_names_the_other_arm() -> None:
    entry = {"n": 10, "hit_a": 0.8, "hit_b": 0.6, "drop": 0.2, "ci_lo": 0.1, "ci_hi": 0.3,
             "p": 0.01, "p_holm": 0.02, "in_paper_range": False}  # fmt: skip
    numbers = {"comparisons": {"union_vs_knockout": {"tfidf": {"all": entry, "musique": entry}}},
               "holm_family": {"tests": 2, "comparison": "union_vs_knockout", "encoder": "tfidf",
                               "dataset": "musique, all"}}  # fmt: skip
    note = tables.t3_table(numbers, "union_vs_knockout").note
    assert (
        "Holm-adjusted together over the 2 tests of this run (comparison union − knockout × "
        "encoder TF-IDF × dataset levels MuSiQue, pooled)"
    ) in note
    shown = tables.t3_table(numbers, "union_vs_knockout").frame
    assert shown["dataset"].tolist() == ["MuSiQue", "pooled"]
    assert "knockout" in shown.columns and "in the paper's range" in shown.columns
    assert shown["union − knockout, pp [Holm-level interval]"].iloc[0] == "+20.0 [+10.0, +30.0]"
    # two tests of p 0.01: Holm tests the first (the pooled level, first in the record) at 2.5%,
    # the second at 5%
    assert shown["level"].tolist() == ["95%", "97.50%"]


def _selection() -> dict:
    comparison = {"n": 10, "diff": -0.1, "ci_lo": -0.3, "ci_hi": 0.0, "p_value": 0.5,
                  "n_a_better": 0, "n_b_better": 1}  # fmt: skip
    routed = {name: {"n": 10, "diff": 0.05, "ci_lo": 0.0, "ci_hi": 0.1, "p_value": 0.5}
              for name in ("routed_vs_q", "routed_vs_union", "oracle_vs_routed")}  # fmt: skip
    entry = {
        "setting": "zero-shot",
        "agreement": {"all": {"n": 10, "chance": 0.4, "rule": 0.7, "gold": 1.0, "first": 0.5}},
        "union": {name: {"hit": 0.6, "hit_gold": 0.7, **comparison} for name in ("rule", "first")},
        "routed": {
            "rule": {**routed, "vs_gold": {"routed_vs_q": comparison}},
            "gold": dict(routed),
        },
    }
    return {"k": 5, "train_dataset": "2wikimultihopqa", "measured": "rule, first, gold",
            "selectors": "rule, gold", "musique": entry}  # fmt: skip


def test_selection_tables_show_every_selector_against_gold() -> None:
    levels = tables.selection_table(_selection(), ["musique"]).frame
    assert levels["selector"].tolist() == ["rule", "first sentence", "gold B_rel (oracle)"]
    assert levels["dataset"].iloc[0] == "MuSiQue (zero-shot)"
    assert levels["agrees with gold"].tolist() == ["70.0%", "50.0%", "100.0%"]
    assert set(levels["chance"]) == {"40.0%"}
    assert levels["union hit"].tolist() == ["60.0%", "60.0%", "70.0%"]  # gold: its own hit
    assert levels["− gold [95% CI]"].tolist()[2] == ""
    routed = tables.selection_routed_table(_selection(), ["musique"]).frame
    assert routed["selector"].tolist() == ["rule", "gold B_rel (oracle)"]
    assert routed["routed − routed with gold [95% CI]"].tolist() == ["-10.0 pp [-30.0, 0.0]", ""]
    assert routed["routed − q"].tolist() == ["+5.0 pp", "+5.0 pp"]


def test_a_dataset_the_selection_study_did_not_measure_is_a_row_saying_so() -> None:
    selection = {**_selection(), "not_measured": {"mine": "the run measured musique only"}}
    table = tables.selection_routed_table(selection, ["musique", "mine"])
    last = table.frame.iloc[-1].tolist()
    assert last[:2] == ["mine", "not measured"] and set(last[2:]) == {""}
    assert "Not measured on mine: the run measured musique only." in table.note


def test_latency_table_reads_the_record_in_words() -> None:
    warm = {"n": 1362, "p50_seconds": 1.27e-4, "p99_seconds": 4.33e-4, "max_seconds": 8.9e-4}
    cold = {"n": 10, "p50_seconds": 3e-4, "p99_seconds": 0.0042, "max_seconds": 0.0043}
    numbers = {
        "timings": {"python": {"warm": warm, "cold": cold}, "javascript": {"warm": warm}},
        "warm_passes": 5,
        "warmup_calls": 200,
        "cold_processes": 10,
        "machine": {"cpu": "AMD EPYC", "cores": 2, "python": "3.12.3", "node": "v20.20.2",
                    "load_average_1min": "2.59"},
    }  # fmt: skip
    shown = tables.latency_table({"numbers": numbers})
    assert shown.frame.to_dict("records")[:2] == [
        {"timed": "Python, warm", "n": "1,362", "median": "127 µs", "99th percentile": "433 µs",
         "maximum": "890 µs"},
        {"timed": "Python, cold", "n": "10", "median": "300 µs", "99th percentile": "4.20 ms",
         "maximum": "4.30 ms"},
    ]  # fmt: skip
    assert shown.frame["timed"].tolist()[-1] == "JavaScript, warm"
    assert "median of its 5 passes" in shown.note and "AMD EPYC, 2 cores" in shown.note
    assert "load average 2.59" in shown.note


def test_a_setting_whose_default_is_none_is_marked_without_a_value() -> None:
    """Zero-shot transfer's alpha None is the router's own; set, it is changed from that."""
    from regime_core.experiments.zero_shot_transfer import TransferConfig

    rows = tables.settings_table(TransferConfig(alpha=0.5), ["alpha"]).frame.to_dict("records")
    assert rows == [
        {"setting": "alpha", "value": "0.5", "vs the default": "changed from the default"}
    ]
    rows = tables.settings_table(TransferConfig(), ["alpha"]).frame.to_dict("records")
    assert rows == [{"setting": "alpha", "value": "default", "vs the default": "the default"}]
