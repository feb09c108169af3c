"""The two teaching notebooks (toy world, exercises) execute with papermill on the toy world alone
(TF-IDF, no real data: seconds) and show results only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regime_core.runner.declarations import notebook_defaults
from regime_core.runner.identity import variant_hash
from regime_core.runner.records import get_number, load_record
from regime_core.runner.runs import RUNS

pytestmark = pytest.mark.slow


def _execute(run_id: str, out: Path, **parameters: Any) -> tuple[Path, dict[str, Any]]:
    import papermill

    notebook = RUNS[run_id].notebook
    out.mkdir(parents=True, exist_ok=True)
    executed = out / notebook.name
    papermill.execute_notebook(
        str(notebook),
        str(executed),
        parameters={"output_dir": str(out), "work_dir": str(out / "work"), **parameters},
        cwd=str(notebook.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    return executed, load_record(out / "record.json")


def test_toy_world_notebook(tmp_path: Path) -> None:
    from test_notebooks_style import check_executed_page

    executed, record = _execute(
        "toyworld", tmp_path, encoder="tfidf", real_dataset=None, n_questions=20
    )
    assert get_number(record, "real.available") is False
    assert get_number(record, "union_minus_q.B-dominant.hit@1") > 0
    assert {"regimes_toy.svg", "knockout.svg", "sweep_alpha.svg"} <= set(record["figures"])
    check_executed_page(executed, record)


def test_exercises_notebook_has_a_neither_question(tmp_path: Path) -> None:
    from test_notebooks_style import check_executed_page

    executed, record = _execute(
        "exercises",
        tmp_path,
        encoder="tfidf",
        real_dataset=None,
        n_questions=20,
        n_predict=4,
        my_predictions={"T1": "B"},
    )
    counts = record["numbers"]["exercise1"]["toyworld"]
    assert counts.get("neither") == 1 and sum(counts.values()) == 5
    assert get_number(record, "exercise1_score.shown") == 5
    check_executed_page(executed, record)


def test_exercises_refuse_invalid_answers_with_a_message_and_score_the_rest(
    tmp_path: Path,
) -> None:
    """An answer that names no regime and a label not shown are refused with a message (no
    traceback stops the notebook); the valid answer is scored, and every question has a reason
    in the recorded answer key."""
    import json

    executed, record = _execute(
        "exercises",
        tmp_path,
        encoder="tfidf",
        real_dataset=None,
        n_questions=20,
        n_predict=4,
        my_predictions=json.dumps({"T1": "X", "Z9": "B", "T2": "q"}),
    )
    assert get_number(record, "exercise1_score.answered") == 1
    assert get_number(record, "exercise1_score.refused") == 2
    key = record["numbers"]["answer_key"]
    assert len(key) == 5 and all(
        row["reason"].endswith(f"{row['regime']}.") for row in key.values()
    )
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    shown = "".join(
        "".join(out.get("data", {}).get("text/markdown", ""))
        for cell in cells
        for out in cell.get("outputs", [])
    )
    assert "T1: 'X' is not an answer" in shown and "Z9 is not a question shown here" in shown
    assert "Your score: " in shown and "right of 1 answered" in shown
    assert not any(out.get("output_type") == "error" for c in cells for out in c.get("outputs", []))


def test_a_notebook_run_by_hand_writes_its_variant_s_folder(tmp_path: Path) -> None:
    """No output_dir (a user's papermill call): the record goes to <work>/variants/<run>/<hash>,
    not beside the notebook, and the same parameters find the same folder."""
    import papermill

    from regime_core import paths

    notebook = RUNS["exercises"].notebook
    parameters = {"encoder": "tfidf", "real_dataset": None, "n_questions": 20, "n_predict": 4}
    papermill.execute_notebook(
        str(notebook),
        str(tmp_path / notebook.name),
        parameters={"work_dir": str(tmp_path / "work"), **parameters},
        cwd=str(notebook.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    config = RUNS["exercises"].config.from_parameters(**parameters)
    defaults = notebook_defaults(notebook)
    inputs = RUNS["exercises"].inputs({**defaults, **parameters}, tmp_path / "work")
    folder = paths.variant_dir(
        "exercises", variant_hash(config.config_hash(), inputs), tmp_path / "work"
    )
    record = load_record(folder)
    assert record["config_hash"] == config.config_hash() and record["name"] == "exercises"
    assert not (notebook.parent / "_output").exists() and not (notebook.parent / "results").exists()
