"""The ``regime-twohop/1`` format (regime_core.data.twohop): reading, writing, bad lines."""

from __future__ import annotations

import copy
import doctest
import gzip
import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers import TWOHOP_FIXTURE as FIXTURE
from helpers import comparable, refused

import regime_core.data.twohop as twohop_module
from regime_book.choices import format_rows
from regime_core.data import toyworld
from regime_core.data.custom import example_line, twohop_jsonl
from regime_core.data.twohop import (
    EXCLUSION_REASONS,
    FIELDS,
    FILL_COUNTS,
    FORMAT,
    LineProblem,
    parse_line_filled,
    read_twohop,
)
from regime_core.inputs.twohop_line import LINE
from regime_core.paths import REPO_ROOT

PAGE = REPO_ROOT / "book" / "reference" / "your_data.md"
NAME = "small.jsonl"


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line]


def _file(*records: dict[str, Any] | str) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def _read(raw: bytes, *, strict: bool = True) -> Any:
    return read_twohop(raw, NAME, "mine", strict=strict)


# --- the fixture and the defaults ------------------------------------------------------------


def test_the_fixture_reads_with_its_defaults() -> None:
    read = read_twohop(FIXTURE.read_bytes(), NAME, "mine")
    assert (read.records, read.blank_lines, len(read.examples), read.excluded) == (4, 1, 4, ())
    by_id = {ex.id: ex for ex in read.examples}
    full, defaults, comparison, train = (by_id[f"own-{i}"] for i in range(1, 5))
    assert (full.native_type, full.hop2_entity, full.hop2_aliases) == (
        "compositional",
        "Mira Talven",
        ("M. Talven",),
    )
    assert (full.relation_sentence, full.relation_source, full.b_rel) == (
        1,
        "given",
        "It was designed by Mira Talven and opened in 1911.",
    )
    # every optional field left out: the documented defaults
    assert defaults.split == "dev" and defaults.native_type == "bridge"
    assert defaults.gold_pids == ("mira-talven", "lantern-bridge")
    assert defaults.parallel is False and defaults.hop_order_rule == "given"
    assert defaults.hop2_entity == "Lantern Bridge" and defaults.hop2_aliases == ()
    assert (defaults.relation_sentence, defaults.relation_source) == (None, "none")
    assert defaults.answer_aliases == ("the Sell", "River Sell")
    assert comparison.parallel and comparison.hop_order_rule == "parallel"
    assert comparison.native_type == "comparison"
    assert train.split == "train" and train.relation_source == "given"
    assert all(ex.dataset == "mine" and ex.source_files == (NAME,) for ex in read.examples)


def test_writing_then_reading_gives_the_same_examples() -> None:
    read = read_twohop(FIXTURE.read_bytes(), NAME, "mine")
    again = read_twohop(twohop_jsonl(read.examples), NAME, "mine")
    assert again.examples == read.examples
    assert all(list(example_line(ex)) == list(FIELDS) for ex in read.examples)


def test_the_toy_world_goes_through_the_format_unchanged() -> None:
    examples = toyworld.load_examples(split="dev")[:60] + toyworld.load_examples(split="train")[:5]
    read = read_twohop(twohop_jsonl(examples), "toy.jsonl", "toycopy")
    assert [comparable(ex) for ex in read.examples] == [comparable(ex) for ex in examples]
    assert {ex.dataset for ex in read.examples} == {"toycopy"}


def test_compressed_files_and_crlf_lines_read_the_same() -> None:
    raw = FIXTURE.read_bytes()
    plain = _read(raw).examples
    assert _read(gzip.compress(raw)).examples == plain
    assert _read(raw.replace(b"\n", b"\r\n")).examples == plain
    assert _read(b"\xef\xbb\xbf" + raw).examples == plain  # a byte-order mark


def test_a_line_separator_inside_a_string_does_not_split_the_line() -> None:
    line = _lines()[0]
    line["question"] = "Where was the architect\u2028of the Lantern Bridge born?"
    raw = json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"
    (example,) = _read(raw).examples
    assert "\u2028" in example.question


def test_edge_whitespace_is_stripped_as_the_readers_strip_it() -> None:
    line = _lines()[0]
    line["question"] = "  " + line["question"] + " "
    line["pool"][0]["sentences"][0] = " " + line["pool"][0]["sentences"][0] + "\t"
    (example,) = _read(_file(line)).examples
    assert example.question == _lines()[0]["question"]
    assert example.pool[0].sentences[0] == _lines()[0]["pool"][0]["sentences"][0]


# --- bad lines: each named by file, line and field ---------------------------------------------

