"""The book's Sphinx extension ``regime_book`` (``local_extensions`` in ``_config.yml``).

Every number, verdict, default and reference table of the prose is read from the records or the
code when the book is built, never typed. One module per concern, each saying which roles,
directives and hooks it adds; :func:`setup` registers them all, ``strict_pass`` reads every page
again after a build that did not pass strictly, and ``timing`` (the build's phases and the
seconds of all the above, only when ``REGIME_BOOK_TIMING`` names a file) wraps them last.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from regime_book.choices import (
    ChoicesDirective,
    ConfigDefaultsDirective,
    DefaultValueRole,
    InputFormatDirective,
)
from regime_book.claims import (
    ClaimTextRole,
    ComparisonRole,
    PaperClaimsDirective,
    StatementRole,
    VerdictTableDirective,
)
from regime_book.claims_chart import (
    ClaimsChartDirective,
    depart_html_element,
    html_element,
    pass_through,
    visit_html_element,
)
from regime_book.coverage import CoverageDirective
from regime_book.findings import FindingsDirective
from regime_book.ledger import (
    LedgerHolmDirective,
    LedgerRole,
    MethodVerdictsDirective,
)
from regime_book.records import (
    RecordFigureDirective,
    RecordRole,
    RecordTableDirective,
    figure_alt_text,
    setup_dependency_hashes,
)
from regime_book.reference import (
    MetricsGlossaryDirective,
    StatisticsGlossaryDirective,
    keep_attribute_docs,
    resolve_unqualified,
    restore_attribute_docs,
    skip_foreign_members,
)
from regime_book.router_page import (
    RouterDemoDirective,
    RouterFailuresDirective,
    RouterFeaturesDirective,
    RouterLearnedDirective,
    router_assets_on_demo_pages,
)
from regime_book.search import plain_command_descriptions
from regime_book.site import CitationDirective, configure_site, tidy_page
from regime_book.strict_pass import setup_strict_pass
from regime_book.tables import number_tables_per_page
from regime_book.teaching import (
    AnswerKeyDirective,
    LessonPlanDirective,
    WorksheetDirective,
    teaching_assets,
)
from regime_book.timing import setup_timing
from regime_book.variants import setup_variants

__all__ = ["setup"]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("regime_work_dir", None, "env", types=[str, type(None)])
    app.add_role("rec", RecordRole())
    app.add_directive("rec-table", RecordTableDirective)
    app.add_directive("rec-figure", RecordFigureDirective)
    setup_dependency_hashes(app)  # pages reread when a record's content changes
    setup_strict_pass(app)  # every page reread after a build that did not pass strictly
    app.add_directive("regime-paper-claims", PaperClaimsDirective)
    app.add_directive("regime-findings", FindingsDirective)
    app.add_directive("regime-verdict-table", VerdictTableDirective)
    app.add_directive("regime-claims-chart", ClaimsChartDirective)
    others = (pass_through, pass_through)
    app.add_node(
        html_element,
        html=(visit_html_element, depart_html_element),
        latex=others,
        text=others,
        man=others,
        texinfo=others,
    )
    for kind in ("verdict", "claim", "robust"):
        app.add_role(kind, ClaimTextRole(kind))
    app.add_role("compare", ComparisonRole())
    app.add_role("statement", StatementRole())
    app.add_directive("regime-choices", ChoicesDirective)
    app.add_directive("regime-config-defaults", ConfigDefaultsDirective)
    app.add_directive("regime-input-format", InputFormatDirective)
    app.add_role("default", DefaultValueRole())
    app.add_directive("regime-metrics-glossary", MetricsGlossaryDirective)
    app.add_directive("regime-statistics-glossary", StatisticsGlossaryDirective)
    app.add_directive("regime-router-demo", RouterDemoDirective)
    app.add_directive("regime-router-features", RouterFeaturesDirective)
    app.add_directive("regime-router-learned", RouterLearnedDirective)
    app.add_directive("regime-router-failures", RouterFailuresDirective)
    app.add_directive("regime-lesson-plan", LessonPlanDirective)
    app.add_directive("regime-worksheet", WorksheetDirective)
    app.add_directive("regime-answer-key", AnswerKeyDirective)
    app.add_directive("regime-citation", CitationDirective)
    app.add_directive("regime-interval-coverage", CoverageDirective)
    app.add_directive("regime-method-verdicts", MethodVerdictsDirective)
    app.add_directive("regime-ledger-holm", LedgerHolmDirective)
    app.add_role("ledger", LedgerRole())
    setup_variants(app)  # "Your variants", reread when the variants on disk change
    app.connect("config-inited", configure_site)
    # after Sphinx's image collector has made each image's uri relative to the source folder
    app.connect("doctree-read", figure_alt_text, priority=900)
    # after Sphinx has numbered the figures and tables (its collector runs at priority 500)
    app.connect("env-get-updated", number_tables_per_page, priority=900)
    app.connect("html-page-context", router_assets_on_demo_pages)
    app.connect("html-page-context", teaching_assets)
    app.connect("autodoc-skip-member", skip_foreign_members)
    # around napoleon (default priority 500): attribute docstrings stay as written
    app.connect("autodoc-process-docstring", keep_attribute_docs, priority=400)
    app.connect("autodoc-process-docstring", restore_attribute_docs, priority=600)
    app.connect("missing-reference", resolve_unqualified)
    # the CLI's command descriptions, which the search shows, as plain text
    app.connect("env-check-consistency", plain_command_descriptions)
    # after the theme has built its buttons (default priority 500)
    app.connect("html-page-context", tidy_page, priority=950)
    setup_timing(app)  # last: it wraps every handler, directive and role above (if asked)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
