"""The paper's claims against ours, and the sentences of the prose that state a verdict.

- Directive ``regime-paper-claims``: the claims of ``paper_claims.yml`` against our numbers
  from the records, with the verdict :func:`regime_core.runner.judge.judge_claim` computes
  and its robustness (:mod:`regime_core.runner.verdicts`, the data of ``regime verdicts --json``).
- Roles ``{verdict}`claim_id``` (the verdict), ``{claim}`claim_id``` (ours, the verdict with its
  reason, the robustness) and ``{robust}`claim_id``` (the robustness alone).
- Role ``{statement}`claim_id```: the claim as ``paper_claims.yml`` states it.
- Role ``{compare}`run:key```: a paired comparison of a record as a phrase that states its
  direction from the numbers.

Nothing of these is typed: the prose cannot contradict the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_core import paths
from regime_core.book.sphinx.records import (
    RECORD_PROBLEMS,
    page_record,
    parse_reference,
    record_file,
    warn,
    warn_problem,
)
from regime_core.book.sphinx.tables import paragraph, table

#: the columns of the claims table; the verdict comes second, so a phone shows it unscrolled
CLAIM_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Claim", 4),
    ("Verdict", 3),
    ("Paper", 2),
    ("Ours", 3),
    ("Data behind ours", 3),
    ("Robustness", 2),
)
CLAIMS_CAPTION = "The paper's claims and ours, with computed verdicts"


def claims_file(app: Sphinx, option: str | None = None) -> Path:
    """``paper_claims.yml``: ``option`` (relative to the book), else beside ``_config.yml``,
    else the repository's."""
    if option:
        candidate = Path(option)
        return candidate if candidate.is_absolute() else Path(app.srcdir) / candidate
    beside = Path(app.srcdir) / "paper_claims.yml"
    return beside if beside.is_file() else paths.REPO_ROOT / "paper_claims.yml"


def _robustness(env: Any) -> dict[str, Any] | None:
    """The robustness record, or ``None`` when it is absent (each caller says what it lacks)."""
    from regime_core.runner.verdicts import ROBUSTNESS_RUN

    file = record_file(env.app, ROBUSTNESS_RUN)
    env.note_dependency(str(file))
    return page_record(env, ROBUSTNESS_RUN) if file.is_file() else None


def _judge(env: Any, claim: Any, robustness: dict[str, Any] | None) -> Any:
    """The :class:`~regime_core.runner.verdicts.ClaimVerdict` of one claim (raises
    :data:`~regime_core.book.sphinx.records.RECORD_PROBLEMS`)."""
    from regime_core.book.names import config_value
    from regime_core.runner.verdicts import judge_claims

    records = {claim.run: page_record(env, claim.run)}
    (judged,) = judge_claims(records, [claim], robustness, display=config_value)
    return judged


