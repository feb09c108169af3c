"""benchmarks/bench_imports.py: the import circles between regime_core's modules, lazy imports
included, a package's own re-export loop apart."""

from __future__ import annotations

from pathlib import Path

from helpers import load_benchmark

PACKAGE = {
    "__init__.py": "",
    "a.py": "def f():\n    from pkg import b  # a lazy import is an edge too\n",
    "b.py": "from .c import VALUE\n",
    "c.py": "import pkg.a\nVALUE = 1\n",
    "d.py": "from pkg.a import f\n",  # reaches the circle, is not in it
    "shapes/__init__.py": "from pkg.shapes.square import SIDE\n",
    "shapes/square.py": "from pkg import shapes\nSIDE = 2\n",
}


def test_a_circle_through_a_lazy_import_is_found_and_a_package_loop_told_apart(
    tmp_path: Path,
) -> None:
    bench = load_benchmark("bench_imports")
    for name, text in PACKAGE.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    graph = bench.module_graph(tmp_path / "pkg")
    assert graph["pkg.d"] == {"pkg.a"} and graph["pkg.shapes.square"] == {"pkg.shapes"}
    found = bench.circles(graph)
    assert found == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.shapes", "pkg.shapes.square"]]
    assert [bench.is_package_loop(c) for c in found] == [False, True]


def test_no_module_is_in_a_circle_but_the_figure_and_table_packages_loops() -> None:
    """Issue 47 allows the loops of book/figures and book/tables (a package's ``__init__`` and
    its modules); no other import circle is left."""
    bench = load_benchmark("bench_imports")
    found = bench.circles(bench.module_graph())
    loops = [c[0] for c in found if bench.is_package_loop(c)]
    assert set(loops) <= {"regime_core.book.figures", "regime_core.book.tables"}
    assert [c for c in found if not bench.is_package_loop(c)] == []