Edit = Callable[[dict[str, Any]], dict[str, Any] | str]


def _set(path: tuple[str | int, ...], value: Any) -> Edit:
    def edit(line: dict[str, Any]) -> dict[str, Any]:
        node: Any = line
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return line

    return edit


def _drop(key: str) -> Edit:
    def edit(line: dict[str, Any]) -> dict[str, Any]:
        del line[key]
        return line

    return edit


def _text(transform: Callable[[str], str]) -> Edit:
    return lambda line: transform(json.dumps(line))


def _drop_sentences(i: int) -> Edit:
    def edit(line: dict[str, Any]) -> dict[str, Any]:
        del line["pool"][i]["sentences"]
        return line

    return edit


def _as_text(i: int, text: Any) -> Edit:
    """Passage ``i`` given as ``text`` instead of sentences."""

    def edit(line: dict[str, Any]) -> dict[str, Any]:
        del line["pool"][i]["sentences"]
        line["pool"][i]["text"] = text
        return line

    return edit


def _duplicate_passage(line: dict[str, Any]) -> dict[str, Any]:
    line["pool"].append(copy.deepcopy(line["pool"][0]))
    return line


# (name, edit of the fixture's first line (written as line 2), field named, exclusion reason or
# None when no reading excludes it)
BAD_LINES: list[tuple[str, Edit, str, str | None]] = [
    ("malformed JSON", _text(lambda s: s[:40]), "column", None),
    ("not an object", lambda line: "[1, 2]", "regime-twohop/1", None),
    ("missing field", _drop("question"), "field 'question'", None),
    ("missing format", _drop("format"), "field 'format'", None),
    ("another format", _set(("format",), "regime-twohop/2"), "field 'format'", None),
    ("unknown field", _set(("bridge_pid",), "x"), "field 'bridge_pid'", None),
    ("wrong type: bool", _set(("parallel",), "yes"), "field 'parallel'", None),
    ("wrong type: number", _set(("question",), 7), "field 'question'", None),
    ("wrong type: sentence", _set(("pool", 1, "sentences", 0), 3), "'pool[1].sentences[0]'", None),
    ("blank sentence", _set(("pool", 2, "sentences", 0), "  "), "'pool[2].sentences[0]'", None),
    ("no sentence", _set(("pool", 2, "sentences"), []), "'pool[2].sentences'", None),
    ("passage field", _set(("pool", 0, "body"), "x"), "'pool[0].body'", None),
    ("sentences and text", _set(("pool", 0, "text"), "x"), "field 'pool[0]'", None),
    ("neither body", _drop_sentences(0), "field 'pool[0]'", None),
    ("blank text", _as_text(0, "  "), "'pool[0].text'", None),
    ("text not a string", _as_text(0, ["A."]), "'pool[0].text'", None),
    ("passage missing", _set(("pool", 0), {"id": "a"}), "'pool[0].title'", None),
    ("one passage", lambda line: {**line, "pool": line["pool"][:1]}, "field 'pool'", None),
    ("float index", _set(("b_rel", "sentence"), 1.0), "field 'b_rel.sentence'", None),
    ("bool index", _set(("b_rel", "sentence"), True), "field 'b_rel.sentence'", None),
    ("unknown source", _set(("b_rel", "source"), "oracle"), "field 'b_rel.source'", None),
    ("unknown split", _set(("split",), "test"), "field 'split'", None),
    ("unknown rule", _set(("hop_order_rule",), "guess"), "field 'hop_order_rule'", None),
    ("id with a space", _set(("id",), "own 1"), "field 'id'", None),
    ("passage id tab", _set(("pool", 0, "id"), "a\tb"), "field 'pool[0].id'", None),
    ("empty id", _set(("id",), ""), "field 'id'", None),
    ("blank alias", _set(("hop2_aliases",), ["M", " "]), "field 'hop2_aliases[1]'", None),
    ("gold twice", _set(("gold_ids",), ["castelby", "castelby"]), "field 'gold_ids'", None),
    ("NaN", _text(lambda s: s.replace('"sentence": 1', '"sentence": NaN')), "b_rel.sentence", None),
    (
        "Infinity",
        _text(lambda s: s.replace('"sentence": 1', '"sentence": -Infinity')),
        "b_rel",
        None,
    ),
    (
        "duplicate key",
        _text(lambda s: s.replace('"split": "dev"', '"split": "dev", "split": "train"')),
        "field 'split'",
        None,
    ),
    (
        "lone surrogate",
        _text(lambda s: s.replace("Orrowick", "Orr\\udc00wick", 1)),
        "surrogate",
        None,
    ),
    ("bridge not in pool", _set(("bridge_id",), "nowhere"), "field 'bridge_id'", "not_in_pool"),
    ("target not in pool", _set(("target_id",), "nowhere"), "field 'target_id'", "not_in_pool"),
    (
        "gold not in pool",
        _set(("gold_ids",), ["lantern-bridge", "x"]),
        "'gold_ids[1]'",
        "not_in_pool",
    ),
    (
        "bridge is target",
        _set(("target_id",), "lantern-bridge"),
        "field 'target_id'",
        "same_bridge_and_target",
    ),
    ("passage listed twice", _duplicate_passage, "field 'pool[3].id'", "duplicate_passage_id"),
    (
        "b_rel out of range",
        _set(("b_rel", "sentence"), 2),
        "field 'b_rel.sentence'",
        "b_rel_out_of_range",
    ),
    (
        "negative b_rel",
        _set(("b_rel", "sentence"), -1),
        "field 'b_rel.sentence'",
        "b_rel_out_of_range",
    ),
    ("duplicate id", _set(("id",), "own-2"), "field 'id'", "duplicate_id"),
    (
        "passage conflict",
        _set(("pool", 0, "title"), "Lantern Bridges"),
        "field 'pool[0]'",
        "passage_conflict",
    ),
]


