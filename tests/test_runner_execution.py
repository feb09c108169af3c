"""Notebooks executed at once each reach their own kernel over IPC; the book's copy of an executed
notebook names no folder of the machine that built it."""

from __future__ import annotations

import concurrent.futures as futures
import json
from pathlib import Path
from types import SimpleNamespace

import nbformat

from regime_core.runner.execution import (
    copy_to_book,
    machine_roots,
    run_papermill,
    without_machine_paths,
)
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


# the kernel reports its parameter and its connection file (what it was started with)
_KERNEL_REPORT = """import json
from ipykernel.connect import get_connection_file
connection = json.load(open(get_connection_file()))
print(n, connection["transport"], get_connection_file())"""


def test_notebooks_executed_at_once_each_reach_their_own_kernel_over_ipc(tmp_path: Path) -> None:
    """Issue 46: kernels started at once never race for TCP ports, since none uses one. Six
    notebooks executed together through the runner's function all finish with their own output;
    each kernel's connection file says ``ipc`` and lay in a private folder, gone afterwards."""
    parameters = nbformat.v4.new_code_cell("n = 0", metadata={"tags": ["parameters"]})
    notebook = nbformat.v4.new_notebook(
        cells=[parameters, nbformat.v4.new_code_cell(_KERNEL_REPORT)]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    source = tmp_path / "report.ipynb"
    nbformat.write(notebook, source)
    work = tmp_path / "work"

    def execute(index: int) -> str:
        executed = work / "runs" / f"r{index}" / "executed.ipynb"
        returncode, stderr = run_papermill(
            source, executed, {"n": index}, work=work, kernel_name="python3",
            pid_file=executed.parent / "child.pid",
        )  # fmt: skip
        assert returncode == 0, stderr
        return str(nbformat.read(executed, as_version=4).cells[-1].outputs[0]["text"])

    with futures.ThreadPoolExecutor(6) as pool:
        reports = [text.split() for text in pool.map(execute, range(6))]
    assert [int(n) for n, _, _ in reports] == list(range(6))
    assert {transport for _, transport, _ in reports} == {"ipc"}
    folders = {Path(connection).parent for _, _, connection in reports}
    assert len(folders) == 6
    assert not any(folder.exists() for folder in folders)
