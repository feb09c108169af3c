"""The paper's claims against ours, and the sentences of the prose that state a verdict.

- Directives ``regime-paper-claims`` (the paper-against-ours table, a card per claim) and
  ``regime-verdict-table`` (the landing page's table); the landing page's chart,
  ``regime-claims-chart`` (:mod:`~regime_book.claims_chart`), shares their cells
  (:func:`why_text`, :func:`verdict_entry`, :func:`ours_text`) and the style sheet
  ``static/regime-claims.css``.
- Roles ``{verdict}`claim_id``` (the verdict), ``{claim}`claim_id``` (ours, the verdict with its
  reason, the robustness), ``{robust}`claim_id``` (the robustness alone), ``{statement}`claim_id```
  (the claim as ``paper_claims.yml`` states it) and ``{compare}`run:key``` (a paired comparison
  of a record as a phrase that states its direction from the numbers).

Nothing of these is typed: each verdict is :func:`regime_core.runner.verdicts.judge_claims`'s
on the records, so the prose cannot contradict them, and a build judges each claim once
(:func:`page_verdict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from regime_book.records import (
    RECORD_PROBLEMS,
    page_record,
    page_records,
    parse_reference,
    record_file,
    warn,
    warn_problem,
)
from regime_book.tables import entry, paragraph, table
from regime_core import paths
from regime_core.book.words import ours_interval
from regime_core.runner.records import Record
from regime_core.runner.wording import format_number

if TYPE_CHECKING:
    from regime_core.paper import Claim
    from regime_core.runner.verdicts import ClaimVerdict

#: The columns of the paper-against-ours table, with their relative widths. Eight columns are
#: too many for a page at any width, so each row is a card (``static/regime-claims.css``): the
#: claim is its title and every other cell a field led by its column's name, so no column is
#: ever off-screen.
CLAIM_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Claim", 4),
    ("Paper", 2),
    ("Ours", 3),
    ("Verdict", 2),
    ("Why", 4),
    ("Data behind ours", 3),
    ("Robustness", 2),
    ("Power", 3),
)
CLAIMS_CAPTION = "The paper's claims and ours, with computed verdicts"
#: The columns of the landing page's verdict table (``regime-verdict-table``): a table on a wide
#: screen, a card per claim on a narrow one.
VERDICT_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Claim", 3),
    ("Paper", 2),
    ("Ours", 3),
    ("Verdict", 2),
    ("Why", 4),
)
VERDICT_CAPTION = "Every claim of the paper: its number, ours, the verdict and why"
#: Said in the power column of a claim that is not a paired comparison.
NO_POWER = "not a comparison"
#: Said in the power column of a comparison whose claim names no count of differing questions.
NO_POWER_COUNTS = "not computed: the claim reads no count of the questions where the two differ"


def claims_file(app: Sphinx, option: str | None = None) -> Path:
    """``paper_claims.yml``: ``option`` (relative to the book), else beside ``_config.yml``,
    else the repository's."""
    if option:
        candidate = Path(option)
        return candidate if candidate.is_absolute() else Path(app.srcdir) / candidate
    beside = Path(app.srcdir) / "paper_claims.yml"
    return beside if beside.is_file() else paths.REPO_ROOT / "paper_claims.yml"


def page_claims(env: Any, option: str | None = None) -> tuple[Path, list[Any]]:
    """The claims file (``option``, else :func:`claims_file`), noted as an input of the page,
    and its claims; ``FileNotFoundError`` or ``ValueError`` when it cannot be read."""
    from regime_core.paper import load_claims

    file = claims_file(env.app, option)
    env.note_dependency(str(file))
    return file, load_claims(file)


def page_claim(env: Any, claim_id: str) -> Any:
    """The claim ``claim_id`` of the claims file (``KeyError`` naming the known ones)."""
    file, claims = page_claims(env)
    found = {c.id: c for c in claims}.get(claim_id)
    if found is None:
        known = ", ".join(c.id for c in claims)
        raise KeyError(f"no claim {claim_id!r} in {file}; known: {known}")
    return found


def _robustness(env: Any) -> Record | None:
    """The robustness record, or ``None`` when it is absent (each caller says what it lacks)."""
    from regime_core.runner.verdicts import ROBUSTNESS_RUN

    file = record_file(env.app, ROBUSTNESS_RUN)
    env.note_dependency(str(file))
    return page_record(env, ROBUSTNESS_RUN) if file.is_file() else None


