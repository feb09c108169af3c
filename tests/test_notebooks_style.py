"""One style for every notebook: a plain title, "What this notebook does", plain section titles,
machinery cells removed from the rendering, no plotting code and no raw prints, no outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from regime_core.runner.runs import RUNS

#: Every run's notebook (tests/test_registry.py: every notebook belongs to a run).
NOTEBOOKS = [run.notebook for run in RUNS.values()]


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _tags(cell: dict[str, Any]) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_title_and_overview(path: Path) -> None:
    first = _cells(path)[0]
    assert first["cell_type"] == "markdown"
    title = _source(first).splitlines()[0]
    assert title.startswith("# "), title
    assert not re.match(r"#\s*\d+\s*·", title), f"{path.name}: a number prefix in {title!r}"
    assert "**What this notebook does.**" in _source(first), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_plain_sections_and_no_notebook_numbers_in_prose(path: Path) -> None:
    markdown = [_source(c) for c in _cells(path) if c["cell_type"] == "markdown"]
    headings = [ln for text in markdown for ln in text.splitlines() if ln.startswith("#")]
    for heading in headings:
        assert not re.match(r"#+\s*\d+\.", heading), f"{path.name}: numbered heading {heading!r}"
    assert any(h.strip() == "## Summary" or h.startswith("## Summary") for h in headings)
    for text in markdown:
        assert not re.search(r"[Nn]otebooks? \d\d", text), f"{path.name}: {text[:80]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_machinery_cells_are_removed_from_the_page(path: Path) -> None:
    cells = _cells(path)
    code = [c for c in cells if c["cell_type"] == "code"]
    parameters = [c for c in code if "parameters" in _tags(c)]
    assert len(parameters) == 1, path.name
    assert "remove-cell" in _tags(parameters[0]), path.name
    setup = code[code.index(parameters[0]) + 1]
    assert "remove-cell" in _tags(setup), f"{path.name}: the import cell shows"
    assert "import " in _source(setup)
    for cell in code:
        if "write_record(" in _source(cell) or ".record(" in _source(cell):
            assert "remove-cell" in _tags(cell), f"{path.name}: the record cell shows"
        assert _tags(cell) & {"remove-cell", "remove-input", "hide-input"}, (
            f"{path.name}: a code cell shows its source: {_source(cell)[:60]!r}"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_plotting_code_no_raw_prints_no_outputs(path: Path) -> None:
    for cell in _cells(path):
        if cell["cell_type"] != "code":
            continue
        source = _source(cell)
        assert "plt." not in source and "matplotlib" not in source, path.name
        assert not re.search(r"(?<![\w.])print\(", source), f"{path.name}: print in {source[:60]!r}"
        assert cell["outputs"] == [] and cell["execution_count"] is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_valid_nbformat_with_cell_ids(path: Path) -> None:
    # nbformat 4.5 requires an id on every cell; without one, every read of the notebook
    # (papermill, Jupyter Book) warns and writes a random id into the executed copy
    import nbformat

    with path.open(encoding="utf-8") as handle:
        notebook = json.load(handle)
    assert (notebook["nbformat"], notebook["nbformat_minor"]) >= (4, 5), path.name
    ids = [cell.get("id") for cell in notebook["cells"]]
    assert None not in ids, f"{path.name}: cell {ids.index(None)} has no id"
    assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"
    nbformat.validate(nbformat.from_dict(notebook))


# Shared with the notebook tests that execute notebooks (they import it from here).
def check_executed_page(executed: Path, record: dict[str, Any]) -> None:
    """No stderr, no warning, no progress bar, no absolute path in any output; no bare
    execute_result; every figure the record lists shown as an image."""
    cells = json.loads(executed.read_text(encoding="utf-8"))["cells"]
    images = 0
    for cell in cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            continue  # papermill's cell: its source holds the run's paths, not its outputs
        for output in cell.get("outputs", []):
            kind = output["output_type"]
            assert kind != "stream", f"{executed.name}: a {output.get('name')} stream"
            assert kind != "error", f"{executed.name}: {output.get('ename')}"
            assert kind != "execute_result", f"{executed.name}: a bare cell result"
            data = output.get("data", {})
            images += "image/svg+xml" in data
            text = json.dumps({k: v for k, v in data.items() if k != "image/svg+xml"})
            assert not re.search(r"Warning|it/s\]|Loading weights", text), executed.name
            assert not re.search(r"(?<![\w.])/(tmp|work|home|root)/", text), executed.name
    assert images >= len(record["figures"]), (executed.name, images, record["figures"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_name_a_notebook_imports_from_the_package_exists(path: Path) -> None:
    """A name moved out of a module breaks its notebooks only when they run (the slow tier):
    each ``from regime_core... import name`` of a code cell is resolved here, in the default."""
    import ast
    import importlib
    import importlib.util

    def exists(module_name: str, name: str) -> bool:
        module = importlib.import_module(module_name)
        submodule = f"{module_name}.{name}"
        return hasattr(module, name) or importlib.util.find_spec(submodule) is not None

    missing = []
    for cell in _cells(path):
        if cell["cell_type"] != "code":
            continue
        lines = _source(cell).splitlines()
        tree = ast.parse("\n".join(x for x in lines if not x.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("regime_core"):
                module = node.module or ""
                missing += [f"{module}.{a.name}" for a in node.names if not exists(module, a.name)]
    assert missing == [], f"{path.name} imports names that do not exist: {missing}"
