"""benchmarks/bench_size.py: a line of Python is code, prose (docstring or comment) or blank."""

from __future__ import annotations

from helpers import load_benchmark

SOURCE = '''"""A module docstring
over two lines."""

import os  # a comment after code is code

# a comment on its own line


def f(x):
    """A function's docstring."""
    text = """a string that is
    assigned is code"""
    return x, text, os.sep
'''


def test_each_line_is_counted_once_as_code_prose_or_blank() -> None:
    count_lines = load_benchmark("bench_size").count_lines
    code, prose, blank = count_lines(SOURCE)
    assert (code, prose, blank) == (5, 4, 4)
    assert code + prose + blank == len(SOURCE.splitlines())


def test_the_package_is_split_into_its_wings() -> None:
    bench = load_benchmark("bench_size")
    assert bench.wing_of(bench.PACKAGE / "book" / "figures" / "claims.py") == "book"
    assert bench.wing_of(bench.PACKAGE / "stats.py") == "top-level modules"


def test_raises_and_guard_lines_are_counted() -> None:
    count_defences = load_benchmark("bench_size").count_defences
    source = """def f(x):
    if x < 0:
        raise ValueError(
            "negative"
        )
    if x > 9:
        x = 9
        raise ValueError("big")
    if x == 5:
        raise ValueError("five")
    else:
        return 5
    raise RuntimeError("never")
"""
    # four raises; one guard (the first, four lines): the others assign first or have an else
    assert count_defences(source) == (4, 4)
