"""Issue 22: ``reproduce.yml`` validated like data: relative paths, strict YAML, notebooks named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from regime_core.runner.declarations import load_declarations

DEMO = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "nb").mkdir(exist_ok=True)
    shutil.copyfile(DEMO, tmp_path / "nb" / "demo.ipynb")
    path = tmp_path / "reproduce.yml"
    path.write_text(text, encoding="utf-8")
    return path


RUNS = "runs:\n  demo:\n    notebook: nb/demo.ipynb\n"


@pytest.mark.parametrize(
    ("executed", "match"),
    [
        ("/abs/path", "it must be relative"),
        ("../elsewhere", r"it leaves the declarations file's directory \('\.\.'\)"),
        ("book/../../x", "it leaves"),
        ("~/book", "it must be relative"),
        ("''", "must be a relative path string"),
        (".", "must name a directory below"),
        ("[a]", "must be a relative path string"),
    ],
)
def test_book_executed_dir_must_stay_relative_and_inside(
    tmp_path: Path, executed: str, match: str
) -> None:
    path = _write(tmp_path, f"book_executed_dir: {executed}\n{RUNS}")
    with pytest.raises(ValueError, match=match) as info:
        load_declarations(path)
    assert "book_executed_dir" in str(info.value) and str(path) in str(info.value)


def test_a_relative_book_executed_dir_is_taken_from_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, f"book_executed_dir: out/./executed\n{RUNS}")
    assert load_declarations(path).book_executed_dir == tmp_path.resolve() / "out/executed"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("not json at all", r"demo\.ipynb, line 1, column 1: malformed JSON"),
        ('{"cells": 3}', r"demo\.ipynb: not a notebook"),
        ('{"cells": [], "cells": []}', r"demo\.ipynb, at cells: the key 'cells' appears twice"),
        ("[" * 200_000, r"demo\.ipynb: values nest more than 100"),
    ],
)
def test_a_notebook_that_is_not_one_is_named(tmp_path: Path, content: str, match: str) -> None:
    path = _write(tmp_path, RUNS)
    (tmp_path / "nb" / "demo.ipynb").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        load_declarations(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (RUNS + RUNS.replace("runs:\n", ""), r"line 4: the key 'demo' appears twice"),
        ("runs: &r {}\nbook_executed_dir: *r\n", "alias"),
        ("runs: " + "[" * 100_000, "nest more than 100 levels"),
    ],
)
def test_the_declarations_file_is_read_strictly(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_declarations(_write(tmp_path, text))
