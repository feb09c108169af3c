"""Unit tests of T3 (the B_rel knockout) on synthetic outcome tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from regime_core.experiments.t3_brel_knockout import T3Config, analyse_t3, subset_mask


def _table(n: int = 200, knockout_loss: float = 0.3, seed: int = 0) -> pd.DataFrame:
    """B-dominant items where knockout misses a ``knockout_loss`` share of union's hits, plus
    Q-dominant items where every arm is the same; entity mentions equal the title on even ids."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        b_dominant = i % 4 != 0
        union = float(rng.uniform() < 0.7)
        knockout = union if not b_dominant else float(union and rng.uniform() >= knockout_loss)
        hits = {
            "q": knockout,
            "bridge": union,
            "union": union,
            "knockout": knockout,
            "entity": union,
        }
        for arm, hit in hits.items():
            if arm == "entity" and i % 10 == 9:
                continue  # no mention in the bridge: no entity query
            rows.append(
                {
                    "qid": f"q{i}",
                    "dataset": "d1",
                    "encoder": "e1",
                    "arm": arm,
                    "hit@5": hit,
                    "native_type": "t",
                    "parallel": i % 8 == 0,
                    "p1": not b_dominant,
                    # P2 false on half the Q-dominant items, so that it is not degenerate
                    "p2": b_dominant or i % 8 != 0,
                    "regime": "B-dominant" if b_dominant else "Q-dominant",
                    "entity_is_title": i % 2 == 0,
                }
            )
    return pd.DataFrame(rows)


def test_subset_rules() -> None:
    attrs = pd.DataFrame(
        {"p1": [True, False, False], "p2": [True, True, False], "parallel": [True, False, False]}
    )
    assert subset_mask(attrs, "b_dominant").tolist() == [False, True, False]
    assert subset_mask(attrs, "not_p1").tolist() == [False, True, True]
    assert subset_mask(attrs, "non_parallel").tolist() == [False, True, True]
    assert subset_mask(attrs, "every_item").all()


def test_knockout_drop_is_measured_on_the_subset() -> None:
    table = _table()
    result = analyse_t3(table, T3Config(bootstrap_resamples=500))
    knock = result.comparisons[result.comparisons["comparison"] == "union_vs_knockout"]
    pooled = knock[knock["dataset"] == "all"].iloc[0]
    assert pooled["n"] == 150  # the B-dominant three quarters
    assert pooled["drop"] == pytest.approx(pooled["hit_a"] - pooled["hit_b"])
    assert 0.1 < pooled["drop"] < 0.35
    assert pooled["ci_lo"] > 0 and pooled["p_holm"] < 0.001 and pooled["agrees"]
    # every interval is the Holm-adjusted one: it excludes zero exactly when Holm p does
    c = result.comparisons
    excludes_zero = (c["ci_lo"] > 0) | (c["ci_hi"] < 0)
    assert (excludes_zero == (c["p_holm"] < T3Config().significance)).all()
    assert (c["ci_lo"] <= c["ci_lo_unadjusted"] + 1e-12).all()
    # the Holm family, stated in the record: the tests adjusted together, and which. One
    # dataset pooled alone is the same test twice (itself and "all"): counted once, and the
    # pooled level takes its dataset's adjusted p and interval
    family = result.to_numbers()["holm_family"]
    assert family["tests"] == 2 and len(c) == 4
    assert family["comparison"] == "union_vs_knockout, union_vs_entity"
    assert family["dataset"] == "d1"
    own = knock[knock["dataset"] == "d1"].iloc[0]
    assert pooled["p_holm"] == pytest.approx(own["p_holm"])
    assert (pooled["ci_lo"], pooled["ci_hi"]) == pytest.approx((own["ci_lo"], own["ci_hi"]))
    # two datasets pooled: every level is a test of its own, the pooled one included
    two = pd.concat([table, table.assign(dataset="d2")], ignore_index=True)
    both = analyse_t3(two, T3Config(bootstrap_resamples=200))
    assert both.to_numbers()["holm_family"]["tests"] == len(both.comparisons) == 6
    every = analyse_t3(table, T3Config(subset="every_item", bootstrap_resamples=500))
    all_pooled = every.comparisons.query("comparison == 'union_vs_knockout' and dataset == 'all'")
    assert all_pooled.iloc[0]["n"] == 200
    # the Q-dominant quarter has no drop, so the drop over every item is smaller
    assert all_pooled.iloc[0]["drop"] < pooled["drop"]


def test_entity_audit_counts_title_mentions() -> None:
    result = analyse_t3(_table(), T3Config(bootstrap_resamples=100))
    audit = result.entity.set_index("dataset").loc["all"]
    subset_ids = [i for i in range(200) if i % 4 != 0]
    with_mention = [i for i in subset_ids if i % 10 != 9]
    assert audit["subset_n"] == len(subset_ids)
    assert audit["with_mention"] == len(with_mention)
    assert audit["mention_is_title"] == sum(1 for i in with_mention if i % 2 == 0)
    numbers = result.to_numbers()
    share = numbers["entity"]["e1"]["all"]["mention_is_title_share"]
    assert share == pytest.approx(audit["mention_is_title"] / audit["with_mention"])
    assert numbers["comparisons"]["union_vs_entity"]["e1"]["all"]["drop"] == 0.0
    assert numbers["paper"]["drop_low"] < numbers["paper"]["drop_high"]


def test_a_dataset_with_a_degenerate_predicate_is_not_pooled() -> None:
    informative = _table()
    constant = _table(seed=1).assign(dataset="d2", p2=True)  # P2 true for every item of d2
    result = analyse_t3(pd.concat([informative, constant]), T3Config(bootstrap_resamples=200))
    knock = result.comparisons.query("comparison == 'union_vs_knockout'").set_index("dataset")
    assert knock.loc["all", "n"] == knock.loc["d1", "n"]  # d2 reported, not pooled
    assert knock.loc["d2", "n"] > 0
    numbers = result.to_numbers()
    assert numbers["pooled_datasets"] == "d1"
    assert numbers["degenerate"]["d2"]["p2"] == {"share_true": 1.0, "degenerate": True}
    assert numbers["degenerate"]["d1"]["p2"]["degenerate"] is False


def test_the_tiny_pool_refusal_names_a_parameter_the_notebooks_have() -> None:
    """Issue 44: at k = 10 the refusal said "use tiny_pools='keep'", a parameter T3's notebook
    did not have. T1, T2 and T3 take it now."""
    from regime_core import paths
    from regime_core.runner.declarations import notebook_parameters

    for name in ("02_t1_auc_margin", "03_t2_regime_decomposition", "04_t3_brel_knockout"):
        notebook = paths.REPO_ROOT / "notebooks" / f"{name}.ipynb"
        assert "tiny_pools" in notebook_parameters(notebook), name
    assert T3Config.from_parameters(tiny_pools="keep").tiny_pools == "keep"