class PaperClaimsDirective(SphinxDirective):
    """The paper's claims against ours, with a computed verdict and its robustness.

    Reads ``paper_claims.yml`` (:func:`claims_file`; the ``:file:`` option overrides it), each
    claim's record and the ``robustness`` record. A missing record or key is a warning, so a
    strict build fails. Each claim links to the chapter that holds its evidence.
    """

    option_spec: ClassVar[dict[str, Any]] = {"file": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        from regime_core.paper import load_claims
        from regime_core.runner.judge import VERDICTS
        from regime_core.runner.verdicts import ROBUSTNESS_RUN

        file = claims_file(self.env.app, self.options.get("file"))
        self.env.note_dependency(str(file))
        try:
            claims = load_claims(file)
        except (FileNotFoundError, ValueError) as err:
            warn(self.env, str(err), self.get_location())
            return []
        robustness = _robustness(self.env)
        if robustness is None:
            missing = FileNotFoundError(f"{record_file(self.env.app, ROBUSTNESS_RUN)} is missing")
            warn_problem(self.env, f"run {ROBUSTNESS_RUN!r}", missing, self.get_location())
        counts = dict.fromkeys(VERDICTS, 0)
        rows: list[Sequence[Any]] = []
        for claim in claims:
            try:
                judged = _judge(self.env, claim, robustness)
            except RECORD_PROBLEMS as err:
                subject = f"claim {claim.id!r}, run {claim.run!r}"
                warn_problem(self.env, subject, err, self.get_location())
                rows.append([self._claim_link(claim), *["?"] * (len(CLAIM_COLUMNS) - 1)])
                continue
            counts[judged.verdict] += 1
            rows.append(self._cells(claim, judged))
        header = [name for name, _ in CLAIM_COLUMNS]
        widths = [width for _, width in CLAIM_COLUMNS]
        claims_table = table(
            header, rows, widths=widths, classes=["regime-paper-claims"], title=CLAIMS_CAPTION
        )
        summary = nodes.paragraph(
            text="Verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + "."
        )
        return [claims_table, summary]

    def _cells(self, claim: Any, judged: Any) -> list[Any]:
        from regime_core.runner.verdicts import robustness_phrase

        verdict = nodes.inline()
        verdict += nodes.strong(text=judged.verdict)
        verdict += nodes.Text(f" ({judged.judgement.reason})")
        entry = nodes.entry(classes=["regime-verdict-" + judged.verdict.replace(" ", "-")])
        entry += paragraph(verdict)
        r = judged.robustness
        robust = "not computed" if r is None else robustness_phrase(r)
        as_dict = judged.to_dict()
        n = judged.ours["n"]
        return [
            self._claim_link(claim),
            entry,
            as_dict["paper"]["text"],
            as_dict["ours_text"],
            judged.computed_on + (f"; n = {n:,}" if n else ""),
            robust.replace("reproduced under ", "", 1),
        ]

    def _claim_link(self, claim: Any) -> nodes.Node:
        """The claim, linked to the chapter that holds its evidence."""
        text = f"{claim.claim} ({claim.source})"
        if not claim.chapter:
            return nodes.Text(text)
        ref = addnodes.pending_xref(
            "",
            refdomain="std",
            reftype="doc",
            reftarget="/" + claim.chapter,
            refexplicit=True,
            refdoc=self.env.docname,
        )
        ref += nodes.inline(text=text)
        return ref


def judged_claim(env: Any, claim_id: str) -> Any:
    """The :class:`~regime_core.runner.verdicts.ClaimVerdict` of a claim id, from the records."""
    from regime_core.paper import load_claims

    file = claims_file(env.app)
    env.note_dependency(str(file))
    claims = {c.id: c for c in load_claims(file)}
    if claim_id not in claims:
        raise KeyError(f"no claim {claim_id!r} in {file}; known: {', '.join(claims)}")
    return _judge(env, claims[claim_id], _robustness(env))


class ClaimTextRole(SphinxRole):
    """``{verdict}``, ``{claim}`` and ``{robust}`` of a claim id: sentences of the prose
    generated from the records, so none can contradict its numbers."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import claim_sentence, robustness_phrase

        try:
            judged = judged_claim(self.env, self.text.strip())
        except RECORD_PROBLEMS as err:
            warn_problem(self.env, f"claim {self.text!r}", err, self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        if self.kind == "verdict":
            node = nodes.strong(self.rawtext, judged.verdict, classes=["regime-verdict"])
            return [node], []
        text = (
            claim_sentence(judged) if self.kind == "claim" else robustness_phrase(judged.robustness)
        )
        return [nodes.inline(self.rawtext, text, classes=["regime-claim-text"])], []


class StatementRole(SphinxRole):
    """``{statement}`claim_id``` -> the claim in the words of ``paper_claims.yml``, where each
    claim is described once (the notebooks read it there too)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.paper import load_claims

        file = claims_file(self.env.app)
        self.env.note_dependency(str(file))
        found = {c.id: c for c in load_claims(file)}.get(self.text.strip())
        if found is None:
            warn(self.env, f"statement: {file} has no claim {self.text!r}", self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, found.claim, classes=["regime-claim-text"])], []


class ComparisonRole(SphinxRole):
    """``{compare}`run:key``` -> a paired comparison of the record (a node with ``diff``,
    ``ci_lo``, ``ci_hi`` and a p-value) as a phrase that states its direction from the numbers
    (:func:`regime_core.runner.verdicts.comparison_phrase`)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import comparison_phrase

        try:
            ref = parse_reference(self.text)
            node: Any = page_record(self.env, ref.run)["numbers"]
            for part in ref.key.split("."):
                node = node[part]
            text = comparison_phrase(node)
        except (*RECORD_PROBLEMS, TypeError) as err:
            warn_problem(self.env, f"comparison {self.text!r}", err, self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-comparison"])], []