def page_verdict(env: Any, claim: Claim, robustness: Record | None) -> ClaimVerdict:
    """The :class:`~regime_core.runner.verdicts.ClaimVerdict` of ``claim``, with its robustness
    in ``robustness``, the page depending on every record it reads (raises
    :data:`~regime_book.records.RECORD_PROBLEMS`).

    A build judges a claim once per content: its verdict (without the robustness, which only
    some pages read) is kept on the app by the claim's id and the sha256 of the records it
    reads, and serves only a claim equal to its own (as the claims file now states it), so a
    page read after the file or a record changed is judged anew. Each process of a parallel
    read keeps its own."""
    from regime_core.book.names import config_value
    from regime_core.runner.verdicts import judge_claims, robustness_of

    records, digests = page_records(env, claim.runs())
    kept: dict[tuple[str, tuple[str, ...]], ClaimVerdict] = env.app.__dict__.setdefault(
        "_regime_verdicts", {}
    )
    judged = kept.get((claim.id, digests))
    if judged is None or judged.claim != claim:
        (judged,) = judge_claims(records, [claim], display=config_value)
        kept[claim.id, digests] = judged
    return replace(judged, robustness=robustness_of(claim.id, robustness))


def page_verdicts(env: Any) -> dict[str, ClaimVerdict]:
    """Every claim of the claims file (:func:`claims_file`) by id, judged with its robustness
    (:func:`page_verdict`); raises what the first claim that cannot be judged raises."""
    _, claims = page_claims(env)
    robustness = _robustness(env)
    return {claim.id: page_verdict(env, claim, robustness) for claim in claims}


def judged_claims(
    directive: SphinxDirective, option: str | None = None, *, robustness: bool = False
) -> list[tuple[Any, Any]] | None:
    """Every claim of the claims file (:func:`page_claims`) with its
    :class:`~regime_core.runner.verdicts.ClaimVerdict`, or ``None`` for a claim whose record or
    key is missing (a warning names it, so a strict build fails); ``None`` for an unreadable
    file (a warning too). ``robustness`` adds the robustness record, and warns without it."""
    from regime_core.runner.verdicts import ROBUSTNESS_RUN

    env = directive.env
    try:
        _, claims = page_claims(env, option)
    except (FileNotFoundError, ValueError) as err:
        warn(env, str(err), directive.get_location())
        return None
    record = _robustness(env) if robustness else None
    if robustness and record is None:
        missing = FileNotFoundError(f"{record_file(env.app, ROBUSTNESS_RUN)} is missing")
        warn_problem(env, f"run {ROBUSTNESS_RUN!r}", missing, directive.get_location())
    out: list[tuple[Any, Any]] = []
    for claim in claims:
        try:
            out.append((claim, page_verdict(env, claim, record)))
        except RECORD_PROBLEMS as err:
            subject = f"claim {claim.id!r}, run {claim.run!r}"
            warn_problem(env, subject, err, directive.get_location())
            out.append((claim, None))
    return out


# --- the cells both tables share -----------------------------------------------------------------


def verdict_class(verdict: str) -> str:
    """The class of a verdict's colour: ``regime-verdict-`` and its words, hyphenated."""
    words = "".join(c if c.isalnum() else " " for c in verdict.lower()).split()
    return "regime-verdict-" + "-".join(words)


def chapter_link(text: str, chapter: str, docname: str) -> nodes.Node:
    """``text`` linked to the chapter ``chapter`` (``book/claims/...``), or plain text."""
    if not chapter:
        return nodes.inline(text=text)
    ref = addnodes.pending_xref(
        "",
        refdomain="std",
        reftype="doc",
        reftarget="/" + chapter,
        refexplicit=True,
        refdoc=docname,
    )
    ref += nodes.inline(text=text)
    inline = nodes.inline()
    inline += ref
    return inline


def why_text(judged: Any) -> str:
    """The "why" of a judged claim: the reason its verdict rule gives, then its diagnosis
    (``ClaimVerdict.why``: the settings under which it would reproduce, or that none does, and
    what our questions can detect, followed by the claim's own ``why`` filled from the records,
    :mod:`regime_core.runner.explanation`) when it has one. The only place both tables read
    it."""
    reason = judged.judgement.reason
    reason = reason[:1].upper() + reason[1:]
    why = getattr(judged, "why", None)
    sentence = why.sentence if why is not None else ""
    return f"{reason}. {sentence}" if sentence else f"{reason}."


def ours_text(judged: Any) -> str:
    """Ours in few words: a comparison's estimate, interval and p without repeated units
    (``+6.6 pp (95% CI +4.5 to +9.1 pp), p < 0.001``); any other claim as the judge says it."""
    from regime_core.runner.ours import Comparison

    values = judged.values
    if not isinstance(values, Comparison):
        return values.text()
    text = ours_interval(values)
    if values.p is None:
        return text
    return f"{text}, {'Holm ' if values.holm else ''}{format_number(values.p, 'p')}"


