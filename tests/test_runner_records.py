"""Results records: writing, validation, lookup, formatting and deterministic figures."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import refused

from regime_core.config import ConfigMixin
from regime_core.inputs import Items, Text
from regime_core.inputs.configs import ALPHA, declared
from regime_core.runner.records import (
    RECORD_FILENAME,
    Record,
    get_number,
    hash_file,
    load_record,
    write_record,
)
from regime_core.strict_json import DamagedFileError


@dataclass(frozen=True)
class _DemoConfig(ConfigMixin):
    alpha: float = declared(0.5, ALPHA)
    arms: tuple[str, ...] = declared(("q", "union"), Items(Text()))


NUMBERS = {
    "t2": {"cells": {"B-dominant": {"delta_hit@5": 0.1234, "n": 412}}},
    "label": "B-dominant",
    "significant": True,
}


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    config = _DemoConfig()
    path = write_record(
        tmp_path, name="t2_demo", config=config, numbers=NUMBERS, inputs={"manifest": "ab12"}
    )
    assert path == tmp_path / RECORD_FILENAME
    record = load_record(tmp_path)
    assert record["config"] == {"alpha": 0.5, "arms": ["q", "union"]}
    assert record["config_hash"] == config.config_hash()
    assert record["config_kind"] == "_DemoConfig"
    assert record["inputs"] == {"manifest": "ab12"}
    assert record["numbers"] == NUMBERS
    assert record["versions"]["numpy"] == np.__version__
    assert set(record["versions"]) >= {"torch", "scikit-learn", "sentence-transformers", "python"}
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left no temporary file


def test_record_hash_ignores_timestamp_and_catches_edits(tmp_path: Path) -> None:
    first = load_record(write_record(tmp_path / "a", name="x", config={}, numbers=NUMBERS))
    second = load_record(write_record(tmp_path / "b", name="x", config={}, numbers=NUMBERS))
    assert first["record_hash"] == second["record_hash"]
    changed = {**NUMBERS, "label": "Q-dominant"}
    third = load_record(write_record(tmp_path / "c", name="x", config={}, numbers=changed))
    assert third["record_hash"] != first["record_hash"]

    file = tmp_path / "a" / RECORD_FILENAME
    edited = json.loads(file.read_text())
    edited["numbers"]["t2"]["cells"]["B-dominant"]["delta_hit@5"] = 0.5
    file.write_text(json.dumps(edited))
    with refused(ValueError, names=(str(file),)):
        load_record(file)


@pytest.mark.parametrize(
    ("numbers", "fragment"),
    [
        ({"a": {"b": float("nan")}}, "a.b"),
        ({"a": {"c": np.float64("inf")}}, "a.c"),
        ({"a": {"bad.key": 1.0}}, "a.bad.key"),
        ({"a": [1, 2]}, "'a'"),
        ({"a": None}, "'a'"),
    ],
)
def test_bad_numbers_are_rejected_naming_the_key(
    tmp_path: Path, numbers: dict, fragment: str
) -> None:
    with refused(ValueError, names=(fragment,)):
        write_record(tmp_path, name="x", config={}, numbers=numbers)
    assert not (tmp_path / RECORD_FILENAME).exists()


def test_numpy_scalars_are_stored_as_python_numbers(tmp_path: Path) -> None:
    numbers = {"n": np.int64(7), "x": np.float32(0.25), "flag": np.bool_(True)}
    record = load_record(write_record(tmp_path, name="x", config={}, numbers=numbers))
    assert record["numbers"] == {"n": 7, "x": 0.25, "flag": True}
    assert type(record["numbers"]["n"]) is int


def test_load_record_rejects_bad_structure(tmp_path: Path) -> None:
    file = write_record(tmp_path, name="x", config={}, numbers={"a": 1})
    body = json.loads(file.read_text())
    del body["config_hash"]
    file.write_text(json.dumps(body))
    with refused(ValueError, names=("config_hash",)):
        load_record(file)
    with pytest.raises(FileNotFoundError):
        load_record(tmp_path / "missing")


def test_get_number_and_near_keys() -> None:
    record = {"name": "t2", "numbers": NUMBERS}
    assert get_number(record, "t2.cells.B-dominant.delta_hit@5") == 0.1234
    with refused(KeyError, names=("t2.cells.B-dominant.delta_hit@10", "delta_hit@5")):
        get_number(record, "t2.cells.B-dominant.delta_hit@10")
    with refused(KeyError, names=("t2.cells",)):
        get_number(record, "t2.cells")


def test_a_record_read_is_a_read_only_mapping_with_its_numbers_by_key(tmp_path: Path) -> None:
    file = write_record(tmp_path, name="t2", config={"encoders": ["minilm"]}, numbers=NUMBERS)
    record = load_record(file)
    assert isinstance(record, Record) and record.file == file and record.name == "t2"
    assert record["numbers"] == NUMBERS and dict(record) == json.loads(file.read_text())
    assert record.number("t2.cells.B-dominant.delta_hit@5") == 0.1234
    assert record.has("t2.cells.B-dominant.delta_hit@5") and not record.has("t2.cells")
    assert record.node("t2.cells") == NUMBERS["t2"]["cells"]
    with refused(KeyError, names=("'t2.rows.x'", "'rows'")):
        record.node("t2.rows.x")
    with refused(KeyError, names=("t2.cells.B-dominant.delta_hit@5",)):
        record.node("t2.cells.B-dominant.delta_hit@5")
    assert record.config_text("encoders", lambda field, value: value.upper()) == "MINILM"
    with refused(KeyError, names=("'alpha'",)):
        record.config_text("alpha")
    with pytest.raises(TypeError):
        record["name"] = "other"  # a Record has no item assignment


def test_a_record_lists_its_figures_relative_to_it(tmp_path: Path) -> None:
    figure = tmp_path / "one" / "curve.svg"
    figure.parent.mkdir()
    figure.write_text("<svg/>", encoding="utf-8")
    record = load_record(
        write_record(tmp_path / "one", name="x", config={}, numbers={}, figures=[figure])
    )
    assert record["figures"] == ["curve.svg"]
    with refused(ValueError, names=(str(figure),)):
        write_record(tmp_path / "three", name="x", config={}, numbers={}, figures=[figure])


# --- issue 22: records read strictly -------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda text: text.replace('"numbers": {', '"numbers": {"a": 1, "a": 1, ', 1), "'a'"),
        (lambda text: text.replace('"numbers": {', '"numbers": {"n": NaN, ', 1), "numbers.n"),
        (lambda text: '{"numbers": ' + "[" * 200_000, "100 levels"),
        (lambda text: text.replace('"name": "t2"', '"name": "\\udc80"'), "\\udc80"),
    ],
)
def test_a_record_that_is_not_strict_json_is_damaged_and_named(
    tmp_path: Path, edit: Any, where: str
) -> None:
    path = write_record(tmp_path / "t2", name="t2", config={}, numbers={"x": 1})
    path.write_text(edit(path.read_text()))
    with refused(DamagedFileError, names=(str(path), where, "regime reproduce --only t2 --force")):
        load_record(path)


def test_a_fifo_as_a_record_is_an_error_not_a_hang(tmp_path: Path) -> None:
    import os

    (tmp_path / "t2").mkdir()
    os.mkfifo(tmp_path / "t2" / "record.json")
    with refused(ValueError, names=("record.json", "FIFO")):
        load_record(tmp_path / "t2")


def test_hash_file_says_which_part_of_a_notebook_input_is_missing(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "prepared" / "manifest.json"
    with pytest.raises(FileNotFoundError) as info:
        hash_file(missing)
    message = str(info.value)
    assert f"the directory {tmp_path / 'nonexistent'} does not exist" in message
    assert "work_dir parameter" in message and "regime data prepare --work" in message
    assert hash_file(write_record(tmp_path / "r", name="r", config={}, numbers={"x": 1}))


@pytest.mark.slow
def test_papermill_with_a_work_dir_that_does_not_exist_names_parameter_and_path(
    tmp_path: Path,
) -> None:
    import papermill

    from regime_core import paths

    missing = tmp_path / "nonexistent"
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(paths.REPO_ROOT / "notebooks" / "01_data_regimes.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"work_dir": str(missing), "output_dir": str(tmp_path / "o")},
            cwd=str(paths.REPO_ROOT / "notebooks"),
            kernel_name="python3",
            progress_bar=False,
        )
    message = str(info.value)
    assert f"the directory {missing} does not exist" in message and "work_dir" in message
    assert not missing.exists()


def test_a_missing_number_names_its_nearest_keys_only_when_read(monkeypatch) -> None:
    """Probing for a key a record may lack (the diagnosis does, hundreds of times per book
    build) costs no fuzzy search; the message, when shown, still names the nearest keys."""
    import difflib

    from regime_core.runner.diagnosis import node_keys
    from regime_core.runner.records import MissingNumberError

    numbers = {"c": {"drop": 0.1, "ci_lo": 0.0, "ci_hi": 0.2, "p": 0.04}}
    record = Record({"name": "t", "numbers": numbers})
    searched: list[str] = []
    real = difflib.get_close_matches

    def counting(word, *args, **kwargs):
        searched.append(word)
        return real(word, *args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    keys = node_keys(record, "c")  # probes c.diff, c.p_holm, c.p_value, c.n, ... first
    assert keys == {"estimate": "c.drop", "ci_lo": "c.ci_lo", "ci_hi": "c.ci_hi", "p": "c.p"}
    assert searched == []
    with pytest.raises(MissingNumberError) as raised:
        get_number(record, "c.dorp")
    assert isinstance(raised.value, KeyError)
    assert str(raised.value).startswith("record 't' has no number 'c.dorp'; near keys: c.drop")
    assert searched == ["c.dorp"]
