"""Directive ``regime-interval-coverage``: the coverage of the paired intervals, computed when
the book is built.

The exact coverage over the grid of :mod:`regime_core.coverage` takes well under a second
(:func:`~regime_core.coverage.coverage_grid`), so the statistics section computes it at build
time instead of reading a record: the figure
(:func:`regime_core.book.figures.interval_coverage`, saved under ``<work>/coverage/``) and a
table per set of points (the grid, and the book's own sample sizes read from the records) of
each method's mean and minimum coverage, share of points far below the nominal level and mean
width, the one :data:`regime_core.coverage.SELECTION_RULE` picks marked::

    ```{regime-interval-coverage}
    ```
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from regime_book.records import figure_node, work_dir
from regime_book.tables import table
from regime_core import coverage


class CoverageDirective(SphinxDirective):
    """The coverage figure of the old and the new interval, and the summaries of every method
    whose coverage is enumerated exactly."""

    def run(self) -> list[nodes.Node]:
        from regime_core.book import figures

        grid = coverage.coverage_grid(widths=True)
        fig = figures.interval_coverage(grid)
        out_dir = work_dir(self.env.app) / "coverage"
        path = fig.save(out_dir)
        fig.close()
        figure = figure_node(self, path, fig.alt, fig.caption, "regime-figure")
        tables = [self._summary(grid, "over the grid")]
        sizes = self._book_sizes()
        if sizes:
            at_book = coverage.coverage_grid(sizes, widths=True)
            tables.append(
                self._summary(at_book, f"at the book's sizes (n = {', '.join(map(str, sizes))})")
            )
        return [figure, *tables]

    def _book_sizes(self) -> list[int]:
        """The number of questions of every comparison claim judged on counts (none when the
        records are missing: the page then shows the grid alone)."""
        from regime_book.claims import page_claims
        from regime_book.records import RECORD_PROBLEMS, page_records
        from regime_core.runner.ledger import claim_counts

        try:
            _, claims = page_claims(self.env)
            records, _ = page_records(self.env, list(dict.fromkeys(c.run for c in claims)))
            found = [claim_counts(claim, records[claim.run]) or {} for claim in claims]
        except RECORD_PROBLEMS:
            return []
        return sorted({c.n for counts in found for c in counts.values()})

    def _summary(self, grid: Any, where: str) -> nodes.table:
        from regime_core.book.figures.statistics import COVERAGE_STYLES

        summary = coverage.coverage_summary(grid)
        chosen = coverage.select_interval(summary)
        rows = [
            [
                COVERAGE_STYLES[row.method][0] + (" (chosen)" if row.method == chosen else ""),
                f"{row.mean:.1%}",
                f"{row.minimum:.1%}",
                f"{row.far_below:.0%}",
                f"{100 * row.mean_width:.2f} pp",
            ]
            for row in summary.itertuples()
        ]
        title = (
            f"Exact coverage {where}, at the points with n·ψ ≥ "
            f"{coverage.MIN_EXPECTED_DISCORDANT:g}, computed when this page was built"
        )
        return table(
            [
                "interval",
                "mean coverage",
                "minimum coverage",
                f"points below {coverage.FAR_BELOW:.0%}",
                "mean width",
            ],
            rows,
            widths=[32, 17, 17, 17, 17],
            title=title,
        )
