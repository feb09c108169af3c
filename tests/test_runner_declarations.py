"""Issue 22: ``reproduce.yml`` validated like data: relative paths, strict YAML, notebooks named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import refused

from regime_core.runner.declarations import load_declarations

DEMO = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "nb").mkdir(exist_ok=True)
    shutil.copyfile(DEMO, tmp_path / "nb" / "demo.ipynb")
    path = tmp_path / "reproduce.yml"
    path.write_text(text, encoding="utf-8")
    return path


RUNS = "runs:\n  demo:\n    notebook: nb/demo.ipynb\n"


def test_the_file_names_no_output_location(tmp_path: Path) -> None:
    """Where runs write is the work directory's (issue 44): a ``book_executed_dir`` is refused
    as an unknown field, naming the file."""
    path = _write(tmp_path, f"book_executed_dir: book/executed\n{RUNS}")
    with refused(ValueError, names=(str(path), "'book_executed_dir'")):
        load_declarations(path)


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("not json at all", "line 1, column 1"),
        ('{"cells": 3}', "cells"),
        ('{"cells": [], "cells": []}', "'cells'"),
        ("[" * 200_000, "100 levels"),
    ],
)
def test_a_notebook_that_is_not_one_is_named(tmp_path: Path, content: str, where: str) -> None:
    path = _write(tmp_path, RUNS)
    (tmp_path / "nb" / "demo.ipynb").write_text(content, encoding="utf-8")
    with refused(ValueError, names=("demo.ipynb", where)):
        load_declarations(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (RUNS + RUNS.replace("runs:\n", ""), "line 4: the key 'demo'"),
        ("base: &r {}\nruns: *r\n", "alias"),
        ("runs: " + "[" * 100_000, "100 levels"),
    ],
)
def test_the_declarations_file_is_read_strictly(tmp_path: Path, text: str, where: str) -> None:
    with refused(ValueError, names=(where,)):
        load_declarations(_write(tmp_path, text))


def _notebook_with_parameters(tmp_path: Path, source: str) -> Path:
    import json

    cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": source}
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "params.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_parameters_are_the_top_level_names_in_order(tmp_path: Path) -> None:
    from regime_core.runner.declarations import notebook_parameters

    source = (
        "alpha = 0.25  # frozen\nprofile: str = 'quick'\nif True:\n    hidden = 1\nalpha = 0.5\n"
    )
    assert notebook_parameters(_notebook_with_parameters(tmp_path, source)) == ["alpha", "profile"]


def test_a_parameters_cell_that_is_not_python_is_named(tmp_path: Path) -> None:
    from regime_core.runner.declarations import notebook_parameters

    path = _notebook_with_parameters(tmp_path, "alpha = = 1\n")
    with refused(ValueError, names=("params.ipynb", "'parameters'")):
        notebook_parameters(path)


def test_every_shipped_notebook_gives_the_names_papermill_reads() -> None:
    """Our reading (ast, so that Binder needs no papermill) against papermill's own parser."""
    import papermill

    from regime_core.runner.declarations import notebook_parameters

    notebooks = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 10
    for notebook in notebooks:
        assert notebook_parameters(notebook) == list(papermill.inspect_notebook(str(notebook))), (
            notebook.name
        )
