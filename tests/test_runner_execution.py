"""The book's copy of an executed notebook names no folder of the machine that built it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from regime_core.runner.execution import copy_to_book, machine_roots, without_machine_paths
from regime_core.runner.stamps import executed_path


def test_every_path_under_a_root_becomes_its_placeholder_the_deepest_first() -> None:
    roots = [("<repository>", Path("/m/repo")), ("<work>", Path("/m/repo/_build/regime"))]
    notebook = {
        "cells": [{"source": ["output_dir = '/m/repo/_build/regime/results/t1'\n"]}],
        "metadata": {"papermill": {"input_path": "/m/repo/notebooks/02.ipynb", "n": 3}},
        "outputs": ["/m/repository/x", "/m/repo-old/y", "/m/repo"],
    }
    assert without_machine_paths(notebook, roots) == {
        "cells": [{"source": ["output_dir = '<work>/results/t1'\n"]}],
        "metadata": {"papermill": {"input_path": "<repository>/notebooks/02.ipynb", "n": 3}},
        # a sibling whose name only starts like a root is another folder, left alone
        "outputs": ["/m/repository/x", "/m/repo-old/y", "<repository>"],
    }
    # the root of the file system is never a placeholder's folder
    assert without_machine_paths("/etc/x", [("<root>", Path("/"))]) == "/etc/x"


def test_the_copy_for_the_book_carries_no_path_of_this_machine(tmp_path: Path) -> None:
    repo, work = tmp_path / "repo", tmp_path / "repo" / "_build" / "regime"
    executed = executed_path(work, "t1")
    executed.parent.mkdir(parents=True)
    (repo / "notebooks").mkdir(parents=True)
    papermill = {"input_path": str(repo / "notebooks" / "t1.ipynb"), "cwd": str(repo)}
    cell = {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "outputs": []}
    cell["source"] = [f'work_dir = "{work}"\n', f'output_dir = "{work / "results" / "t1"}"\n']
    executed.write_text(
        json.dumps({"cells": [cell], "metadata": {"papermill": papermill}}), encoding="utf-8"
    )
    decl = SimpleNamespace(
        root=repo,
        runs={"t1": SimpleNamespace(notebook=repo / "notebooks" / "t1.ipynb")},
    )
    copy_to_book(decl, "t1", work)  # type: ignore[arg-type]
    text = (work / "book" / "executed" / "t1.ipynb").read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    copied = json.loads(text)
    assert copied["cells"][0]["source"] == [
        'work_dir = "<work>"\n',
        'output_dir = "<work>/results/t1"\n',
    ]
    assert copied["metadata"]["papermill"]["input_path"] == "<repository>/notebooks/t1.ipynb"
    assert copied["metadata"]["regime"]["source"] == "notebooks/t1.ipynb"
    assert ("<work>", work.resolve()) in machine_roots(decl, work)  # type: ignore[arg-type]
