"""``regime-findings``: the findings a claim chapter opens with (:mod:`regime_core.book.findings`).

The directive renders the findings of the page it stands on (its docname), each a paragraph with
the class ``regime-finding regime-finding-<id>`` so that a test finds each sentence on the
rendered page and compares it with the one computed from the records. Text between backticks
becomes code (:func:`~regime_book.tables.code_spans`). A missing record or key is a
warning, so a strict build fails.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from regime_book.records import RECORD_PROBLEMS, page_record, warn_problem
from regime_book.tables import code_spans


class FindingsDirective(SphinxDirective):
    """The page's findings, as :func:`regime_core.book.findings.write_findings` writes them
    from the records of the runs they read (and the claims' verdicts, for those that read
    them: :func:`~regime_book.claims.page_verdicts`)."""

    def run(self) -> list[nodes.Node]:
        from regime_book.claims import page_verdicts
        from regime_core.book.findings import chapter_findings, write_findings

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
