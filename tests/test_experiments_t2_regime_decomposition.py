"""Unit tests of T2 (the predicate split) on synthetic outcome tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from regime_core.data.regimes import regime_label
from regime_core.experiments.t2_regime_decomposition import (
    POOLED,
    T2Config,
    T2Result,
    analyse_t2,
)


def _table(gains: dict[tuple[bool, bool], float], n: int = 120, encoders=("e1", "e2"), seed=0):
    """hit@5 rows for q/bridge/union; in cell (p1, p2) union (and bridge) hit where q misses
    with probability ``gains[cell]``."""
    rng = np.random.default_rng(seed)
    rows = []
    for encoder in encoders:
        for (p1, p2), gain in gains.items():
            for i in range(n):
                qid = f"{int(p1)}{int(p2)}-{i}"
                q = float(rng.uniform() < 0.5)
                union = 1.0 if q else float(rng.uniform() < gain)
                for arm, hit in (("q", q), ("bridge", union), ("union", union)):
                    rows.append(
                        {
                            "qid": qid,
                            "dataset": "d1" if i % 2 else "d2",
                            "encoder": encoder,
                            "arm": arm,
                            "hit@5": hit,
                            "native_type": "t",
                            "parallel": False,
                            "p1": p1,
                            "p2": p2,
                            "regime": regime_label(p1, p2),
                            "entity_is_title": False,
                        }
                    )
    return pd.DataFrame(rows)


CFG = T2Config(bootstrap_resamples=300, min_cell_n=30)


def test_split_holds_when_union_helps_only_b_dominant() -> None:
    table = _table({(True, True): 0.0, (True, False): 0.0, (False, True): 0.6, (False, False): 0.0})
    result = analyse_t2(table, CFG)
    pooled = result.cells[result.cells["dataset"] == POOLED].set_index(["encoder", "cell"])
    assert pooled.loc[("e1", "P1-P2+"), "union_vs_q_diff"] > 0.2
    assert pooled.loc[("e1", "P1-P2+"), "union_vs_q_significant"]
    assert not pooled.loc[("e1", "P1+P2-"), "union_vs_q_significant"]
    assert pooled.loc[("e1", "P1+P2+"), "regime"] == "Q-dominant"
    assert result.holds("union_vs_q")
    numbers = result.to_numbers()
    assert numbers["verdict"]["union_vs_q"]["holds_across_encoders"] is True
    assert numbers["cells"]["e2"]["all"]["P1-P2+"]["n"] == 120
    assert numbers["tests"] == len(result.cells) * 2
    # the Holm family, stated in the record: every comparison x encoder x level x cell
    family = numbers["holm_family"]
    assert family["tests"] == numbers["tests"] == len(result.cells) * 2
    assert family["comparison"] == "union_vs_q, bridge_vs_q"
    assert family["encoder"] == "e1, e2" and POOLED in family["dataset"].split(", ")
    assert len(family["cell"].split(", ")) == 4
    # Holm never lowers a p-value
    assert (result.cells["union_vs_q_p_holm"] >= result.cells["union_vs_q_p"] - 1e-12).all()


@pytest.mark.parametrize("gain", [0.0, 0.08, 0.15, 0.6])
def test_every_interval_is_the_holm_adjusted_one_and_agrees_with_its_holm_p(gain) -> None:
    table = _table({(True, True): 0.0, (True, False): 0.05, (False, True): gain,
                    (False, False): 0.0}, n=80, seed=3)  # fmt: skip
    cells = analyse_t2(table, CFG).cells
    for c in ("union_vs_q", "bridge_vs_q"):
        excludes_zero = (cells[f"{c}_ci_lo"] > 0) | (cells[f"{c}_ci_hi"] < 0)
        assert (excludes_zero == (cells[f"{c}_p_holm"] < CFG.significance)).all(), c
        # the adjusted interval holds the 95% one
        assert (cells[f"{c}_ci_lo"] <= cells[f"{c}_ci_lo_unadjusted"] + 1e-12).all()
        assert (cells[f"{c}_ci_hi"] >= cells[f"{c}_ci_hi_unadjusted"] - 1e-12).all()
    entry = analyse_t2(table, CFG).to_numbers()["cells"]["e1"]["all"]["P1-P2+"]["union_vs_q"]
    assert {"ci_lo", "ci_hi", "ci_lo_unadjusted", "ci_hi_unadjusted", "p_holm"} <= set(entry)


def _union_verdict(result: T2Result, encoder: str) -> pd.Series:
    """The verdict row of union vs q for ``encoder``."""
    return result.verdicts.set_index(["encoder", "comparison"]).loc[(encoder, "union_vs_q")]


def test_split_fails_when_union_also_helps_q_dominant() -> None:
    table = _table({(True, True): 0.6, (True, False): 0.0, (False, True): 0.6})
    result = analyse_t2(table, CFG)
    e1 = _union_verdict(result, "e1")
    assert e1["b_dominant_significant"] and not e1["q_dominant_not_significant"]
    assert not result.holds("union_vs_q")


def test_split_fails_for_one_encoder_fails_across_encoders() -> None:
    good = _table({(True, False): 0.0, (False, True): 0.6}, encoders=("e1",))
    bad = _table({(True, False): 0.0, (False, True): 0.0}, encoders=("e2",), seed=1)
    result = analyse_t2(pd.concat([good, bad], ignore_index=True), CFG)
    assert _union_verdict(result, "e1")["holds"]
    assert not _union_verdict(result, "e2")["holds"]
    assert not result.holds("union_vs_q")


def test_queries_without_union_are_dropped_and_counted() -> None:
    table = _table({(True, False): 0.0, (False, True): 0.6}, encoders=("e1",))
    lost = table[(table["arm"] == "union") & table["qid"].str.endswith("-0")].index
    result = analyse_t2(table.drop(index=lost), CFG)
    assert sum(result.n_excluded["e1"].values()) == 2  # one per (p1, p2) cell


# --- issue 44: data that cannot decide the split ------------------------------------------------


def test_data_where_p2_always_holds_stop_at_once_saying_what_they_lack() -> None:
    """A dataset prepared with --fill-b-rel has a B_rel for every bridge: P2 holds wherever the
    hop-2 entity is there, no dataset is pooled, and T2 used to crash drawing a figure of no
    rows. It stops in the analysis, naming the predicate, its share and the way out."""
    table = _table({(True, True): 0.0, (False, True): 0.5})
    with pytest.raises(ValueError, match=r"P2 is true for 100% of its .*--fill-b-rel"):
        analyse_t2(table, T2Config(bootstrap_resamples=100))


def test_cells_below_min_cell_n_are_inconclusive_not_refuted() -> None:
    """Q-dominant cells all below ``min_cell_n``: the split does not hold, and the record says
    why (too few questions), which the claim reads as inconclusive, never "not reproduced"."""
    from regime_core.runner.judge import INCONCLUSIVE, judge_holds

    gains = {(True, True): 0.0, (True, False): 0.0, (False, True): 0.6, (False, False): 0.0}
    result = analyse_t2(_table(gains, n=40), T2Config(bootstrap_resamples=100, min_cell_n=50))
    verdict = result.to_numbers()["verdict"]["union_vs_q"]["e1"]
    assert verdict["holds"] is False
    assert verdict["too_few_questions"] == "n = 40 below 50 in every Q-dominant cell"
    judged = judge_holds(False, {"MiniLM": False}, {"MiniLM": verdict["too_few_questions"]})
    assert judged.verdict == INCONCLUSIVE
    assert judged.words == (
        "inconclusive (too few questions: MiniLM: n = 40 below 50 in every Q-dominant cell)"
    )
    # cells large enough: no excuse, and a split that fails is refuted
    enough = analyse_t2(_table(gains, n=40), T2Config(bootstrap_resamples=100, min_cell_n=10))
    assert enough.to_numbers()["verdict"]["union_vs_q"]["e1"]["too_few_questions"] == ""
