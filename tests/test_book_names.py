"""Display names: one table, every identifier the package uses has one, unknown names pass."""

from __future__ import annotations

from regime_core import config
from regime_core.book import names


def test_every_dataset_encoder_arm_and_regime_has_a_display_name() -> None:
    from regime_core.data.prepared import PREPARED_DATASETS
    from regime_core.data.regimes import REGIMES
    from regime_core.encoders import KNOWN_ENCODERS
    from regime_core.experiments.t3_brel_knockout import SUBSET_RULES
    from regime_core.router import FEATURE_NAMES

    for dataset in PREPARED_DATASETS:
        assert dataset in names.DATASETS
    for regime in REGIMES:
        assert names.regime(regime) == regime
    for encoder in KNOWN_ENCODERS:
        assert encoder in names.ENCODERS
    for arm in config.ARMS:
        assert arm in names.ARMS and names.arm(arm, short=True) == arm
    for rule in SUBSET_RULES:
        assert rule in names.REGIMES
    for feature in FEATURE_NAMES:
        assert feature in names.FEATURES


def test_the_spellings_the_book_uses() -> None:
    assert names.dataset("hotpotqa") == "HotpotQA"
    assert names.dataset("2wikimultihopqa") == "2WikiMultiHopQA"
    assert names.dataset("musique") == "MuSiQue"
    assert names.regime("b_dominant") == names.regime("B-dominant") == "B-dominant"
    assert names.regime("q_dominant") == "Q-dominant"
    assert names.arm("q") == "question only"
    assert names.arm("union").startswith("union (q + α·B_rel")
    assert names.encoder("minilm") == "MiniLM-L6"
    assert names.encoder("tfidf") == "TF-IDF"
    assert names.display("metric", "hit@5") == "hit@5"
    assert names.comparison("union_vs_q") == "union − q"
    assert names.comparison("routed_vs_union") == "routed − union"
    assert names.display("cell", "P1-P2+") == "only the bridge names it"


def test_unknown_names_pass_through() -> None:
    assert names.dataset("newqa") == "newqa"
    assert names.display("encoder", "bge-small") == "bge-small"


def test_value_columns_name_known_kinds() -> None:
    for column, kind in names.VALUE_COLUMNS.items():
        assert names.display(kind, "x") == "x", column
