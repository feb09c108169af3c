"""``regime route``: one JSON object, the same decision as the Python call, clear errors; and
``regime route train`` reproducing the packaged model on the full 2Wiki (real data, slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import share_embedding_store

from regime_core.cli import main
from regime_core.router import FEATURE_NAMES, RegimeRouter, save_router
from regime_core.router.model import default_router, default_router_path
from regime_core.router.sentences import split_bridge

QUESTION = "Who is the mother of the director of the film Kestrel Bay?"
BRIDGE = "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti of the Lyon School."
TITLE = "Kestrel Bay (film)"


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_route_json_is_one_object_matching_the_python_call(capsys: Any) -> None:
    code, out, _ = run_cli(
        capsys, "route", "--question", QUESTION, "--bridge", BRIDGE, "--bridge-title", TITLE,
        "--json",
    )  # fmt: skip
    assert code == 0
    assert out.count("\n") == 1
    payload = json.loads(out)
    assert set(payload) == {"action", "probability", "b_rel", "b_rel_index", "features", "alpha",
                            "alpha_rule"}  # fmt: skip
    assert payload["action"] in ("q", "union")
    assert list(payload["features"]) == list(FEATURE_NAMES)
    sentences = split_bridge(BRIDGE)
    assert payload["b_rel"] == sentences[payload["b_rel_index"]]
    expected = default_router().route(QUESTION, sentences, TITLE)
    assert payload["action"] == expected.action
    assert payload["probability"] == expected.probability
    assert payload["features"] == expected.features


def test_route_text_output(capsys: Any) -> None:
    code, out, _ = run_cli(capsys, "route", "--question", QUESTION, "--bridge", BRIDGE)
    assert code == 0
    assert out.startswith("action")
    assert "B_rel [" in out


def _toy_router(tmp_path: Path, union_when_entities: bool) -> Path:
    # A router that says union exactly when the question names at least two entities (column
    # 2 of the features), or the opposite.
    X = np.zeros((8, len(FEATURE_NAMES)))
    X[:, 2] = [0, 1, 2, 3, 0, 1, 2, 3]
    y = (X[:, 2] >= 2).astype(int)
    if not union_when_entities:
        y = 1 - y
    model = RegimeRouter(C=100.0).fit(X, y)
    return save_router(model, tmp_path / "toy.json", dataset="toyworld", label_rule="test")


def test_route_model_option_changes_the_decision(capsys: Any, tmp_path: Path) -> None:
    question = "Did Ana Lind meet Tomas Ruiz in Oslo?"  # three entity spans
    decisions = []
    for union in (True, False):
        path = _toy_router(tmp_path, union)
        code, out, _ = run_cli(
            capsys, "route", "--question", question, "--bridge", "Ana Lind is a poet.",
            "--model", str(path), "--json",
        )  # fmt: skip
        assert code == 0
        decisions.append(json.loads(out)["action"])
    assert decisions == ["union", "q"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--question", "", "--bridge", BRIDGE], "'question'"),
        (["--question", "   ", "--bridge", BRIDGE], "'question'"),
        (["--question", QUESTION, "--bridge", "  "], "'bridge'"),
        (["--bridge", BRIDGE], "needs --question"),
        (["--question", QUESTION, "--bridge", BRIDGE, "--bridge-title", " "], "bridge_title"),
    ],
)
def test_route_input_errors(capsys: Any, argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, "route", *argv, "--json")
    assert code == 2
    assert message in json.loads(out)["error"]  # --json: the error object on stdout
    assert message in err and err.startswith("regime: error:")


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("not json {", "line 1"),
        ('{"format": "regime-router", "format_version": 1}', "'feature_spec'"),
        ("[1, 2]", "bad_model.json"),
    ],
)
def test_route_malformed_model_file(capsys: Any, tmp_path: Path, content: str, named: str) -> None:
    bad = tmp_path / "bad_model.json"
    bad.write_text(content, encoding="utf-8")
    code, _, err = run_cli(
        capsys, "route", "--question", QUESTION, "--bridge", BRIDGE, "--model", str(bad)
    )
    assert code == 2
    assert "bad_model.json" in err and named in err


def test_route_model_with_a_bad_coefficient(capsys: Any, tmp_path: Path) -> None:
    document = json.loads(default_router_path().read_text(encoding="utf-8"))
    document["coef"] = document["coef"][:-1]
    bad = tmp_path / "short.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    code, _, err = run_cli(
        capsys, "route", "--question", QUESTION, "--bridge", BRIDGE, "--model", str(bad)
    )
    assert code == 2
    assert "'coef'" in err


def test_route_missing_model_file(capsys: Any, tmp_path: Path) -> None:
    code, _, err = run_cli(
        capsys, "route", "--question", QUESTION, "--bridge", BRIDGE,
        "--model", str(tmp_path / "absent.json"),
    )  # fmt: skip
    assert code == 2
    assert "absent.json" in err


def test_packaged_model_is_package_data() -> None:
    path = default_router_path()
    assert path.is_file()
    assert path.parent.name == "resources"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["training"]["dataset"] == "2wikimultihopqa"
    assert document["training"]["extra"]["config"]["sample_size"] is None


@pytest.mark.realdata
@pytest.mark.slow
def test_route_train_reproduces_the_packaged_model(real_data_dir: Path, tmp_path: Path) -> None:
    """`regime route train` on the full 2Wiki refits the packaged coefficients (1e-6): a fresh
    work directory (2Wiki prepared again) reading the tests' shared embedding store."""
    out, work = tmp_path / "router.json", tmp_path / "work"
    work.mkdir()
    share_embedding_store(work)
    env = {**os.environ, "REGIME_DATA_DIR": str(real_data_dir), "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "regime_core", "route", "train", "--out", str(out),
         "--work", str(work), "--json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"regime route train (fresh work dir, shared store): {seconds:.0f} s")
    assert summary["prepared"] == ["2wikimultihopqa"]
    fresh = json.loads(out.read_text(encoding="utf-8"))
    packaged = json.loads(default_router_path().read_text(encoding="utf-8"))
    for key in ("coef",):
        np.testing.assert_allclose(fresh[key], packaged[key], rtol=0, atol=1e-6)
    np.testing.assert_allclose(fresh["intercept"], packaged["intercept"], rtol=0, atol=1e-6)
    for key in ("mean", "scale"):
        np.testing.assert_allclose(fresh["scaler"][key], packaged["scaler"][key], rtol=0, atol=1e-6)
    assert fresh["training"]["n"] == packaged["training"]["n"]
    assert fresh["training"]["extra"]["ids_hash"] == packaged["training"]["extra"]["ids_hash"]
    assert fresh["feature_spec"] == packaged["feature_spec"]
