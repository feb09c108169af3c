"""Issue 45, item 8, by input kind: every ``--json`` command given bad input prints exactly one
JSON object naming the error on stdout and exits 2, whatever is bad: a path that is missing, a
file, a directory or a FIFO where another is due, a malformed or wrongly shaped YAML, JSON or CSV
file, an unknown name, a number out of range or beyond any float, an output path that cannot be
written (refused before any work: ``route train --out`` once trained for minutes first).
tests/test_cli_common.py checks one failure per command; this table crosses commands and kinds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from regime_core import cli

#: argument lists, ``{T}`` standing for a directory holding the files of :func:`hostile_dir`
CASES: tuple[tuple[str, ...], ...] = (
    ("verdicts", "--work", "{T}/missing"),
    ("verdicts", "--work", "{T}/a_file"),
    ("verdicts", "--work", "{T}/work", "--claims", "{T}/malformed.yml"),
    ("verdicts", "--work", "{T}/work", "--claims", "{T}/empty.yml"),
    ("verdicts", "--work", "{T}/work", "--claims", "{T}/list.yml"),
    ("verdicts", "--work", "{T}/work", "--claims", "{T}/a_dir"),
    ("verdicts", "--work", "{T}/work", "--claims", "{T}/fifo"),
    ("verdicts", "--work", "{T}/work", "--variant", "no_such_variant"),
    ("verdicts", "--work", "{T}/work", "--dataset", "no_such_set"),
    ("data", "stats", "no_such_dataset", "--work", "{T}/work"),
    ("data", "stats", "2wikimultihopqa", "--work", "{T}/a_file"),
    ("data", "export", "no_such_dataset", "--work", "{T}/work", "--jsonl", "{T}/out.jsonl"),
    ("data", "export", "2wikimultihopqa", "--work", "{T}/work", "--jsonl", "{T}/a_dir"),
    ("data", "prepare", "--work", "{T}/work", "--data-dir", "{T}/missing"),
    ("data", "prepare", "--work", "{T}/work", "--jsonl", "{T}/malformed.json", "--name", "x"),
    ("data", "prepare", "--work", "{T}/work", "--jsonl", "{T}/fifo", "--name", "x"),
    ("data", "prepare", "--work", "{T}/work", "--dataset", "no_such_dataset"),
    ("data", "fetch", "no_such_dataset", "--data-dir", "{T}/a_dir"),
    ("embed", "no_such_dataset", "--work", "{T}/work"),
    ("embed", "2wikimultihopqa", "--work", "{T}/work", "--encoder", "no_such_encoder"),
    ("embed", "2wikimultihopqa", "--work", "{T}/work", "--batch-size", "0"),
    ("embed", "2wikimultihopqa", "--work", "{T}/work", "--batch-size", "9" * 30),
    ("reproduce", "--work", "{T}/work", "--plan", "--profile", "no_such_profile"),
    ("reproduce", "--work", "{T}/work", "--plan", "--only", "no_such_run"),
    ("reproduce", "--work", "{T}/work", "--plan", "--set", "no_equals_sign"),
    ("reproduce", "--work", "{T}/work", "--plan", "--set", "t1_auc_margin.no_such=1"),
    ("reproduce", "--work", "{T}/work", "--plan", "--jobs", "0"),
    ("reproduce", "--work", "{T}/work", "--plan", "--declarations", "{T}/malformed.yml"),
    ("reproduce", "--work", "{T}/work", "--plan", "--declarations", "{T}/list.yml"),
    ("reproduce", "--work", "{T}/work", "--plan", "--declarations", "{T}/fifo"),
    ("reproduce", "--work", "{T}/work", "--plan", "--dataset", "no_such_dataset"),
    ("book", "--work", "{T}/work", "--root", "{T}/missing"),
    ("book", "--work", "{T}/work", "--timing", "{T}/a_dir"),
    ("book", "--work", "{T}/work", "--output", "{T}/a_file"),
    ("retrieve", "no_such_dataset", "--work", "{T}/work"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--k", "0"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--alpha", "nan"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--alpha", "1e400"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--run-file", "{T}/a_dir"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--encoder", "no_such_encoder"),
    ("retrieve", "2wikimultihopqa", "--work", "{T}/work", "--depth", "-1"),
    ("route", "train", "--work", "{T}/work", "--data-dir", "{T}/missing"),
    ("route", "train", "--work", "{T}/work", "--out", "{T}/a_dir"),
    ("route", "train", "--work", "{T}/work", "--out", "{T}/fifo"),
    ("demo", "--work", "{T}/work", "--n", "0"),
    ("demo", "--work", "{T}/work", "--n", "-5"),
    ("demo", "--work", "{T}/work", "--router", "{T}/malformed.json"),
    ("demo", "--work", "{T}/work", "--router", "{T}/fifo"),
    ("demo", "--work", "{T}/work", "--encoder", "no_such_encoder"),
    ("annotate", "sample", "no_such_dataset", "--work", "{T}/work"),
    ("annotate", "sample", "2wikimultihopqa", "--work", "{T}/work", "--n", "0"),
    ("annotate", "sample", "2wikimultihopqa", "--work", "{T}/work", "--out", "{T}/a_dir"),
    ("annotate", "kappa", "{T}/malformed.csv", "--work", "{T}/work"),
    ("annotate", "kappa", "{T}/missing.csv", "--work", "{T}/work"),
    ("annotate", "kappa", "{T}/fifo", "--work", "{T}/work"),
    ("expected", "check", "--work", "{T}/work", "--file", "{T}/malformed.yml"),
    ("expected", "check", "--work", "{T}/work", "--file", "{T}/list.yml"),
    ("expected", "check", "--work", "{T}/work", "--file", "{T}/a_dir"),
    ("expected", "freeze", "--work", "{T}/work", "--file", "{T}/a_dir"),
    ("expected", "check", "--work", "{T}/work", "--declarations", "{T}/malformed.yml"),
    ("verdicts", "--no-such-option"),
    ("no_such_command",),
)


@pytest.fixture
def hostile_dir(tmp_path: Path) -> Path:
    (tmp_path / "a_file").write_text("x", encoding="utf-8")
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "work").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "malformed.yml").write_text("a: [1, 2\n b: }", encoding="utf-8")
    (tmp_path / "empty.yml").write_text("", encoding="utf-8")
    (tmp_path / "list.yml").write_text("- 1\n- 2\n", encoding="utf-8")
    (tmp_path / "malformed.json").write_text("{", encoding="utf-8")
    (tmp_path / "malformed.csv").write_bytes(b"a,b\n1\n\x00\x00")
    return tmp_path


def test_the_table_reaches_every_json_command() -> None:
    from test_cli_common import _json_commands

    reached = {case[: len(prefix)] for case in CASES for prefix, _ in _json_commands()}
    missing = [" ".join(p) for p, _ in _json_commands() if p not in reached]
    assert missing == [] and len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c) for c in CASES])
def test_bad_input_prints_one_json_error_and_exits_2(
    case: tuple[str, ...], hostile_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [word.replace("{T}", str(hostile_dir)) for word in case] + ["--json"]
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse: a usage error
        code = exit_.code
    payload = json.loads(capsys.readouterr().out)  # exactly one object, nothing else
    assert code == 2 and isinstance(payload, dict) and payload["error"]


def test_route_train_refuses_its_output_before_it_trains(
    hostile_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from regime_core.experiments import router_train

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("the router was trained before --out was checked")

    monkeypatch.setattr(router_train, "train_router", no_training)
    argv = ["route", "train", "--work", str(hostile_dir / "work"), "--out"]
    assert cli.main([*argv, str(hostile_dir / "a_dir"), "--json"]) == 2
    assert "--out" in json.loads(capsys.readouterr().out)["error"]