each_bad_line = pytest.mark.parametrize(
    ("name", "edit", "field", "reason"), BAD_LINES, ids=[c[0] for c in BAD_LINES]
)


def _bad_file(edit: Edit) -> bytes:
    """The fixture's second line, then the first one edited (line 2), then the third (line 3)."""
    first, second, third = _lines()[:3]
    edited = edit(copy.deepcopy(first))
    return _file(second, edited, third)


@each_bad_line
def test_a_bad_line_is_named_by_file_line_and_field(
    name: str, edit: Edit, field: str, reason: str | None
) -> None:
    raw = _bad_file(edit)
    with pytest.raises(ValueError) as caught:
        _read(raw)
    message = str(caught.value)
    assert message.startswith(f"{NAME}, line 2"), message
    assert field in message, message
    if isinstance(caught.value, LineProblem):
        assert caught.value.reason == reason
    else:
        assert reason is None


@each_bad_line
def test_lenient_reading_excludes_broken_references_only(
    name: str, edit: Edit, field: str, reason: str | None
) -> None:
    raw = _bad_file(edit)
    if reason is None:
        with refused(ValueError, names=(f"{NAME}, line 2",)):
            _read(raw, strict=False)
        return
    read = _read(raw, strict=False)
    assert [ex.id for ex in read.examples] == ["own-2", "own-3"]
    (excluded,) = read.excluded
    assert (excluded.line, excluded.reason, excluded.split) == (2, reason, "dev")
    assert excluded.problem.startswith(f"{NAME}, line 2") and field in excluded.problem
    assert read.records == len(read.examples) + len(read.excluded)


def test_the_exclusions_are_the_documented_reasons() -> None:
    reasons = {reason for *_, reason in BAD_LINES if reason is not None}
    assert reasons == set(EXCLUSION_REASONS)


def test_the_first_line_of_a_duplicate_or_conflict_is_kept_and_named() -> None:
    first = _lines()[0]
    again = {**copy.deepcopy(first), "question": "Another question?"}
    with refused(ValueError, names=("line 2", "'own-1'", "'id'", "line 1")):
        _read(_file(first, again))
    read = _read(_file(first, again), strict=False)
    assert [ex.question for ex in read.examples] == [first["question"]]


def test_a_passage_id_may_be_split_into_sentences_differently_on_another_line() -> None:
    first, second = _lines()[:2]
    bridge = second["pool"][1]  # lantern-bridge, as line 1 gives it too
    bridge["sentences"] = [" ".join(bridge["sentences"])]
    read = _read(_file(first, second))
    assert [len(ex.passage("lantern-bridge").sentences) for ex in read.examples] == [2, 1]
    bridge["sentences"] = [bridge["sentences"][0].replace("1911", "1912")]
    with refused(ValueError, names=("line 2", "'pool[1]'", "line 1")):
        _read(_file(first, second))


def test_a_file_without_records_or_not_utf8_is_refused() -> None:
    with refused(ValueError, names=(NAME,)):
        _read(b"\n  \n")
    with refused(ValueError, names=("small.jsonl, line 2", "UTF-8")):
        _read(_file(_lines()[0]) + b'{"id": "\xff"}\n')


