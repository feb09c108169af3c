"""The ledger as a whole on the book's pages (:mod:`regime_core.runner.ledger`), from the records:

- directive ``regime-method-verdicts``: every comparison claim whose verdict depends on the
  interval method, with the verdict each method the book has used gives it (the list of choices
  made after seeing results shows it under the two changes of method);
- directive ``regime-ledger-holm``: the ledger-wide Holm correction, one row per comparison claim;
- role ``{ledger}`sentence``` : the one sentence a page (the landing page's bottom line) says
  about the ledger-wide correction (:func:`regime_core.runner.ledger.ledger_sentence`).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_book.claims import page_claims, page_verdicts
from regime_book.records import RECORD_PROBLEMS, page_records, warn
from regime_book.tables import table


def _records(env: Any, claims: list[Any]) -> dict[str, Any]:
    records, _ = page_records(env, list(dict.fromkeys(c.run for c in claims)))
    return dict(records)


def _labels(claims: list[Any]) -> dict[str, str]:
    return {c.id: str(getattr(c, "label", "") or c.id) for c in claims}


def ledger_entries(env: Any) -> tuple[list[Any], dict[str, str]]:
    """The ledger-wide Holm entries of the claims file and each claim's label for a reader."""
    from regime_core.runner.ledger import ledger_holm

    _, claims = page_claims(env)
    verdicts = {cid: v.judgement.plain_words for cid, v in page_verdicts(env).items()}
    return ledger_holm(claims, _records(env, claims), verdicts), _labels(claims)


class MethodVerdictsDirective(SphinxDirective):
    """The claims whose verdict differs between the interval methods, a row each."""

    def run(self) -> list[nodes.Node]:
        from regime_core.book.figures.statistics import COVERAGE_STYLES
        from regime_core.runner.ledger import INTERVAL_METHODS, verdicts_by_method

        try:
            _, claims = page_claims(self.env)
            found = verdicts_by_method(claims, _records(self.env, claims))
        except RECORD_PROBLEMS as err:
            warn(self.env, f"the verdicts by interval method: {err}", self.get_location())
            return []
        labels = _labels(claims)
        rows = [
            [labels[m.claim_id], *(m.verdicts[method] for method in INTERVAL_METHODS)]
            for m in found
            if m.differs
        ]
        if not rows:
            return [nodes.paragraph(text="No verdict depends on the interval method.")]
        header = ["claim", *(COVERAGE_STYLES[m][0] for m in INTERVAL_METHODS)]
        title = (
            f"The {len(rows)} claims (of {len(found)} judged on counts of paired questions) "
            "whose verdict depends on the interval, re-judged from the records under each"
        )
        return [table(header, rows, widths=[31, 23, 23, 23], title=title)]


class LedgerHolmDirective(SphinxDirective):
    """The ledger-wide Holm correction: per comparison claim its p against its own null, the
    Holm-adjusted p, the level, its verdict there and whether its own verdict survives."""

    def run(self) -> list[nodes.Node]:
        from regime_core.runner.ledger import ledger_sentence
        from regime_core.runner.wording import format_number

        try:
            entries, labels = ledger_entries(self.env)
        except RECORD_PROBLEMS as err:
            warn(self.env, f"the ledger-wide Holm correction: {err}", self.get_location())
            return []
        rows = [
            [
                labels[e.claim_id],
                format_number(e.p, "p").removeprefix("p ").removeprefix("= "),
                format_number(e.p_holm, "p").removeprefix("p ").removeprefix("= "),
                f"{100 * (1 - e.holm_level):.2f}%",
                e.verdict,
                e.verdict_at_holm_level,
                e.survives,
            ]
            for e in entries
        ]
        header = [
            "claim",
            "p (own null)",
            "Holm p",
            "Holm-level interval",
            "own verdict",
            "at the Holm level",
            "the verdict",
        ]
        out: list[nodes.Node] = [nodes.paragraph(text=ledger_sentence(entries, labels))]
        out.append(table(header, rows, widths=[22, 10, 10, 12, 16, 16, 14]))
        return out


class LedgerRole(SphinxRole):
    """``{ledger}`sentence```: the one sentence on the ledger-wide Holm correction."""

    def run(self) -> tuple[list[nodes.Node], list[Any]]:
        from regime_core.runner.ledger import ledger_sentence

        if self.text.strip() != "sentence":
            warn(
                self.env, f"ledger: unknown part {self.text!r}; use `sentence`", self.get_location()
            )
            return [], []
        try:
            entries, labels = ledger_entries(self.env)
        except RECORD_PROBLEMS as err:
            warn(self.env, f"the ledger-wide Holm correction: {err}", self.get_location())
            return [], []
        return [nodes.inline(text=ledger_sentence(entries, labels))], []
