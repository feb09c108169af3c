"""The reproduce runner: declarations, the DAG, run keys, and (slow) real papermill runs."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import refused

from regime_core.cli import reproduce as cli_reproduce
from regime_core.runner.declarations import load_declarations, topological_order
from regime_core.runner.execution import describe_failure
from regime_core.runner.keys import run_keys
from regime_core.runner.reproduce import reproduce

DEMO = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"


def _declare(tmp_path: Path, runs: dict, notebook: Path = DEMO) -> Path:
    """Write reproduce.yml in tmp_path with a copy of the demo notebook beside it."""
    local = tmp_path / "nb" / notebook.name
    if not local.exists():
        local.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, local)
    body: dict[str, Any] = {"runs": {}}
    for run_id, spec in runs.items():
        body["runs"][run_id] = {"notebook": f"nb/{notebook.name}", **spec}
    path = tmp_path / "reproduce.yml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


# --- the DAG -------------------------------------------------------------------------------------


def test_topological_order_follows_dependencies_and_declaration_order() -> None:
    deps = {"c": ["b"], "a": [], "b": ["a"], "d": []}
    assert topological_order(deps) == ["a", "b", "c", "d"]


def test_cycle_is_detected_and_named() -> None:
    with refused(ValueError, names=("a -> b -> c -> a",)):
        topological_order({"a": ["b"], "b": ["c"], "c": ["a"]})


def test_unknown_dependency_is_named() -> None:
    with refused(ValueError, names=("'b'", "'zzz'")):
        topological_order({"a": [], "b": ["zzz"]})


# --- declarations --------------------------------------------------------------------------------


def test_declarations_reject_bad_input(tmp_path: Path) -> None:
    for entry, names in (
        ({"notebook": "nb/nope.ipynb"}, ("nb/nope.ipynb",)),
        ({"parameters": {"colour": 1}}, ("parameters", "['colour']")),
        ({"profiles": {"huge": {}}}, ("profiles", "huge")),
        ({"depends": ["y"]}, ("depends",)),
    ):
        with refused(ValueError, names=("'x'", *names)):
            load_declarations(_declare(tmp_path, {"x": entry}))
    with refused(ValueError, names=("reproduce.yml", "x -> x")):
        load_declarations(_declare(tmp_path, {"x": {"depends_on": ["x"]}}))


def test_notebook_must_declare_output_dir(tmp_path: Path) -> None:
    notebook = json.loads(DEMO.read_text())
    for cell in notebook["cells"]:
        if "parameters" in cell["metadata"].get("tags", []):
            cell["source"] = "n_points = 3\n"
    no_output = tmp_path / "no_output.ipynb"
    no_output.write_text(json.dumps(notebook))
    with refused(ValueError, names=("'output_dir'",)):
        load_declarations(_declare(tmp_path, {"x": {}}, notebook=no_output))


def test_repository_declarations_are_valid() -> None:
    decl = load_declarations()
    assert decl.runs, "reproduce.yml declares no runs"
    for spec in decl.runs.values():
        assert spec.notebook.is_file()


# --- keys ----------------------------------------------------------------------------------------


def _keys(path: Path, work: Path, profile: str = "default") -> dict[str, str]:
    return {
        rid: info["key"] for rid, info in run_keys(load_declarations(path), profile, work).items()
    }


def test_keys_follow_parameters_profiles_upstream_and_data(tmp_path: Path) -> None:
    work = tmp_path / "work"
    runs = {"a": {"parameters": {"n_points": 5}}, "b": {"depends_on": ["a"]}, "c": {}}
    base = _keys(_declare(tmp_path, runs), work)
    assert len(set(base.values())) == 3

    runs["a"]["parameters"]["n_points"] = 6
    changed = _keys(_declare(tmp_path, runs), work)
    assert changed["a"] != base["a"]
    assert changed["b"] != base["b"]  # downstream of a change
    assert changed["c"] == base["c"]  # independent of it

    assert _keys(_declare(tmp_path, runs), work, "quick")["c"] != changed["c"]

    (work / "prepared").mkdir(parents=True)
    (work / "prepared" / "manifest.json").write_text('{"hotpotqa": 1}')
    with_data = _keys(_declare(tmp_path, runs), work)
    assert all(with_data[r] != changed[r] for r in runs)


def test_keys_ignore_markdown_but_not_code(tmp_path: Path) -> None:
    path = _declare(tmp_path, {"a": {}})
    notebook_file = tmp_path / "nb" / DEMO.name
    before = _keys(path, tmp_path / "work")["a"]
    notebook = json.loads(notebook_file.read_text())
    notebook["cells"][0]["source"] = "# A retitled demo\n"
    notebook_file.write_text(json.dumps(notebook))
    assert _keys(path, tmp_path / "work")["a"] == before
    notebook["cells"][2]["source"] += "\nz = 1"
    notebook_file.write_text(json.dumps(notebook))
    assert _keys(path, tmp_path / "work")["a"] != before


def test_describe_failure_counts_source_cells(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {"tags": ["papermill-error-cell-tag"]}, "source": ""},
        {"cell_type": "markdown", "metadata": {}, "source": "# title"},
        {
            "cell_type": "code",
            "metadata": {"tags": ["parameters"]},
            "source": "x = 1",
            "outputs": [],
        },
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "x = 2"},
        {
            "cell_type": "code",
            "metadata": {},
            "source": ["y = 1 / 0\n"],
            "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "boom"}],
        },
    ]
    executed = tmp_path / "out.ipynb"
    executed.write_text(json.dumps({"cells": cells, "metadata": {}}))
    message = describe_failure(executed, Path("nb/x.ipynb"))
    assert message is not None
    assert "cell 2" in message
    assert "ZeroDivisionError: boom" in message
    assert "nb/x.ipynb" in message


# --- real runs (papermill) -----------------------------------------------------------------------


@pytest.mark.slow
def test_runs_in_order_skip_when_unchanged_and_rerun_downstream(tmp_path: Path) -> None:
    work = tmp_path / "work"
    runs = {
        "a": {"parameters": {"n_points": 5, "make_figure": False}},
        "b": {"parameters": {"make_figure": False}, "depends_on": ["a"]},
        "c": {"parameters": {"n_points": 4, "make_figure": False}},
    }
    lines: list[str] = []
    first = reproduce(_declare(tmp_path, runs), work=work, jobs=2, progress=lines.append)
    assert first.ok, first.table()
    assert [r.status for r in first.results] == ["ran", "ran", "ran"]
    finished = [ln.split()[0] for ln in lines if " ran in " in ln]
    assert finished.index("a:") < finished.index("b:")
    record = json.loads((work / "results" / "a" / "record.json").read_text())
    assert record["numbers"]["counts"]["points"] == 5
    copied = json.loads((work / "book" / "executed" / "b.ipynb").read_text())
    assert copied["metadata"]["regime"]["source"] == f"nb/{DEMO.name}"
    stamp = json.loads((work / "runs" / "b" / "stamp.json").read_text())
    assert copied["metadata"]["regime"]["executed_sha256"] == stamp["outputs"]["executed"]
    # every state in the work directory (issue 44): nothing beside the declarations
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb", "reproduce.yml", "work"]
    # profiling beside each run (benchmarks/bench_build.py): the child's CPU seconds, measured
    timing = json.loads((work / "runs" / "a" / "timing.json").read_text())
    assert (timing["run"], timing["returncode"]) == ("a", 0)
    assert timing["user_seconds"] > 0 and timing["wall_seconds"] > 0
    assert not (work / "runs" / "a" / "encodes.jsonl").exists()

    second = reproduce(_declare(tmp_path, runs), work=work, progress=None)
    assert [r.status for r in second.results] == ["skipped", "skipped", "skipped"]

    runs["a"]["parameters"]["n_points"] = 6
    third = reproduce(_declare(tmp_path, runs), work=work, progress=None)
    assert {r.run_id: r.status for r in third.results} == {
        "a": "ran",
        "b": "ran",
        "c": "skipped",
    }
    only = reproduce(_declare(tmp_path, runs), work=work, only=["c"], force=True, progress=None)
    assert {r.run_id: r.status for r in only.results} == {"c": "ran"}


@pytest.mark.slow
def test_failure_names_cell_and_error_and_blocks_downstream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = {
        "broken": {"parameters": {"fail": True, "make_figure": False}},
        "after": {"depends_on": ["broken"]},
    }
    path = _declare(tmp_path, runs)
    parser = argparse.ArgumentParser(prog="regime")
    cli_reproduce.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["reproduce", "--declarations", str(path), "--work", str(tmp_path / "w"), "--json"]
    )
    assert args.func(args) == 1
    report = json.loads(capsys.readouterr().out)
    by_run = {r["run"]: r for r in report["runs"]}
    assert by_run["broken"]["status"] == "failed"
    assert "cell 2" in by_run["broken"]["error"]
    assert "ValueError: demo failure requested" in by_run["broken"]["error"]
    assert by_run["after"]["status"] == "blocked"
    assert not (tmp_path / "w" / "runs" / "broken" / "stamp.json").exists()
    assert not (tmp_path / "w" / "book" / "executed" / "broken.ipynb").exists()


def test_a_record_read_from_other_data_than_its_key_is_never_stamped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: the data changed while the notebook ran (its record's inputs.manifest is not
    the manifest the run was keyed on): the run fails and is not stamped, so it reruns. The
    notebook's child is a stand-in that leaves what papermill would."""
    from regime_core.runner import execution
    from regime_core.runner.records import write_record

    work = tmp_path / "w"

    def notebook_that_read_other_data(command: list[str], **_: object) -> tuple[int, str]:
        Path(command[1]).write_text(DEMO.read_text())  # the executed notebook
        write_record(work / "runs" / "x" / "staging", name="x", config={}, numbers={"n": 1},
                     inputs={"manifest": "0" * 64})  # fmt: skip
        return 0, ""

    monkeypatch.setattr(execution, "run_child", notebook_that_read_other_data)
    (result,) = reproduce(_declare(tmp_path, {"x": {}}), work=work, progress=None).results
    assert result.status == "failed"
    assert "inputs.manifest is not the one the run was keyed on" in (result.error or "")
    assert not (work / "runs" / "x" / "stamp.json").exists()
    assert not (work / "book" / "executed" / "x.ipynb").exists()