def test_no_value_is_converted_to_a_string() -> None:
    for key in ("answer", "hop2_entity", "native_type"):
        line = {**_lines()[0], key: 12}
        with refused(ValueError, names=(f"field '{key}'",)):
            parse_line_filled(line, dataset="mine", where=f"{NAME}, line 1")


# --- one description, in the docstring and on the book's page -------------------------------


def test_every_field_and_reason_is_documented_in_the_module_and_the_book() -> None:
    doc = twohop_module.__doc__ or ""
    page = PAGE.read_text(encoding="utf-8")
    assert FORMAT in doc and FORMAT in page
    assert "{regime-input-format} regime_core.inputs.twohop_line.LINE" in page
    assert [row[0] for row in format_rows(LINE)] == list(FIELDS)
    assert all(meaning for *_, meaning in format_rows(LINE))
    for name in ("sentences", "title", "sentence", "source"):
        assert f"``{name}``" in doc and f"`{name}`" in page, name
    for reason in EXCLUSION_REASONS:
        assert f"`{reason}`" in page, reason
    for key in FILL_COUNTS:
        assert f"`{key}`" in page or f"`filled.{key}`" in page, key
    assert "``text``" in doc and "`text`" in page and "--fill-b-rel" in page


def test_the_pages_line_left_to_the_rules_reads_as_the_page_says() -> None:
    from regime_core.data.canonical import spacy_sentences

    page = PAGE.read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in page.split("```json\n")[1:]]
    (block,) = [b for b in blocks if '"text"' in b]
    line = json.loads(block)
    read = read_twohop(_file(line), NAME, "mine", fill_b_rel=True)
    (example,) = read.examples
    bridge = example.bridge
    assert bridge.sentences == spacy_sentences(line["pool"][0]["text"])
    assert len(bridge.sentences) == 2  # "two sentences, neither cut at 'Co.' nor at 'R.'"
    assert (example.relation_sentence, example.relation_source) == (1, "entity_mention")
    assert "Tomas R. Vell" in bridge.sentences[1]
    # "had it said 'founded by Tomas Vell'": the title without its parenthetical marks it too
    line["pool"][0]["text"] = line["pool"][0]["text"].replace("Tomas R. Vell", "Tomas Vell")
    line["hop2_entity"], line["hop2_aliases"] = "the founder", []
    (other,) = read_twohop(_file(line), NAME, "mine", fill_b_rel=True).examples
    assert other.relation_sentence == 1


def test_the_doctests_of_the_format_and_the_names_pass() -> None:
    from regime_core import schema
    from regime_core.cli import _common
    from regime_core.data import custom

    for module in (custom, schema, _common):  # custom holds the format's writer
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# --- what the built-in rules fill ------------------------------------------------------------


def test_a_passage_given_as_text_is_split_by_the_built_in_splitter() -> None:
    from regime_core.data.canonical import spacy_sentences

    text = "Mira Talven worked with Michael J. Fox in St. Louis. She was born in Orrowick."
    line = _as_text(1, text)(copy.deepcopy(_lines()[0]))
    read = _read(_file(line))
    passage = read.examples[0].pool[1]
    assert passage.sentences == spacy_sentences(text)
    assert len(passage.sentences) == 2  # no cut at the initial "J." nor at "St."
    assert read.filled["passages_split"] == 1


def test_fill_b_rel_keeps_an_explicit_b_rel_and_an_explicit_null() -> None:
    first = _lines()[0]
    given = copy.deepcopy(first)
    given["b_rel"] = {"sentence": 0, "source": "given"}
    null = {**copy.deepcopy(first), "id": "own-null", "b_rel": None}
    left_out = {k: v for k, v in copy.deepcopy(first).items() if k != "b_rel"}
    left_out["id"] = "own-left-out"
    read = read_twohop(_file(given, null, left_out), NAME, "mine", fill_b_rel=True)
    kept, none, filled = read.examples
    assert (kept.relation_sentence, kept.relation_source) == (0, "given")
    assert (none.relation_sentence, none.relation_source) == (None, "none")
    # the bridge's sentence 1 names the hop-2 entity ("designed by Mira Talven")
    assert (filled.relation_sentence, filled.relation_source) == (1, "entity_mention")
    assert read.filled == {"passages_split": 0, "b_rel_filled": 1, "b_rel_not_found": 0}


def test_an_empty_gold_list_is_kept_and_a_null_one_is_the_default() -> None:
    empty, null = (
        {**_lines()[0], "id": f"own-{i}", "gold_ids": v} for i, v in ((8, []), (9, None))
    )
    first, second = _read(_file(empty, null)).examples
    assert (first.gold_pids, second.gold_pids) == ((), (second.bridge_pid, second.target_pid))
