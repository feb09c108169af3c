"""The findings each claim chapter opens with (``regime-findings``): sentences written here, numbers
from the records.

Each :class:`~regime_core.book.words.Finding` is a short argument a person wrote, with
wording that follows the values (a gain or a loss, a tie, significant or not), and numbers read
from the runs' records when the book is built, never typed. The ``regime-findings`` directive
renders a chapter's findings in the order of :data:`FINDINGS`; ``tests/test_book_findings.py``
recomputes every sentence from the quick profile's records and finds it on its rendered page.

A finding reads records through :class:`~regime_core.book.words.Records`; the findings of
the paper's claims are in :mod:`~regime_book.findings.claims`, those beyond the paper in
:mod:`~regime_book.findings.beyond` and the landing page's bottom line in
:mod:`~regime_book.findings.landing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from regime_book.findings import beyond, claims, landing
from regime_book.records import RECORD_PROBLEMS, page_record, warn_problem
from regime_book.tables import code_spans
from regime_core.book.words import Finding, Records
from regime_core.runner.records import Record

if TYPE_CHECKING:
    from regime_core.runner.verdicts import ClaimVerdict

FINDINGS: tuple[Finding, ...] = (*claims.FINDINGS, *beyond.FINDINGS, *landing.FINDINGS)
"""Every finding, in the order its chapter shows them."""


def chapter_findings(chapter: str) -> list[Finding]:
    """The findings of ``chapter`` (a docname such as ``book/claims/t3_brel_knockout``)."""
    found = [f for f in FINDINGS if f.chapter == chapter]
    if not found:
        raise KeyError(
            f"no findings for chapter {chapter!r}; chapters with findings: "
            f"{sorted({f.chapter for f in FINDINGS})}"
        )
    return found


def write_findings(
    chapter: str,
    records: Mapping[str, Record],
    verdicts: Mapping[str, ClaimVerdict] | None = None,
) -> list[tuple[str, str]]:
    """``(finding id, sentence)`` for each finding of ``chapter``, from ``records`` (run ->
    record) and, for a finding that reads them, ``verdicts`` (claim id -> verdict); pure."""
    view = Records(records, verdicts)
    return [(f.id, f.write(view)) for f in chapter_findings(chapter)]


class FindingsDirective(SphinxDirective):
    """The page's findings, as :func:`write_findings` writes them
    from the records of the runs they read (and the claims' verdicts, for those that read
    them: :func:`~regime_book.claims.page_verdicts`)."""

    def run(self) -> list[nodes.Node]:
        from regime_book.claims import page_verdicts

        chapter = self.env.docname
        try:
            findings = chapter_findings(chapter)
            runs = dict.fromkeys(run for finding in findings for run in finding.runs)
            records = {run: page_record(self.env, run) for run in runs}
            judged = any(finding.judged for finding in findings)
            written = write_findings(chapter, records, page_verdicts(self.env) if judged else None)
        except RECORD_PROBLEMS as err:
            warn_problem(self.env, f"the findings of {chapter!r}", err, self.get_location())
            return []
        box = nodes.container(classes=["regime-findings"])
        box += nodes.rubric(text="Findings")
        for finding_id, text in written:
            para = nodes.paragraph(classes=["regime-finding", f"regime-finding-{finding_id}"])
            para.extend(code_spans(text))
            box += para
        return [box]
