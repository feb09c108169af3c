"""The findings each claim chapter opens with: sentences written here, numbers from the records.

Each :class:`~regime_core.book.findings.words.Finding` is a short argument a person wrote, with
wording that follows the values (a gain or a loss, a tie, significant or not), and numbers read
from the runs' records when the book is built, never typed. The ``regime-findings`` directive
renders a chapter's findings in the order of :data:`FINDINGS`; ``tests/test_book_findings.py``
recomputes every sentence from the quick profile's records and finds it on its rendered page.

A finding reads records through :class:`~regime_core.book.findings.words.Records`; the findings of
the paper's claims are in :mod:`~regime_core.book.findings.claims`, those beyond the paper in
:mod:`~regime_core.book.findings.beyond` and the landing page's bottom line in
:mod:`~regime_core.book.findings.landing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from regime_core.book.findings import beyond, claims, landing
from regime_core.book.findings.words import Finding, Records
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
