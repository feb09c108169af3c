"""Issue 45, item 6: the shared table ``tests/route_refusals.json`` through ``regime route``.

``tests/js/route_refusals.test.js`` runs the same table through ``node router.js``
(``tests/test_router_js.py`` runs the Node suites), so both refuse exactly alike: the same exit
status, the same error line and one JSON object with ``--json``, for sizes, nesting, numbers,
fields and seals (``tests/route_refusals.py`` generates the cases, at least 30 a class).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from route_refusals import (
    CAP,
    TABLE,
    argv_of,
    build_cases,
    model_text,
    one_line,
)

from regime_core import limits
from regime_core.cli import main as regime_main
from regime_core.router.model import default_router_path

CASES: list[dict[str, Any]] = json.loads(TABLE.read_text(encoding="utf-8"))["cases"]


def test_the_table_is_the_generated_one_and_each_class_has_30_cases() -> None:
    recorded = [{k: v for k, v in c.items() if k not in ("status", "line")} for c in CASES]
    assert recorded == json.loads(json.dumps(build_cases()))
    assert CAP == limits.MAX_QUESTION_CHARS == limits.MAX_TITLE_CHARS
    assert min(Counter(c["class"] for c in CASES).values()) >= 30


@pytest.mark.parametrize("case", CASES, ids=[f"{c['class']}: {c['name']}" for c in CASES])
def test_regime_route_judges_the_case_as_the_table_says(
    case: dict[str, Any], tmp_path: Path, capsys: Any
) -> None:
    model = None
    if "model" in case:
        model = tmp_path / "model.json"
        packaged = default_router_path().read_text(encoding="utf-8")
        model.write_text(model_text(case["model"], packaged), encoding="utf-8")
    code = regime_main(["route", *argv_of(case, model), "--json"])
    out, err = capsys.readouterr()
    assert code == case["status"], err
    if code == 0:
        assert err == "" and "action" in json.loads(out)
        return
    line = case["line"].replace("{model}", str(model))
    assert one_line(err.removeprefix("regime: error: ")) == line
    assert err.startswith("regime: error: ") and err.count("\n") >= 1
    (obj,) = [json.loads(text) for text in out.splitlines()]  # exactly one JSON object
    assert obj["command"] == "route" and one_line(obj["error"]) == line
