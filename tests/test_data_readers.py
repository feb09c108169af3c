"""Readers: containers, compression, format detection, and the error messages for bad input."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from regime_core.data.readers import detect_format, parse_container, read_file

FIXTURES = Path(__file__).parent / "fixtures" / "data"


def _write(path: Path, obj: Any, *, lines: bool = False) -> Path:
    if lines:
        path.write_text("".join(json.dumps(r) + "\n" for r in obj), encoding="utf-8")
    else:
        path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _hotpot(**overrides: Any) -> dict[str, Any]:
    rec = {
        "_id": "q1",
        "question": "Where was the maker of the Tin Lamp born?",
        "answer": "Orvik",
        "type": "bridge",
        "level": "hard",
        "context": [
            ["Tin Lamp", ["The Tin Lamp was made by Jon Ask.", " It is blue."]],
            ["Jon Ask", ["Jon Ask is a smith.", " He was born in Orvik."]],
        ],
        "supporting_facts": [["Tin Lamp", 0], ["Jon Ask", 1]],
    }
    rec.update(overrides)
    return rec


def _musique(**overrides: Any) -> dict[str, Any]:
    rec = {
        "id": "2hop__7_8",
        "question": "Where was the maker of the Tin Lamp born?",
        "answer": "Orvik",
        "answer_aliases": [],
        "answerable": True,
        "paragraphs": [
            {
                "idx": 0,
                "title": "Tin Lamp",
                "paragraph_text": "Made by Jon Ask.",
                "is_supporting": True,
            },
            {
                "idx": 1,
                "title": "Jon Ask",
                "paragraph_text": "Born in Orvik.",
                "is_supporting": True,
            },
        ],
        "question_decomposition": [
            {
                "id": 7,
                "question": "who made the Tin Lamp",
                "answer": "Jon Ask",
                "paragraph_support_idx": 0,
            },
            {
                "id": 8,
                "question": "where was #1 born",
                "answer": "Orvik",
                "paragraph_support_idx": 1,
            },
        ],
    }
    rec.update(overrides)
    return rec


# --- containers and formats ------------------------------------------------------------------


def test_fixture_formats_are_detected_from_content() -> None:
    expected = {
        "hotpotqa/orig_dev.json": "hotpot_original",
        "hotpotqa/orig_dev_lines.jsonl": "hotpot_original",
        "hotpotqa/ircot_dev.jsonl": "hotpot_ircot",
        "2wikimultihopqa/dev_columns.json": "2wiki_original",
        "2wikimultihopqa/dev_rows.jsonl": "2wiki_original",
        "musique/dev.jsonl": "musique",
        "musique/train.json": "musique",
    }
    for rel, fmt in expected.items():
        assert read_file(FIXTURES / rel, split="dev").fmt == fmt, rel


def test_pandas_column_dict_becomes_rows_with_id_from_column_1() -> None:
    read = read_file(FIXTURES / "2wikimultihopqa/dev_columns.json", split="dev")
    assert [q.id for q in read.questions] == ["w1", "w2", "w3", "w4"]
    assert read.questions[0].native_type == "compositional"
    assert read.questions[3].supporting_facts is not None
    assert len(read.questions[3].supporting_facts) == 4


def test_json_array_lines_and_single_object_read_alike(tmp_path: Path) -> None:
    rec = _hotpot()
    reads = [
        read_file(_write(tmp_path / "a.json", [rec]), split="dev"),
        read_file(_write(tmp_path / "b.json", [rec], lines=True), split="dev"),
        read_file(_write(tmp_path / "c.json", rec), split="dev"),
    ]
    keys = {r.questions[0].content_key for r in reads}
    assert len(keys) == 1
    assert all(len(r.questions) == 1 for r in reads)


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_files_are_detected_by_magic_bytes(tmp_path: Path, compress: Any) -> None:
    plain = (FIXTURES / "musique/dev.jsonl").read_bytes()
    # A misleading name: the content decides, never the suffix.
    path = tmp_path / "musique.txt"
    path.write_bytes(compress(plain))
    read = read_file(path, split="dev")
    assert read.fmt == "musique"
    assert [q.id for q in read.questions] == ["2hop__1_2", "3hop1__1_2_3"]
    assert read.sha256 != read_file(FIXTURES / "musique/dev.jsonl", split="dev").sha256


def test_ircot_answer_and_pool_are_read() -> None:
    read = read_file(FIXTURES / "hotpotqa/ircot_dev.jsonl", split="dev")
    q = read.questions[1]
    assert (q.id, q.answer, q.native_type) == ("h6", "yes", None)
    assert q.paragraphs is not None
    assert [p.is_supporting for p in q.paragraphs] == [True, False, True]


def test_2wiki_row_without_context_is_kept_without_a_pool() -> None:
    read = read_file(FIXTURES / "2wikimultihopqa/dev_rows.jsonl", split="dev")
    assert read.questions[1].id == "w5"
    assert read.questions[1].paragraphs is None


def test_detect_format_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match=r"f\.json: unknown format.*'question', 'text'"):
        detect_format({"question": "x", "text": "y"}, "f.json")


# --- errors: each names the file, and the record and field where there is one ----------------


def test_error_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_hotpot()) + "\n" + '{"_id": "q2", "question": \n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 2, column \d+: malformed JSON"):
        read_file(path, split="dev")


def test_error_malformed_json_array_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n {"_id": "q1"},\n {"_id": "q2",,}\n]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json, line 3, column \d+: malformed JSON"):
        read_file(path, split="dev")


def test_error_missing_field_names_file_record_and_field(tmp_path: Path) -> None:
    rec = _hotpot()
    del rec["answer"]
    path = _write(tmp_path / "h.json", [_hotpot(_id="ok"), rec])
    with pytest.raises(
        ValueError, match=r"h\.json, record #1 \(id 'q1'\): field 'answer' is missing"
    ):
        read_file(path, split="dev")


def test_error_missing_id_names_record_position(tmp_path: Path) -> None:
    rec = _hotpot()
    del rec["_id"]
    rec["evidences"] = []  # 2Wiki by its keys; the id is checked first
    ok = _hotpot(_id="w0", evidences=[])
    path = _write(tmp_path / "w.jsonl", [ok, rec], lines=True)
    with pytest.raises(ValueError, match=r"w\.jsonl, line 2: field '_id' is missing"):
        read_file(path, split="dev")


def test_error_wrong_field_type_names_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "h.json", [_hotpot(context="not a list")])
    with pytest.raises(
        ValueError, match=r"h\.json, record #0 \(id 'q1'\): field 'context' must be list"
    ):
        read_file(path, split="dev")


def test_error_malformed_context_item_names_index(tmp_path: Path) -> None:
    rec = _hotpot()
    rec["context"][1] = ["Jon Ask", "a string, not a sentence list"]
    path = _write(tmp_path / "h.json", [rec])
    with pytest.raises(ValueError, match=r"\(id 'q1'\): field 'context\[1\]' must be \[title"):
        read_file(path, split="dev")


def test_error_supporting_title_absent_from_pool(tmp_path: Path) -> None:
    path = _write(tmp_path / "h.json", [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Nobody", 0]])])
    with pytest.raises(
        ValueError,
        match=r"h\.json, record #0 \(id 'q1'\): field 'supporting_facts\[1\]' names title 'Nobody'",
    ):
        read_file(path, split="dev")


def test_error_supporting_sentence_index_out_of_range(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "h.json", [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Jon Ask", 5]])]
    )
    with pytest.raises(
        ValueError,
        match=r"\(id 'q1'\): field 'supporting_facts\[1\]' has sentence index 5, but paragraph "
        r"'Jon Ask' has 2 sentences",
    ):
        read_file(path, split="dev")


def test_lenient_reading_marks_the_defect_instead_of_failing(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "h.json", [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Jon Ask", 5]])]
    )
    read = read_file(path, split="dev", strict=False)
    assert read.questions[0].defect == "supporting_sentence_out_of_range"


def test_error_decomposition_index_not_in_pool(tmp_path: Path) -> None:
    rec = _musique()
    rec["question_decomposition"][1]["paragraph_support_idx"] = 9
    path = _write(tmp_path / "m.jsonl", [rec], lines=True)
    with pytest.raises(
        ValueError,
        match=r"m\.jsonl, line 1 \(id '2hop__7_8'\): field "
        r"'question_decomposition\[1\]\.paragraph_support_idx' is 9",
    ):
        read_file(path, split="dev")


def test_error_musique_paragraph_missing_text(tmp_path: Path) -> None:
    rec = _musique()
    del rec["paragraphs"][1]["paragraph_text"]
    path = _write(tmp_path / "m.json", [rec])
    with pytest.raises(
        ValueError, match=r"\(id '2hop__7_8'\): field 'paragraphs\[1\]\.paragraph_text' is missing"
    ):
        read_file(path, split="dev")


def test_error_ircot_context_missing_flag(tmp_path: Path) -> None:
    rec = json.loads((FIXTURES / "hotpotqa/ircot_dev.jsonl").read_text().splitlines()[0])
    del rec["contexts"][2]["is_supporting"]
    path = _write(tmp_path / "i.jsonl", [rec], lines=True)
    with pytest.raises(
        ValueError, match=r"i\.jsonl, line 1 \(id 'h1'\): field 'contexts\[2\]\.is_supporting'"
    ):
        read_file(path, split="dev")


def test_error_unknown_format_names_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "other.json", [{"title": "x", "body": "y"}])
    with pytest.raises(ValueError, match=r"other\.json: unknown format.*'body', 'title'"):
        read_file(path, split="dev")


def test_error_not_json_names_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text("title,body\nx,y\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"notes\.json: unknown format"):
        read_file(path, split="dev")


def test_error_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"empty\.jsonl: the file is empty"):
        read_file(path, split="dev")


def test_error_empty_array(tmp_path: Path) -> None:
    path = _write(tmp_path / "none.json", [])
    with pytest.raises(ValueError, match=r"none\.json: the file holds no records"):
        read_file(path, split="dev")


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_error_truncated_compression(tmp_path: Path, compress: Any) -> None:
    data = compress(json.dumps([_hotpot()] * 50).encode())
    path = tmp_path / "cut.json"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"cut\.json: the file starts like \w+ data but cannot"):
        read_file(path, split="dev")


def test_error_ragged_pandas_columns(tmp_path: Path) -> None:
    frame = json.loads((FIXTURES / "2wikimultihopqa/dev_columns.json").read_text())
    del frame["answer"]["2"]
    path = _write(tmp_path / "cols.json", frame)
    with pytest.raises(ValueError, match=r"cols\.json: pandas column dict is ragged.*'answer'"):
        read_file(path, split="dev")


def test_error_record_that_is_not_an_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "h.json", [_hotpot(), ["a", "list"]])
    with pytest.raises(ValueError, match=r"h\.json, record #1: expected a JSON object, got list"):
        read_file(path, split="dev")


def test_error_dataset_disagrees_with_registry() -> None:
    with pytest.raises(ValueError, match=r"registered as 'hotpotqa', but its content is 'musique'"):
        read_file(FIXTURES / "musique/dev.jsonl", split="dev", expect_dataset="hotpotqa")


def test_parse_container_locations() -> None:
    raw = (FIXTURES / "hotpotqa/orig_dev_lines.jsonl").read_bytes()
    assert [loc for loc, _ in parse_container(raw, "x")] == ["line 1", "line 2"]
