"""Unit tests of notebook 01's experiment (data counts, regime shares, worked examples)."""

from __future__ import annotations

import pytest

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments.context import Context
from regime_core.experiments.data_regimes import (
    OverviewConfig,
    prepared_counts,
    run_overview,
)

MANIFEST = {
    "datasets": {
        "toyworld": {
            "questions": {"dev": 50, "train": 3},
            "two_hop": {"dev": 40, "train": 3},
            "excluded_by_split": {"dev": {"too_long": 7, "no_pool": 3}, "train": {}},
        }
    }
}


def test_prepared_counts_reads_the_split() -> None:
    counts, reasons = prepared_counts(MANIFEST, ["toyworld"], "dev")
    assert counts.iloc[0].to_dict() == {
        "dataset": "toyworld",
        "questions": 50,
        "two_hop": 40,
        "excluded": 10,
    }
    assert dict(zip(reasons["reason"], reasons["count"], strict=True)) == {
        "no_pool": 3,
        "too_long": 7,
    }
    with pytest.raises(ValueError, match="regime data prepare"):
        prepared_counts(MANIFEST, ["musique"], "dev")


def test_overview_shares_and_worked_examples() -> None:
    world = generate(ToyWorldConfig(n_questions=40, b_dominant_share=0.5))
    cfg = OverviewConfig(datasets=("toyworld",), sample_size=30, worked_examples=2)
    result = run_overview(cfg, Context(examples={"toyworld": world}), manifest=MANIFEST)
    numbers = result.to_numbers()
    regimes = numbers["regimes"]["toyworld"]["all"]
    assert regimes["n"] == 30
    total = sum(regimes[r]["count"] for r in ("Q-dominant", "B-dominant", "neither"))
    assert total == 30
    assert sum(
        regimes[r]["share"] for r in ("Q-dominant", "B-dominant", "neither")
    ) == pytest.approx(1)
    assert numbers["prepared"]["toyworld"]["excluded_by_reason"] == {"no_pool": 3, "too_long": 7}
    assert sum(numbers["native_types"]["toyworld"].values()) == 30
    # two per non-empty regime, deterministic, each B_rel in bold
    again = run_overview(cfg, Context(examples={"toyworld": world}), manifest=MANIFEST)
    assert [w.id for w in result.worked] == [w.id for w in again.worked]
    present = [r for r in ("Q-dominant", "B-dominant", "neither") if regimes[r]["count"]]
    assert len(result.worked) == sum(min(2, regimes[r]["count"]) for r in present)
    for example in result.worked:
        if example.b_rel_index is not None:
            assert "**" in example.markdown()
    assert set(numbers["worked_examples"].values()) == {w.id for w in result.worked}


def test_overview_counts_what_the_strict_item_set_removes() -> None:
    from regime_core.data.item_sets import filter_item_set

    world = generate(ToyWorldConfig(n_questions=40))
    cfg = OverviewConfig(datasets=("toyworld",))
    result = run_overview(cfg, Context(examples={"toyworld": world}), manifest=MANIFEST)
    strict = result.to_numbers()["item_sets"]["toyworld"]["strict"]
    dev = [ex for ex in world if ex.split == "dev"]
    expected = filter_item_set(dev, "strict")
    assert strict["n"] == len(dev) and strict["kept"] == expected.n_kept
    assert strict["removed_by"] == dict(expected.removed)
    assert strict["kept"] + sum(strict["removed_by"].values()) == strict["n"]
    assert strict["kept_not_tiny"] == expected.n_kept  # the toy world has no tiny pool
    # the item set is a run's choice too: the sample then holds the strict items only
    strict_run = run_overview(
        OverviewConfig(datasets=("toyworld",), item_set="strict"),
        Context(examples={"toyworld": world}),
        manifest=MANIFEST,
    ).to_numbers()
    assert strict_run["sample"]["toyworld"]["n"] == expected.n_kept
    assert strict_run["sample"]["toyworld"]["item_set_removed"] == dict(expected.removed)
