"""``regime demo`` and ``toyworld`` through the dataset commands (TF-IDF: seconds, offline)."""

from __future__ import annotations

import json

import pytest

from regime_core.cli import build_parser, main


def test_demo_json_shows_the_direction_of_the_effect(tmp_path, capsys) -> None:
    code = main(["demo", "--encoder", "tfidf", "--n", "40", "--work", str(tmp_path), "--json"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["config"]["n_questions"] == 40
    gain = payload["union_minus_q"]
    assert gain["B-dominant"]["hit@1"] > 0.2
    assert gain["Q-dominant"]["hit@1"] <= 0.05
    policies = {row["policy"] for row in payload["table"]}
    assert {"q", "union", "knockout", "bridge"} <= policies
    assert payload["router"]  # says which router was used
    assert (tmp_path / "embeddings").is_dir()


def test_demo_text_table(tmp_path, capsys, monkeypatch) -> None:
    """Without --work, the store is the work directory's (issue 44: a second run encodes
    nothing), found by the one rule: here REGIME_WORK_DIR."""
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path / "w"))
    assert main(["demo", "--encoder", "tfidf", "--n", "20", "--router", "toy"]) == 0
    out = capsys.readouterr().out
    assert "B-dominant (n=10)" in out and "Q-dominant (n=10)" in out
    assert "union - q, B-dominant" in out
    assert "router:" in out and "temporary" not in out
    assert (tmp_path / "w" / "embeddings").is_dir()
    assert main(["demo", "--encoder", "tfidf", "--n", "20", "--router", "toy", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["n_encoded"] == 0 and again["n_cached"] > 0, again


def test_demo_rejects_bad_input(capsys) -> None:
    assert main(["demo", "--encoder", "tfidf", "--n", "0"]) == 2
    assert "n_questions" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--encoder", "bge"])


def test_retrieve_accepts_toyworld(tmp_path, capsys) -> None:
    args = ["retrieve", "toyworld", "--arm", "union", "--encoder", "tfidf"]
    assert main([*args, "--work", str(tmp_path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["dataset"] == "toyworld"
    assert payload["n"] > 0