def verdict_entry(verdict: str, words: str | None = None, flags: Sequence[str] = ()) -> nodes.entry:
    """The verdict cell: the verdict's words (default: the verdict) in bold, its flags beside
    them, coloured by the verdict's class."""
    text = nodes.inline()
    text += nodes.strong(text=words or verdict)
    for flag in flags:
        text += nodes.Text(" ")
        text += nodes.inline(text=f"({flag})", classes=["regime-flag"])
    cell = nodes.entry(classes=[verdict_class(verdict)])
    cell += paragraph(text)
    return cell


def judged_verdict_entry(judged: Any) -> nodes.entry:
    """The verdict cell of a judged claim: its verdict's words and flags."""
    judgement = judged.judgement
    return verdict_entry(judgement.verdict, judgement.words, judgement.flags)


def claim_cell(claim: Any, docname: str, *, statement: bool = False) -> nodes.Node:
    """The claim: its label in bold, linked to its chapter; ``statement`` adds the claim in
    full."""
    cell = nodes.inline()
    name = nodes.strong()
    name += chapter_link(claim.label or claim.claim, claim.chapter, docname)
    cell += name
    if statement:
        cell += nodes.inline(
            text=f"{claim.claim} ({claim.source})", classes=["regime-claim-statement"]
        )
    return cell


def card_table(
    columns: Sequence[tuple[str, int]],
    rows: list[list[Any]],
    classes: list[str],
    caption: str,
    *,
    always: bool,
) -> nodes.table:
    """A table whose rows are cards on a narrow screen, or at every width (``always``): each
    cell but the first is led by its column's name, which only a card shows. Its column widths
    are written out (Sphinx leaves them to the browser otherwise)."""
    header = [name for name, _ in columns]
    cards = []
    for cells in rows:
        row = [cells[0]]
        for name, cell in zip(header[1:], cells[1:], strict=True):
            field = entry(cell)
            field[0].insert(0, nodes.inline(text=name, classes=["regime-card-label"]))
            row.append(field)
        cards.append(row)
    return table(
        header,
        cards,
        widths=[width for _, width in columns],
        classes=[*classes, "regime-cards-always" if always else "regime-cards", "colwidths-given"],
        title=caption,
    )


class VerdictTableDirective(SphinxDirective):
    """The landing page's verdict table (:data:`VERDICT_COLUMNS`), a card per claim on a phone:
    a row per claim of the claims file (``:file:``, else :func:`claims_file`), its label linked
    to the chapter that holds its evidence, then :meth:`cells`; ``?`` for a claim whose record
    or key is missing (a warning, so a strict build fails)."""

    option_spec: ClassVar[dict[str, Any]] = {"file": directives.unchanged}
    columns = VERDICT_COLUMNS
    classes = "regime-landing-verdicts"
    caption = VERDICT_CAPTION
    #: with the robustness record, each claim stated in full, and a card per claim at any width
    full = False

    def judged_table(self) -> tuple[list[Any], nodes.table] | None:
        """The judged claims (those the records can give) and their table."""
        judged = judged_claims(self, self.options.get("file"), robustness=self.full)
        if judged is None:
            return None
        rows: list[list[Any]] = []
        for claim, verdict in judged:
            link = claim_cell(claim, self.env.docname, statement=self.full)
            missing = [link, *["?"] * (len(self.columns) - 1)]
            rows.append(missing if verdict is None else self.cells(link, verdict))
        verdicts = [verdict for _, verdict in judged if verdict is not None]
        return verdicts, card_table(
            self.columns, rows, [self.classes], self.caption, always=self.full
        )

    def run(self) -> list[nodes.Node]:
        found = self.judged_table()
        return [] if found is None else [found[1]]

    def cells(self, link: nodes.Node, judged: Any) -> list[Any]:
        """The claim, the paper's number, ours, the verdict with its flags, and why."""
        from regime_core.runner.claim_record import paper_text

        paper, why = paper_text(judged.claim), why_text(judged)
        return [link, paper, ours_text(judged), judged_verdict_entry(judged), why]


