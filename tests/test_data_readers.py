"""Readers: containers, compression, format detection, and the error messages for bad input."""

from __future__ import annotations

import bz2
import copy
import gzip
import json
import lzma
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA_FIXTURES as FIXTURES
from helpers import refused

from regime_core.data.containers import detect_format, parse_container
from regime_core.data.readers import read_file


def _write(path: Path, obj: Any, *, lines: bool = False) -> Path:
    if lines:
        path.write_text("".join(json.dumps(r) + "\n" for r in obj), encoding="utf-8")
    else:
        path.write_text(json.dumps(obj), encoding="utf-8")
    return path


QUESTION = {"question": "Where was the maker of the Tin Lamp born?", "answer": "Orvik"}


def _hotpot(**overrides: Any) -> dict[str, Any]:
    rec = {
        "_id": "q1",
        **QUESTION,
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
        **QUESTION,
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
    with refused(ValueError, names=("f.json", "'question', 'text'")):
        detect_format({"question": "x", "text": "y"}, "f.json")


# --- errors: each names the file, and the record and field where there is one ----------------


def _edited(rec: dict[str, Any], *path: str | int, value: Any = ...) -> dict[str, Any]:
    """A copy of ``rec`` whose field at ``path`` (keys and list indices) is set to ``value``,
    or deleted when no value is given."""
    rec = copy.deepcopy(rec)
    parent = rec
    for key in path[:-1]:
        parent = parent[key]
    if value is ...:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return rec


def _ircot() -> dict[str, Any]:
    return json.loads((FIXTURES / "hotpotqa/ircot_dev.jsonl").read_text().splitlines()[0])


CONTAINER_ERRORS = {  # file name, its text, what the error says
    "malformed_json_line": (
        "bad.jsonl",
        json.dumps(_hotpot()) + "\n" + '{"_id": "q2", "question": \n',
        ("bad.jsonl", "line 2, column"),
    ),
    "malformed_json_array": (
        "bad.json",
        '[\n {"_id": "q1"},\n {"_id": "q2",,}\n]',
        ("bad.json", "line 3, column"),
    ),
    "not_json": ("notes.json", "title,body\nx,y\n", ("notes.json", "format")),
    "empty_file": ("empty.jsonl", "\n  \n", ("empty.jsonl", "empty")),
}


@pytest.mark.parametrize("case", CONTAINER_ERRORS)
def test_error_in_the_container_names_file_and_line(tmp_path: Path, case: str) -> None:
    name, text, names = CONTAINER_ERRORS[case]
    (tmp_path / name).write_text(text, encoding="utf-8")
    with refused(ValueError, names=names):
        read_file(tmp_path / name, split="dev")


RECORD_ERRORS = {  # file name (.jsonl: JSON Lines), its records, what the error names
    "missing_field": (
        "h.json",
        [_hotpot(_id="ok"), _edited(_hotpot(), "answer")],
        ("record #1", "'q1'", "'answer'"),
    ),
    "missing_id_names_the_position": (  # 2Wiki by its keys; the id is checked first
        "w.jsonl",
        [_hotpot(_id="w0", evidences=[]), _edited(_hotpot(evidences=[]), "_id")],
        ("line 2", "'_id'"),
    ),
    "wrong_field_type": (
        "h.json",
        [_hotpot(context="not a list")],
        ("record #0", "'q1'", "'context'"),
    ),
    "malformed_context_item": (
        "h.json",
        [_edited(_hotpot(), "context", 1, value=["Jon Ask", "a string, not a sentence list"])],
        ("record #0", "'q1'", "'context[1][1]'"),
    ),
    "supporting_title_absent_from_pool": (
        "h.json",
        [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Nobody", 0]])],
        ("record #0", "'q1'", "'supporting_facts[1]'", "'Nobody'"),
    ),
    "supporting_sentence_index_out_of_range": (
        "h.json",
        [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Jon Ask", 5]])],
        ("record #0", "'q1'", "'supporting_facts[1]'", "'Jon Ask'"),
    ),
    "decomposition_index_not_in_pool": (
        "m.jsonl",
        [_edited(_musique(), "question_decomposition", 1, "paragraph_support_idx", value=9)],
        ("line 1", "'2hop__7_8'", "'question_decomposition[1].paragraph_support_idx'"),
    ),
    "musique_paragraph_missing_text": (
        "m.json",
        [_edited(_musique(), "paragraphs", 1, "paragraph_text")],
        ("record #0", "'2hop__7_8'", "'paragraphs[1].paragraph_text'"),
    ),
    "ircot_context_missing_flag": (
        "i.jsonl",
        [_edited(_ircot(), "contexts", 2, "is_supporting")],
        ("line 1", "'h1'", "'contexts[2].is_supporting'"),
    ),
    "unknown_format": (
        "other.json",
        [{"title": "x", "body": "y"}],
        ("format", "'body', 'title'"),
    ),
    "empty_array": ("none.json", [], ("no records",)),
    "record_that_is_not_an_object": (
        "h.json",
        [_hotpot(), ["a", "list"]],
        ("record #1", "array"),
    ),
}


@pytest.mark.parametrize("case", RECORD_ERRORS)
def test_error_in_a_record_names_file_record_and_field(tmp_path: Path, case: str) -> None:
    name, records, names = RECORD_ERRORS[case]
    path = _write(tmp_path / name, records, lines=name.endswith(".jsonl"))
    with refused(ValueError, names=(name, *names)):
        read_file(path, split="dev")


def test_lenient_reading_marks_the_defect_instead_of_failing(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "h.json", [_hotpot(supporting_facts=[["Tin Lamp", 0], ["Jon Ask", 5]])]
    )
    read = read_file(path, split="dev", strict=False)
    assert read.questions[0].defect == "supporting_sentence_out_of_range"


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_error_truncated_compression(tmp_path: Path, compress: Any) -> None:
    data = compress(json.dumps([_hotpot()] * 50).encode())
    path = tmp_path / "cut.json"
    path.write_bytes(data[: len(data) // 2])
    with refused(ValueError, names=("cut.json",)):
        read_file(path, split="dev")


def test_error_ragged_pandas_columns(tmp_path: Path) -> None:
    frame = json.loads((FIXTURES / "2wikimultihopqa/dev_columns.json").read_text())
    del frame["answer"]["2"]
    path = _write(tmp_path / "cols.json", frame)
    with refused(ValueError, names=("cols.json", "'answer'")):
        read_file(path, split="dev")


def test_error_dataset_disagrees_with_registry() -> None:
    with refused(ValueError, names=("dev.jsonl", "'hotpotqa'", "'musique'")):
        read_file(FIXTURES / "musique/dev.jsonl", split="dev", expect_dataset="hotpotqa")


def test_parse_container_locations() -> None:
    raw = (FIXTURES / "hotpotqa/orig_dev_lines.jsonl").read_bytes()
    assert [loc for loc, _ in parse_container(raw, "x")] == ["line 1", "line 2"]
