"""Launching a notebook elsewhere: the Colab install cell of the two teaching notebooks, and the
Binder environment (binder/) built in a fresh venv, running the toy world with no prepared data."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest
from test_environment import binder_requirements, cpu_index

ROOT = Path(__file__).resolve().parent.parent
LAUNCHED = ["00_toyworld.ipynb", "08_exercises.ipynb"]  # the notebooks that need no dataset
CELL_ID = "colab-install"


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def repository_address() -> str:
    """The one setting: ``[project.urls] Repository`` in pyproject.toml (absent: unset, "")."""
    return _project().get("urls", {}).get("Repository", "")


def _install_cell(name: str) -> dict[str, Any]:
    cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    matching = [i for i, c in enumerate(cells) if c.get("id") == CELL_ID]
    assert matching, f"{name}: no cell {CELL_ID!r}"
    return {"index": matching[0], **cells[matching[0]]}


def _literal(source: str, name: str) -> str:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            return node.value.value
    raise AssertionError(f"no {name} = '...' in the install cell")


@pytest.mark.parametrize("name", LAUNCHED)
def test_install_cell_comes_first_and_is_hidden(name: str) -> None:
    cell = _install_cell(name)
    # after the title (the page's first cell), before the parameters and the imports
    assert cell["index"] == 1 and cell["cell_type"] == "code"
    assert cell["metadata"].get("tags") == ["remove-cell"]
    assert cell["outputs"] == [] and cell["execution_count"] is None


def test_install_cell_is_the_same_in_both_notebooks() -> None:
    sources = {"".join(_install_cell(name)["source"]) for name in LAUNCHED}
    assert len(sources) == 1


@pytest.mark.parametrize("name", LAUNCHED)
def test_install_cell_holds_the_repository_address(name: str) -> None:
    assert _literal("".join(_install_cell(name)["source"]), "REPOSITORY") == repository_address()


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(args[0] if args else kwargs)


def _run_cell(
    monkeypatch: pytest.MonkeyPatch, *, colab: bool, installed: bool, repository: str
) -> tuple[list[Any], list[Any]]:
    """Execute the cell with REPOSITORY set to ``repository``; (pip commands run, displays)."""
    source = "".join(_install_cell(LAUNCHED[0])["source"])
    source = re.sub(
        r"^REPOSITORY = .*$", f"REPOSITORY = {json.dumps(repository)}", source, flags=re.M
    )
    assert _literal(source, "REPOSITORY") == repository
    runs, displays = _Recorder(), _Recorder()
    monkeypatch.setattr(subprocess, "run", runs)
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", displays)
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    if not installed:
        real = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *a: None if name == "regime_core" else real(name, *a),
        )
    exec(compile(source, "<install cell>", "exec"), {})
    return runs.calls, displays.calls


def test_install_cell_does_nothing_outside_colab(monkeypatch: pytest.MonkeyPatch) -> None:
    for repository in ("", "https://example.org/owner/repo"):
        assert _run_cell(monkeypatch, colab=False, installed=False, repository=repository) == (
            [],
            [],
        )


def test_install_cell_does_nothing_when_the_package_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs, displays = _run_cell(
        monkeypatch, colab=True, installed=True, repository="https://example.org/o/r"
    )
    assert runs == [] and displays == []


def test_install_cell_says_when_the_address_is_not_set(monkeypatch: pytest.MonkeyPatch) -> None:
    runs, displays = _run_cell(monkeypatch, colab=True, installed=False, repository="")
    assert runs == []
    assert len(displays) == 1
    text = displays[0].data
    assert "not set" in text and "[project.urls] Repository" in text


def test_install_cell_installs_from_the_address_with_cpu_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs, displays = _run_cell(
        monkeypatch, colab=True, installed=False, repository="https://example.org/owner/repo"
    )
    assert displays == []
    assert runs == [
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--extra-index-url",
            cpu_index(),
            f"{_project()['name']} @ git+https://example.org/owner/repo",
        ]
    ]


# --- the Binder environment, built for real ---------------------------------------------------


def _local_torch(line: str) -> str:
    """``line``, or for binder's torch wheel address the same wheel in a find-links folder of
    pip's configuration (``PIP_FIND_LINKS``, ``pip config``) when one holds it."""
    from urllib.parse import unquote

    if not line.startswith("torch @ "):
        return line
    wheel = unquote(line.rpartition("/")[2])
    configured = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    folders = os.environ.get("PIP_FIND_LINKS", "").split()
    folders += re.findall(r"find-links='([^']+)'", configured)
    for folder in folders:
        if (Path(folder) / wheel).is_file():
            return f"torch @ {(Path(folder) / wheel).as_uri()}"
    return line


@pytest.mark.slow
def test_binder_environment_runs_the_toy_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """binder/requirements.txt in a fresh venv, as repo2docker installs it (at the top of the
    repository; ipykernel stands in for the Jupyter that Binder's image brings), then the toy
    world with its defaults: MiniLM, and a real dataset that is not prepared here."""
    import papermill
    from test_notebooks_style import check_executed_page

    from regime_core.runner.records import get_number, load_record

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # pip's cache is reused; offline, the torch wheel's address is replaced by the same wheel
    # in pip's find-links folder when it holds it (this machine's local copy)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(_local_torch(line) for line in binder_requirements()) + "\n")
    subprocess.run(
        [
            *(str(python), "-m", "pip", "install", "--quiet", "--retries", "0"),
            *("-r", str(requirements)),
        ],
        cwd=ROOT,  # "." is the checkout, as repo2docker runs it
        check=True,
    )
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    installed = {p["name"].lower(): p["version"] for p in json.loads(listed)}
    assert installed["torch"].endswith("+cpu"), installed["torch"]
    assert not [n for n in installed if n.startswith(("nvidia", "triton", "cuda-"))]
    assert "ray" not in installed and "jupyter-book" not in installed  # no extras

    kernels = tmp_path / "jupyter"
    subprocess.run(
        [str(python), "-m", "ipykernel", "install", "--prefix", str(kernels), "--name", "binder"],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("JUPYTER_PATH", str(kernels / "share" / "jupyter"))
    monkeypatch.delenv("REGIME_WORK_DIR", raising=False)
    monkeypatch.delenv("REGIME_DATA_DIR", raising=False)
    session = tmp_path / "session"  # the launched session's directory: nothing prepared there
    session.mkdir()
    executed = session / "00_toyworld.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "00_toyworld.ipynb"),
        str(executed),
        parameters={"n_questions": 20},  # the defaults otherwise
        cwd=str(session),
        kernel_name="binder",
        progress_bar=False,
    )
    # a hand-run notebook writes under its work directory, named by run and config hash
    written = sorted((session / "_build" / "regime" / "variants").glob("*/*/record.json"))
    assert len(written) == 1, written
    record = load_record(written[0])
    assert record["config"]["encoder"] == "minilm"
    assert get_number(record, "real.available") is False
    assert get_number(record, "union_minus_q.B-dominant.hit@1") > 0
    check_executed_page(executed, record)
    assert os.path.isdir(session / "_build" / "regime")  # its work directory, under the session