def verdict_counts(judged: Sequence[Any]) -> str:
    """How many claims got each verdict, the abstract's statements and the questions of ours
    apart (:func:`regime_book.findings.landing.from_the_abstract`), each verdict in the
    words its rows show, in the judge's order: "The abstract's 15 statements: 4 reproduced,
    ... Our 5 questions: 1 holds, ..."."""
    from regime_book.findings.landing import from_the_abstract
    from regime_core.runner.judge import OURS_WORDS, VERDICTS

    order = list(dict.fromkeys((*VERDICTS, *OURS_WORDS.values())))

    def counted(words: list[str]) -> str:
        counts = {w: words.count(w) for w in sorted(set(words), key=order.index)}
        return ", ".join(f"{n:,} {w}" for w, n in counts.items())

    paper = [v.judgement.plain_words for v in judged if from_the_abstract(v.claim)]
    ours = [v.judgement.plain_words for v in judged if not from_the_abstract(v.claim)]
    parts = []
    if paper:
        noun = "statement" if len(paper) == 1 else "statements"
        parts.append(f"The abstract's {len(paper):,} {noun}: {counted(paper)}.")
    if ours:
        noun = "question" if len(ours) == 1 else "questions"
        parts.append(f"Our {len(ours):,} {noun}: {counted(ours)}.")
    return " ".join(parts)


class PaperClaimsDirective(VerdictTableDirective):
    """The paper's claims against ours (:data:`CLAIM_COLUMNS`), with the robustness record;
    then each verdict's count."""

    columns = CLAIM_COLUMNS
    classes = "regime-claims-table"
    caption = CLAIMS_CAPTION
    full = True

    def run(self) -> list[nodes.Node]:
        found = self.judged_table()
        if found is None:
            return []
        judged, claims_table = found
        return [claims_table, nodes.paragraph(text=verdict_counts(judged))]

    def cells(self, link: nodes.Node, judged: Any) -> list[Any]:
        """Those of the verdict table, then the data behind ours, the robustness and the
        power."""
        from regime_core.runner.judge import COMPARISON_RULES, power_text
        from regime_core.runner.verdicts import robustness_absence, robustness_phrase

        r = judged.robustness
        robust = robustness_absence(judged.claim) if r is None else robustness_phrase(r)
        n = judged.ours["n"]
        if judged.claim.rule in COMPARISON_RULES:
            power = power_text(judged.judgement.power) or NO_POWER_COUNTS
        else:
            power = NO_POWER
        return [
            *super().cells(link, judged),
            judged.computed_on + (f"; n = {n:,}" if n else ""),
            robust.replace("reproduced under ", "", 1),
            power,
        ]


class ClaimTextRole(SphinxRole):
    """``{verdict}``, ``{claim}`` and ``{robust}`` of a claim id: sentences of the prose
    generated from the records, so none can contradict its numbers."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import claim_sentence, robustness_phrase

        try:
            claim = page_claim(self.env, self.text.strip())
            judged = page_verdict(self.env, claim, _robustness(self.env))
        except RECORD_PROBLEMS as err:
            warn_problem(self.env, f"claim {self.text!r}", err, self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        if self.kind == "verdict":
            node = nodes.strong(
                self.rawtext, judged.judgement.plain_words, classes=["regime-verdict"]
            )
            return [node], []
        text = (
            claim_sentence(judged) if self.kind == "claim" else robustness_phrase(judged.robustness)
        )
        return [nodes.inline(self.rawtext, text, classes=["regime-claim-text"])], []


class StatementRole(SphinxRole):
    """``{statement}`claim_id``` -> the claim in the words of ``paper_claims.yml``, where each
    claim is described once (the notebooks read it there too)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            claim = page_claim(self.env, self.text.strip())
        except RECORD_PROBLEMS as err:
            warn_problem(self.env, "statement", err, self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, claim.claim, classes=["regime-claim-text"])], []


#: a comparison also fails on a node that is not one (a number where a mapping should be)
_COMPARISON_PROBLEMS: tuple[type[Exception], ...] = (*RECORD_PROBLEMS, TypeError)


class ComparisonRole(SphinxRole):
    """``{compare}`run:key``` -> a paired comparison of the record (a node with ``diff``,
    ``ci_lo``, ``ci_hi`` and a p-value) as a phrase that states its direction from the numbers
    (:func:`regime_core.runner.verdicts.comparison_phrase`)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        from regime_core.runner.verdicts import comparison_phrase

        try:
            ref = parse_reference(self.text)
            text = comparison_phrase(page_record(self.env, ref.run).node(ref.key))
        except _COMPARISON_PROBLEMS as err:
            warn_problem(self.env, f"comparison {self.text!r}", err, self.get_location())
            return [nodes.literal(self.rawtext, self.text)], []
        return [nodes.inline(self.rawtext, text, classes=["regime-comparison"])], []
