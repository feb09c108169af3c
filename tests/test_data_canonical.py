"""Canonical conversion: hop-order rules, hop-2 entity, B_rel, exclusions and merging."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import refused

from regime_core.data.canonical import (
    EXCLUSION_REASONS,
    IRCOT_TYPE_RULES,
    Conversion,
    convert,
    ircot_sentences,
    ircot_type,
    merge_questions,
    rejoin_unspaced,
)
from regime_core.data.readers import RawQuestion, read_file
from regime_core.schema import HOP_ORDER_RULES, RELATION_SOURCES

FIXTURES = Path(__file__).parent / "fixtures" / "data"


def _split_on_period(text: str) -> tuple[str, ...]:
    """A spaCy-free splitter for the unit tests (the real one is tested on real data)."""
    parts = [p.strip() for p in text.replace(". ", ".\n").split("\n")]
    return tuple(p for p in parts if p)


def _questions(rel: str, split: str = "dev") -> dict[str, RawQuestion]:
    return {q.id: q for q in read_file(FIXTURES / rel, split=split, display=rel).questions}


def _convert(q: RawQuestion) -> Conversion:
    conv = convert(q, splitter=_split_on_period)
    if conv.example is not None:
        assert conv.example.hop_order_rule in HOP_ORDER_RULES
        assert conv.example.relation_source in RELATION_SOURCES
    else:
        assert conv.excluded in EXCLUSION_REASONS
    return conv


def test_hotpot_mention_rule_picks_the_paragraph_naming_the_other() -> None:
    ex = _convert(_questions("hotpotqa/orig_dev.json")["h1"]).example
    assert ex is not None
    assert (ex.bridge.title, ex.target.title) == ("Zarnow Tower", "Ilse Varnhagen")
    assert ex.hop_order_rule == "hotpot_mention"
    assert ex.hop2_entity == "Ilse Varnhagen"
    assert ex.gold_pids == (ex.bridge_pid, ex.target_pid)
    assert not ex.parallel
    # The empty sentence is dropped; the supporting sentence still points at its text.
    assert ex.b_rel == "It was designed by Ilse Varnhagen in 1932."
    assert ex.relation_source == "supporting_facts"


def test_hotpot_answer_tiebreak_reorders_supporting_facts() -> None:
    q = _questions("hotpotqa/orig_dev.json")["h2"]
    assert q.supporting_facts is not None
    assert q.supporting_facts[0][0] == "Quill Regatta"  # listed first, but it is hop 2
    ex = _convert(q).example
    assert ex is not None
    assert ex.hop_order_rule == "hotpot_answer_tiebreak"
    assert (ex.bridge.title, ex.target.title) == ("Kestrel Bay", "Quill Regatta")
    assert ex.relation_source == "supporting_facts_first"
    assert ex.relation_sentence == 0


def test_hotpot_supporting_order_is_the_last_resort() -> None:
    ex = _convert(_questions("hotpotqa/orig_dev_lines.jsonl")["h4"]).example
    assert ex is not None
    assert ex.hop_order_rule == "hotpot_supporting_order"
    assert (ex.bridge.title, ex.target.title) == ("Arlo Lindqvist", "Brenholm Abbey")


def test_comparison_stays_two_hop_as_parallel() -> None:
    ex = _convert(_questions("hotpotqa/orig_dev.json")["h3"]).example
    assert ex is not None
    assert ex.parallel and ex.hop_order_rule == "parallel"
    assert (ex.bridge.title, ex.target.title) == ("Mount Pellow", "Mount Quarn")


def test_supporting_sentence_index_is_remapped_past_empty_sentences() -> None:
    q = _questions("hotpotqa/orig_dev.json")["h1"]
    q = replace(q, supporting_facts=(("Zarnow Tower", 3), ("Ilse Varnhagen", 1)))
    ex = _convert(q).example
    assert ex is not None
    assert ex.relation_sentence == 2
    assert ex.b_rel == "The tower is 40 metres tall."
    assert ex.relation_source == "supporting_facts_first"


def test_ircot_typing_rules_and_entity_mention_relation() -> None:
    qs = _questions("hotpotqa/ircot_dev.jsonl")
    yes_no, bridge, wording = _convert(qs["h6"]), _convert(qs["h7"]), _convert(qs["h8"])
    assert yes_no.notes["type_rule"] == "ircot_yes_no_answer"
    assert wording.notes["type_rule"] == "ircot_comparison_wording"
    assert bridge.notes["type_rule"] == "ircot_default_bridge"
    assert set(IRCOT_TYPE_RULES) == {c.notes["type_rule"] for c in (yes_no, bridge, wording)}
    assert yes_no.example is not None and yes_no.example.parallel
    ex = bridge.example
    assert ex is not None
    assert ex.native_type == "bridge" and ex.hop_order_rule == "hotpot_mention"
    # The target title carries a "(engineer)" tail; the bridge names "Petra Holm".
    assert ex.hop2_aliases == ("Petra Holm",)
    assert ex.relation_source == "entity_mention"
    assert ex.b_rel == "It was restored by the engineer Petra Holm in 1990."


@pytest.mark.parametrize(
    ("question", "typed"),
    [
        # HotpotQA 5ab7e4dc5542995dae37e9df (IRCoT only): a bridge question typed comparison
        # by "same" before the rule asked for a two-way question
        (
            "The Polar Bears featuring the voice of Armie Hammer, is also the same voice actor "
            "for which character in Cars 3?",
            "bridge",
        ),
        ("The film Polar Bears was later adapted by the studio of Armie Hammer?", "bridge"),
        ("Were The Polar Bears and Armie Hammer released later or earlier?", "comparison"),
        ("Is The Polar Bears the same age as Armie Hammer, or older?", "comparison"),
        ("Who is older, The Polar Bears or Armie Hammer?", "comparison"),
    ],
)
def test_same_and_later_mark_a_comparison_only_beside_or(question: str, typed: str) -> None:
    titles = ["The Polar Bears", "Armie Hammer"]
    assert ircot_type(question, "Jackson Storm", titles)[0] == typed


def test_ircot_type_without_comparison_wording_is_bridge() -> None:
    got = ircot_type(
        "Alma Fen and Bo Tarr wrote which novel?", "Stone Sea", ["Alma Fen", "Bo Tarr"]
    )
    assert got == ("bridge", "ircot_default_bridge")


def test_ircot_sentences_split_on_double_space_then_fall_back() -> None:
    assert ircot_sentences("One here.  Two there.", _split_on_period) == ("One here.", "Two there.")
    assert ircot_sentences("One here. Two there.", _split_on_period) == ("One here.", "Two there.")
    assert ircot_sentences("Only one", _split_on_period) == ("Only one",)


def test_2wiki_evidence_chain_exact_and_fuzzy_title_match() -> None:
    qs = _questions("2wikimultihopqa/dev_columns.json")
    exact, fuzzy = _convert(qs["w1"]), _convert(qs["w2"])
    assert exact.notes["title_match"] == "exact" and fuzzy.notes["title_match"] == "fuzzy"
    ex = exact.example
    assert ex is not None
    assert (ex.bridge.title, ex.target.title) == ("The Grey Orchard (1961 film)", "Mirek Olsa")
    assert ex.hop_order_rule == "2wiki_evidence_chain"
    assert ex.b_rel == "It was directed by Mirek Olsa." and ex.relation_source == "supporting_facts"
    ex = fuzzy.example
    assert ex is not None
    # supporting_facts lists the target first; the evidence chain puts it second.
    assert ex.bridge.title == "Helga of Corvin, Duchess of Trask"
    assert ex.hop2_entity == "Ida of Mern"
    assert ex.hop2_aliases == ("Ida of Mern, Countess of Corvin",)


def test_2wiki_exclusions_are_named() -> None:
    cols = _questions("2wikimultihopqa/dev_columns.json")
    rows = _questions("2wikimultihopqa/dev_rows.jsonl")
    assert _convert(cols["w4"]).excluded == "2wiki_bridge_comparison"
    assert _convert(rows["w5"]).excluded == "no_pool"
    assert _convert(cols["w3"]).example is not None
    assert _convert(cols["w3"]).example.parallel  # type: ignore[union-attr]


def test_2wiki_undecidable_chain_is_excluded() -> None:
    q = _questions("2wikimultihopqa/dev_columns.json")["w1"]
    q = replace(q, evidences=(("Qqq", "director", "Jjj"), ("Jjj", "born", "Drava")))
    assert _convert(q).excluded == "hop_order_undetermined"


def test_musique_entity_is_the_step_one_answer_not_the_target_title() -> None:
    ex = _convert(_questions("musique/dev.jsonl")["2hop__1_2"]).example
    assert ex is not None
    assert (ex.bridge.title, ex.target.title) == ("Lake Vorn", "Ferry Lines of Norrmark")
    assert ex.hop2_entity == "Sallow"
    assert ex.hop2_aliases == ("Ferry Lines of Norrmark",)
    assert ex.b_rel == "Its outflow is the river Sallow." and ex.relation_source == "entity_mention"
    assert ex.answer_aliases == ("the Greta",)
    assert ex.native_type == "2hop"


def test_musique_three_hop_is_excluded_and_null_support_is_counted() -> None:
    qs = _questions("musique/dev.jsonl")
    assert _convert(qs["3hop1__1_2_3"]).excluded == "musique_3hop"
    q = qs["2hop__1_2"]
    assert q.decomposition is not None
    steps = (q.decomposition[0], replace(q.decomposition[1], paragraph_support_idx=None))
    assert _convert(replace(q, decomposition=steps)).excluded == "gold_not_in_pool"
    assert _convert(replace(q, answerable=False)).excluded == "musique_unanswerable"


def test_merge_keeps_original_over_ircot_and_unions_sources() -> None:
    orig = _questions("hotpotqa/orig_dev.json")["h1"]
    ircot = _questions("hotpotqa/ircot_dev.jsonl")["h1"]
    lines = _questions("hotpotqa/orig_dev_lines.jsonl")["h1"]
    (merged,) = merge_questions([ircot, orig, lines])
    assert merged.fmt == "hotpot_original"
    assert merged.source_files == (
        "hotpotqa/ircot_dev.jsonl",
        "hotpotqa/orig_dev.json",
        "hotpotqa/orig_dev_lines.jsonl",
    )
    # The IRCoT paragraph text and the sentence list give the same passage ids.
    a, b = _convert(orig).example, _convert(ircot).example
    assert a is not None and b is not None
    assert {p.pid for p in a.pool} == {p.pid for p in b.pool}


def _rewritten(rel: str, tmp_path: Path, edit: Any) -> RawQuestion:
    text = (FIXTURES / rel).read_text(encoding="utf-8")
    data = json.loads(text) if rel.endswith(".json") else json.loads(text.splitlines()[0])
    rec = data[0] if isinstance(data, list) else data
    edit(rec)
    path = tmp_path / Path(rel).name
    path.write_text(json.dumps([rec]), encoding="utf-8")
    return read_file(path, split="dev", display=f"other/{Path(rel).name}").questions[0]


def test_error_same_id_different_content_names_both_files(tmp_path: Path) -> None:
    orig = _questions("hotpotqa/orig_dev.json")["h1"]
    changed = _rewritten("hotpotqa/orig_dev.json", tmp_path, lambda r: r.update(answer="Velm"))
    names = ("'h1'", "hotpotqa/orig_dev.json, record #0", "other/orig_dev.json, record #0")
    with refused(ValueError, names=names):
        merge_questions([orig, changed])


def test_error_ircot_and_original_disagree_on_question(tmp_path: Path) -> None:
    ircot = _questions("hotpotqa/ircot_dev.jsonl")["h1"]
    changed = _rewritten(
        "hotpotqa/orig_dev.json", tmp_path, lambda r: r.update(question="Something else?")
    )
    with refused(ValueError, names=("ircot_dev.jsonl", "orig_dev.json")):
        merge_questions([ircot, changed])


def test_error_same_id_in_two_splits() -> None:
    q = _questions("musique/train.json", split="train")["2hop__5_6"]
    with refused(ValueError, names=("'2hop__5_6'", "'train'", "'dev'")):
        merge_questions([q, replace(q, split="dev")])


def test_rejoin_unspaced_keeps_the_paragraph_text() -> None:
    text = "Ed Kaiser Sr. (July 29) was rich. He  built ships."
    pieces = ["Ed Kaiser Sr. (", "July 29) was rich.", "He  built ships."]
    got = rejoin_unspaced(text, pieces)
    assert got == ("Ed Kaiser Sr. (July 29) was rich.", "He  built ships.")
    assert " ".join(" ".join(got).split()) == " ".join(text.split())
