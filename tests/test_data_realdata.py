"""prepare over the shared subsets (REGIME_DATA_DIR): totals against shared/data/README.md."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from regime_core.data import load_examples, prepare
from regime_core.data.canonical import convert, ircot_type
from regime_core.data.discovery import read_data_dir
from regime_core.data.prepared import PREPARED_DATASETS
from regime_core.schema import Example

pytestmark = pytest.mark.realdata

IRCOT_FILE = "hotpotqa/ircot_xindili/dev_subsampled.jsonl"


@pytest.fixture(scope="module")
def prepared(prepared_real_work: Path) -> Path:
    return prepared_real_work


def _entry(work: Path, dataset: str) -> dict[str, Any]:
    manifest = json.loads((work / "prepared" / "manifest.json").read_text(encoding="utf-8"))
    return manifest["datasets"][dataset]


def _adds_up(entry: dict[str, Any]) -> None:
    for split in ("dev", "train"):
        excluded = sum(entry["excluded_by_split"][split].values())
        assert entry["two_hop"][split] + excluded == entry["questions"][split], split
    n = sum(entry["two_hop"].values())
    for key in ("by_type", "hop_order_rules", "relation_sources"):
        assert sum(entry[key].values()) == n, key


def test_hotpotqa_totals(prepared: Path) -> None:
    entry = _entry(prepared, "hotpotqa")
    assert entry["questions"] == {"dev": 685, "train": 100}
    assert entry["two_hop"] == {"dev": 685, "train": 100}
    assert entry["excluded"] == {}
    _adds_up(entry)
    dev = load_examples("hotpotqa", split="dev", work=prepared)
    original = [e for e in dev if set(e.source_files) != {IRCOT_FILE}]
    assert len(original) == 300
    assert Counter(e.native_type for e in original) == {"bridge": 214, "comparison": 86}
    # Every IRCoT-only question was typed by a named rule.
    assert sum(entry["type_rules"].values()) == 385
    train = load_examples("hotpotqa", split="train", work=prepared)
    assert Counter(e.native_type for e in train) == {"bridge": 78, "comparison": 22}
    assert entry["parallel"] == entry["by_type"]["comparison"]


def test_2wiki_totals(prepared: Path) -> None:
    entry = _entry(prepared, "2wikimultihopqa")
    assert entry["questions"] == {"dev": 693, "train": 0}  # 657 with a pool + 36 without
    assert entry["excluded"]["no_pool"] == 36
    assert entry["excluded"]["2wiki_bridge_comparison"] == 172
    _adds_up(entry)
    by_type = entry["by_type"]
    assert by_type["comparison"] == 155 and entry["parallel"] == 155
    undecided = entry["excluded"].get("hop_order_undetermined", 0) + entry["excluded"].get(
        "not_two_gold_paragraphs", 0
    )
    assert by_type["compositional"] + by_type["inference"] + undecided == 256 + 74
    assert undecided <= 3
    assert sum(entry["title_match"].values()) == entry["hop_order_rules"]["2wiki_evidence_chain"]


def test_musique_totals(prepared: Path) -> None:
    entry = _entry(prepared, "musique")
    assert entry["questions"] == {"dev": 292, "train": 100}
    assert entry["two_hop"] == {"dev": 192, "train": 68}
    assert entry["excluded_by_split"]["dev"] == {"musique_3hop": 64, "musique_4hop": 36}
    assert entry["excluded_by_split"]["train"] == {"musique_3hop": 27, "musique_4hop": 5}
    _adds_up(entry)
    examples = load_examples("musique", work=prepared)
    found = sum(e.relation_sentence is not None for e in examples)
    assert found / len(examples) >= 0.9  # the step-1 answer is named in the bridge
    # The trap: the hop-2 entity is often not the target's title.
    assert any(e.hop2_entity != e.target.title for e in examples)


def test_every_prepared_example_is_valid_and_sorted(prepared: Path) -> None:
    for name in PREPARED_DATASETS:
        examples = load_examples(name, work=prepared)
        assert [e.id for e in examples] == sorted(e.id for e in examples)
        assert all(isinstance(e, Example) and len(e.gold_pids) == 2 for e in examples)


def test_rerun_is_byte_identical(prepared: Path, real_data_dir: Path, tmp_path: Path) -> None:
    names = ["manifest.json", *(f"{d}.jsonl" for d in PREPARED_DATASETS)]
    before = {n: (prepared / "prepared" / n).read_bytes() for n in names}
    prepare(real_data_dir, tmp_path / "again")
    prepare(real_data_dir, prepared / "prepared")
    for n in names:
        assert (tmp_path / "again" / n).read_bytes() == before[n], n
        assert (prepared / "prepared" / n).read_bytes() == before[n], n


def test_ircot_and_original_give_the_same_passage_ids(real_data_dir: Path) -> None:
    reads = read_data_dir(real_data_dir, ["hotpotqa"]).reads
    ircot = {q.id: q for r in reads if r.display == IRCOT_FILE for q in r.questions}
    original = {q.id: q for r in reads if r.display != IRCOT_FILE for q in r.questions}
    shared = sorted(set(ircot) & set(original))
    assert len(shared) == 115  # 15 MIGRES + 103 acmyu - 3 in both
    for qid in shared:
        a, b = convert(ircot[qid]).example, convert(original[qid]).example
        assert a is not None and b is not None
        assert {p.pid for p in a.pool} == {p.pid for p in b.pool}, qid


def test_ircot_typing_rule_agrees_with_original_types(real_data_dir: Path) -> None:
    reads = read_data_dir(real_data_dir, ["hotpotqa"]).reads
    seen = {q.id: q for r in reads if r.fmt == "hotpot_original" for q in r.questions}
    agree = 0
    for q in seen.values():
        titles = list(dict.fromkeys(t for t, _ in q.supporting_facts or ()))
        agree += ircot_type(q.question, q.answer, titles)[0] == q.native_type
    assert len(seen) == 400
    assert agree / len(seen) >= 0.95


def test_the_strict_item_set_on_the_real_subsets(prepared: Path) -> None:
    """The strict item set (regime_core.data.item_sets) on the dev subsets: the counts the
    report and the data chapter's record give, per dataset and clause."""
    from regime_core.data.item_sets import filter_item_set

    found = {
        dataset: filter_item_set(load_examples(dataset, split="dev", work=prepared), "strict")
        for dataset in PREPARED_DATASETS
    }
    hotpot = found["hotpotqa"]
    assert (hotpot.n, hotpot.n_kept) == (685, 293)
    assert hotpot.removed == {
        "yes_no_answer": 94,
        "title_not_mentioned": 272,
        "title_mentioned_repeatedly": 26,  # "The Conversation" glued to its quote counts
    }
    assert (found["2wikimultihopqa"].n, found["2wikimultihopqa"].n_kept) == (485, 284)
    assert (found["musique"].n, found["musique"].n_kept) == (192, 43)
    assert found["musique"].removed["yes_no_answer"] == 0
    for result in found.values():
        assert result.n_kept + sum(result.removed.values()) == result.n
