"""The package's docstrings as the API pages render them, checked without building the book
(the slow tier's tests/test_book_pages.py reads the built pages)."""

from __future__ import annotations

import ast
from pathlib import Path

from regime_core import paths

PACKAGE = paths.REPO_ROOT / "regime_core"


def literal_block_markup(docstring: str) -> list[str]:
    """Lines of a reST literal block (the indented lines after a paragraph ending in ``::``)
    that hold inline markup: a literal block shows it as typed, so a reader sees the backticks."""
    found = []
    lines = docstring.expandtabs().splitlines()
    in_block, indent = False, 0
    for line in lines:
        stripped = line.strip()
        width = len(line) - len(line.lstrip())
        if in_block and stripped and width <= indent:
            in_block = False
        shown = line.replace("```", "")  # a MyST fence in an example is meant to be shown
        if in_block and ("``" in shown or ":func:`" in shown or ":class:`" in shown):
            found.append(stripped)
        if stripped.endswith("::") and not in_block:
            in_block, indent = True, width
    return found


def test_literal_block_markup_finds_backticks_in_a_block_only() -> None:
    text = "Layout::\n\n    W/a   the ``record``\n    ```{rec}\n\nand ``this`` is prose"
    assert literal_block_markup(text) == ["W/a   the ``record``"]


def test_no_docstring_shows_markup_in_a_literal_block() -> None:
    problems = []
    for file in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        nodes = [tree, *ast.walk(tree)]
        for node in nodes:
            if not isinstance(
                node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
            ):
                continue
            doc = ast.get_docstring(node, clean=True)
            for line in literal_block_markup(doc or ""):
                problems.append(f"{Path(file).relative_to(paths.REPO_ROOT)}: {line}")
    assert problems == []
