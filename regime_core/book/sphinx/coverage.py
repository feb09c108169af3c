"""Directive ``regime-interval-coverage``: the coverage of the paired intervals, computed when
the book is built.

The exact coverage over the grid of :mod:`regime_core.coverage` takes well under a second
(:func:`~regime_core.coverage.coverage_grid`), so the statistics section computes it at build
time instead of reading a record: the figure
(:func:`regime_core.book.figures.interval_coverage`, saved under ``<work>/coverage/``) and a
table of each method's minimum coverage over the judged points and where it is reached::

    ```{regime-interval-coverage}
    ```
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from regime_core import coverage
from regime_core.book.sphinx.records import figure_node, work_dir
from regime_core.book.sphinx.tables import table


class CoverageDirective(SphinxDirective):
    """The coverage figure of the old and the new interval, and the minima of every method
    whose coverage is enumerated exactly."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from regime_core.book import figures
        from regime_core.book.figures.statistics import COVERAGE_STYLES

        grid = coverage.coverage_grid()
        fig = figures.interval_coverage(grid)
        out_dir = work_dir(self.env.app) / "coverage"
        path = fig.save(out_dir)
        fig.close()
        figure = figure_node(self, path, fig.alt, fig.caption, "regime-figure")
        minima = coverage.minimum_coverage(grid)
        rows = [
            [
                COVERAGE_STYLES[row.method][0],
                f"{row.minimum:.1%}",
                f"n = {row.n}, ψ = {row.discordance:g}, asymmetry {row.asymmetry:g}",
                f"{row.below_floor} of {row.points}",
            ]
            for row in minima.itertuples()
        ]
        title = (
            f"Exact coverage at the grid points with n·ψ ≥ "
            f"{coverage.MIN_EXPECTED_DISCORDANT:g}, computed when this page was built"
        )
        summary = table(
            [
                "interval",
                "minimum coverage",
                "where",
                f"points below {coverage.COVERAGE_FLOOR:.0%}",
            ],
            rows,
            widths=[30, 16, 34, 20],
            title=title,
        )
        return [figure, summary]
