"""The landing page's summary chart of the claims: directive ``regime-claims-chart``.

One row per claim measured in percentage points (the comparison kinds of
:data:`regime_core.runner.judge.COMPARISON_RULES`; a claim judged part by part has one row per
part), all on one pp axis: the paper's value (a diamond; a shaded band for a range; a hatched
area for the side an implied ``> 0``, a "no loss" or an invariance claim allows, bounded by its
margin line), our estimate (a dot) with its interval (a bar), and the zero line. Each row is
coloured by its verdict *and* says the verdict in words, links its label to the claim's
chapter, and carries an ``aria-label`` with its numbers. The other claims (share, holds, level,
bound, untestable) follow as text rows with their verdict.

The chart is HTML and CSS, not an image: every position is a percentage of the row's track, so
it reflows on a phone (the label above the track) and its text stays text. The layout is a pure
kernel (:func:`chart_axis`, :func:`place_row`, :func:`chart_layout`) on :class:`ChartRow`; the
directive reads the claims and records (:func:`chart_rows`) and renders the layout
(:class:`html_element` nodes, styled by ``static/regime-claims.css``).

>>> axis = chart_axis([-2.0, 7.8, 14.1])
>>> axis.low, axis.high, axis.step, axis.ticks
(-5.0, 15.0, 5, (-5.0, 0.0, 5.0, 10.0, 15.0))
>>> axis.at(0.0), axis.at(15.0)
(25.0, 100.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from regime_book.claims import chapter_link, judged_claims, ours_text, verdict_class
from regime_core import config
from regime_core.book.words import ours_interval
from regime_core.runner.wording import format_number

#: fractions (as records hold them) to percentage points
PP = 100.0
#: tick steps in whole pp, tried in this order; the first that needs at most ``max_ticks`` wins
TICK_STEPS: tuple[int, ...] = (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000)
#: at most this many ticks on the axis (a phone's track is about 330 px wide)
MAX_TICKS = 7

#: what the paper's side of each comparison kind draws ({margin}: the margin, in pp)
PAPER_MARKS: dict[str, str] = {
    "estimate": "\u25c7 its value",
    "range": "a shaded band, its range",
    "positive": "a hatched area, the side it implies (> 0)",
    "no_loss": "for no loss, a dashed line at \u2212{margin} and the side it allows hatched",
    "equivalence": "for unchanged, dashed lines at \u00b1{margin} and the band between hatched",
}


# --- the layout kernel (pure) --------------------------------------------------------------------


@dataclass(frozen=True)
class TextRow:
    """A row of the chart: a claim's label, chapter, verdict, and the paper's and ours in
    words; as itself, a claim not measured in pp."""

    label: str
    chapter: str
    verdict: str
    verdict_label: str
    paper_text: str
    ours_text: str


@dataclass(frozen=True)
class ChartRow(TextRow):
    """A row of the chart drawn on its axis, in percentage points.

    ``paper_value`` is the paper's point value (a diamond), ``paper_band`` its range (a shaded
    band), ``allowed`` the side of the axis the paper's statement implies or allows
    (``(low, high)``, ``None`` for an open end; a hatched area), ``margins`` the margin lines
    bounding it. ``estimate``, ``ci_lo`` and ``ci_hi`` are ours."""

    estimate: float
    ci_lo: float
    ci_hi: float
    paper_value: float | None = None
    paper_band: tuple[float, float] | None = None
    allowed: tuple[float | None, float | None] | None = None
    margins: tuple[float, ...] = ()

    def values(self) -> list[float]:
        """Every number the axis must show for this row (the open ends of ``allowed`` aside)."""
        out = [self.estimate, self.ci_lo, self.ci_hi, *self.margins]
        if self.paper_value is not None:
            out.append(self.paper_value)
        if self.paper_band is not None:
            out.extend(self.paper_band)
        if self.allowed is not None:
            out.extend(v for v in self.allowed if v is not None)
        return out


@dataclass(frozen=True)
class Axis:
    """The chart's one axis: ``[low, high]`` pp, ticks every ``step`` whole pp."""

    low: float
    high: float
    step: int
    ticks: tuple[float, ...]

    def at(self, value: float) -> float:
        """Where ``value`` lies on the track, in % of its width (0 at ``low``, 100 at
        ``high``); values beyond the axis are held at its ends."""
        share = (value - self.low) / (self.high - self.low)
        return 100.0 * min(1.0, max(0.0, share))

    def span(self, low: float | None, high: float | None) -> tuple[float, float]:
        """``(left, width)`` in % of an interval; an open end (``None``) runs to the axis's."""
        left = self.at(self.low if low is None else low)
        right = self.at(self.high if high is None else high)
        return left, right - left


def chart_axis(values: Iterable[float]) -> Axis:
    """The axis that holds every value and zero, its ends on whole ticks of a step of
    :data:`TICK_STEPS` (the smallest giving at most :data:`MAX_TICKS` ticks).

    A value lying on a tick is an end of the axis (placed at 0% or 100%); only zero and nothing
    else gives ``[-1, 1]``. The values are finite: a judged comparison's ends are checked when
    it is made (:class:`~regime_core.runner.ours.Comparison`), the paper's when the claims file
    is read.

    >>> chart_axis([0.0]).ticks
    (-1.0, 0.0, 1.0)
    >>> chart_axis([-45.2, 3.0]).step
    10
    """
    numbers = [float(v) for v in values]
    low, high = min([0.0, *numbers]), max([0.0, *numbers])
    if low == high:
        return Axis(-1.0, 1.0, 1, (-1.0, 0.0, 1.0))
    for step in TICK_STEPS:
        first, last = math.floor(low / step), math.ceil(high / step)
        if last - first + 1 <= MAX_TICKS:
            break
    else:
        raise ValueError(f"chart_axis: [{low}, {high}] pp needs a step beyond {TICK_STEPS[-1]}")
    ticks = tuple(float(step * k) for k in range(first, last + 1))
    return Axis(ticks[0], ticks[-1], step, ticks)


@dataclass(frozen=True)
class RowLayout:
    """Where each element of a row lies on the track, in % of its width: ``(left, width)``
    for the interval, the paper's band and the allowed area; a position for the rest."""

    row: ChartRow
    interval: tuple[float, float]
    estimate: float
    paper_value: float | None
    paper_band: tuple[float, float] | None
    allowed: tuple[float, float] | None
    margins: tuple[float, ...]


def place_row(row: ChartRow, axis: Axis) -> RowLayout:
    """Every element of ``row`` placed on ``axis``.

    >>> row = ChartRow("r", "", "reproduced", "reproduced", "", "", 6.6, 4.5, 9.1,
    ...                paper_value=5.6)
    >>> layout = place_row(row, chart_axis(row.values()))
    >>> [round(x, 6) for x in (*layout.interval, layout.estimate, layout.paper_value)]
    [45.0, 46.0, 66.0, 56.0]
    """
    return RowLayout(
        row=row,
        interval=axis.span(row.ci_lo, row.ci_hi),
        estimate=axis.at(row.estimate),
        paper_value=None if row.paper_value is None else axis.at(row.paper_value),
        paper_band=None if row.paper_band is None else axis.span(*row.paper_band),
        allowed=None if row.allowed is None else axis.span(*row.allowed),
        margins=tuple(axis.at(m) for m in row.margins),
    )


@dataclass(frozen=True)
class ChartLayout:
    """The axis and every row placed on it; ``zero`` is where the zero line lies (%)."""

    axis: Axis
    zero: float
    rows: tuple[RowLayout, ...]


def chart_layout(rows: Sequence[ChartRow]) -> ChartLayout:
    """One axis for all ``rows`` (:func:`chart_axis` of all their values) and each row on it."""
    axis = chart_axis([v for row in rows for v in row.values()])
    return ChartLayout(axis, axis.at(0.0), tuple(place_row(row, axis) for row in rows))


def tick_text(value: float) -> str:
    """A tick's label: whole pp with its sign (``-5``, ``0``, ``+10``); a true minus sign."""
    whole = round(value)
    return "0" if whole == 0 else f"{whole:+d}".replace("-", "\u2212")


# --- rows from the judged claims (pure) ----------------------------------------------------------


def _paper_marks(claim: Any) -> dict[str, Any]:
    """The paper's side of a comparison claim as :class:`ChartRow` fields, in pp."""
    from regime_core.runner.judge import SMALLEST_EFFECT

    paper, margin = claim.paper, PP * SMALLEST_EFFECT
    value = paper.get("value")
    point = None if value is None else PP * float(value)
    if claim.rule == "estimate":
        return {"paper_value": point}
    if claim.rule == "range":
        return {"paper_band": (PP * float(paper["low"]), PP * float(paper["high"]))}
    if claim.rule == "positive":
        return {"allowed": (0.0, None), "paper_value": point}
    if claim.rule == "no_loss":
        return {"allowed": (-margin, None), "margins": (-margin,), "paper_value": point}
    if claim.rule == "equivalence":
        return {"allowed": (-margin, margin), "margins": (-margin, margin), "paper_value": point}
    raise ValueError(f"claim {claim.id!r}: rule {claim.rule!r} is not measured in pp")


def chart_rows(verdicts: Sequence[Any]) -> tuple[list[ChartRow], list[TextRow]]:
    """The chart's rows of judged claims (:class:`~regime_core.runner.verdicts.ClaimVerdict`):
    one :class:`ChartRow` per comparison claim, or per part of one judged part by part, and
    one :class:`TextRow` per other claim, in the claims' order."""
    from regime_core.runner.claim_record import paper_text
    from regime_core.runner.judge import COMPARISON_RULES
    from regime_core.runner.ours import Parts

    pp_rows: list[ChartRow] = []
    text_rows: list[TextRow] = []
    for judged in verdicts:
        claim, judgement = judged.claim, judged.judgement
        label = claim.label or claim.claim
        if claim.rule not in COMPARISON_RULES:
            text_rows.append(
                TextRow(
                    label,
                    claim.chapter,
                    judgement.verdict,
                    judgement.short_label,
                    paper_text(claim),
                    ours_text(judged),
                )
            )
            continue
        values = judged.values
        parts: Mapping[str, Any] = values.parts if isinstance(values, Parts) else {"": values}
        for part, ours in parts.items():
            part_judgement = judgement.parts.get(part, judgement) if part else judgement
            estimate, lo, hi = ours.estimate, ours.ci_lo, ours.ci_hi
            pp_rows.append(
                ChartRow(
                    label=f"{label} · {part}" if part else label,
                    chapter=claim.chapter,
                    verdict=part_judgement.verdict,
                    verdict_label=part_judgement.short_label,
                    estimate=PP * estimate,
                    ci_lo=PP * lo,
                    ci_hi=PP * hi,
                    paper_text=paper_text(claim),
                    ours_text=ours_interval(ours),
                    **_paper_marks(claim),
                )
            )
    return pp_rows, text_rows


def chart_caption(rules: Iterable[str], *, text_rows: bool = True) -> str:
    """What the chart draws, for the claim kinds it shows (``rules``); ``text_rows`` says that
    the claims not in pp follow as text."""
    from regime_core.runner.judge import SMALLEST_EFFECT

    level = round(100 * config.CONFIDENCE)
    margin = format_number(SMALLEST_EFFECT, "pp").removeprefix("+")
    kinds = [PAPER_MARKS[r].format(margin=margin) for r in dict.fromkeys(rules) if r in PAPER_MARKS]
    rest = " The last rows are the claims not measured in pp." if text_rows else ""
    return (
        "The claims measured in percentage points (pp) of hit@5, on one axis. The paper: "
        f"{'; '.join(kinds) or 'nothing'}. Ours: \u25cf our estimate, a bar over its {level}% "
        "confidence interval (a Holm-level interval where the comparison is Holm-adjusted, its "
        "level in the row's text). The solid line is zero. Colour and words give the verdict; each "
        f"label links to its evidence.{rest}"
    )


# --- rendering -----------------------------------------------------------------------------------


class html_element(nodes.General, nodes.Element):
    """``<tag ...>children</tag>`` in HTML: ``tag`` and ``attributes`` (``style``, ``role``,
    ``aria-*``) are node attributes; other builders render only the children."""


def visit_html_element(translator: Any, node: html_element) -> None:
    attributes = dict(node.get("attributes", {}))
    translator.body.append(translator.starttag(node, node["tag"], suffix="", **attributes))


def depart_html_element(translator: Any, node: html_element) -> None:
    translator.body.append(f"</{node['tag']}>")


def pass_through(translator: Any, node: html_element) -> None:
    """Other builders than HTML: the element itself writes nothing, its children do."""


def element(tag: str, classes: Sequence[str] = (), *children: nodes.Node, **attributes: str) -> Any:
    """An :class:`html_element`; ``aria_label`` is written ``aria-label`` (and so on)."""
    node = html_element("", *children, classes=list(classes), tag=tag)
    node["attributes"] = {k.replace("_", "-"): v for k, v in attributes.items()}
    return node


def _pct(value: float) -> str:
    return f"{value:.2f}%"


def _verdict_node(verdict: str, verdict_label: str) -> nodes.Node:
    from regime_core.runner.judge import OURS_WORDS

    # the label opens with the verdict's words: the verdict, or a statement of ours' own words
    words = verdict if verdict_label.startswith(verdict) else OURS_WORDS.get(verdict, verdict)
    node = nodes.inline(classes=["regime-chart-verdict-text"])
    node += nodes.strong(text=words)
    flags = verdict_label.removeprefix(words).strip()
    if flags:
        node += nodes.Text(" ")
        node += nodes.inline(text=flags, classes=["regime-chart-flag"])
    return node


def _mark(kind: str, left: float, width: float | None = None) -> Any:
    style = f"left: {_pct(left)}" + ("" if width is None else f"; width: {_pct(width)}")
    return element("span", [f"regime-chart-{kind}"], style=style)


def _track(layout: RowLayout, chart: ChartLayout) -> Any:
    marks = [_mark("gridline", chart.axis.at(t)) for t in chart.axis.ticks]
    if layout.allowed is not None:
        marks.append(_mark("allowed", *layout.allowed))
    if layout.paper_band is not None:
        marks.append(_mark("band", *layout.paper_band))
    marks += [_mark("margin", m) for m in layout.margins]
    marks.append(_mark("zero", chart.zero))
    if layout.paper_value is not None:
        marks.append(_mark("paper", layout.paper_value))
    marks.append(_mark("interval", *layout.interval))
    marks.append(_mark("estimate", layout.estimate))
    return element("div", ["regime-chart-track"], *marks, aria_hidden="true")


def _row(row: TextRow, track: Any, docname: str, *, numbers_shown: bool = True) -> Any:
    """A row: its label (linked), the track (``None`` for a text row), the numbers in words
    (unless ``numbers_shown`` is false: a compact chart) and the verdict in words; coloured by
    its verdict's class, read out (numbers included) by its aria-label."""
    link = chapter_link(row.label, row.chapter, docname)
    name = element(
        "div", ["regime-chart-label"], nodes.inline("", "", link, classes=["regime-chart-name"])
    )
    numbers_text = nodes.inline(text=f"paper {row.paper_text} · ours {row.ours_text}")
    numbers = element("div", ["regime-chart-numbers"], numbers_text)
    verdict = element(
        "div", ["regime-chart-verdict"], _verdict_node(row.verdict, row.verdict_label)
    )
    children = [name, *([track] if track is not None else []), verdict]
    if numbers_shown:
        children.insert(-1, numbers)
    kind = "regime-chart-row" if track is not None else "regime-chart-textrow"
    aria = (
        f"{row.label}. Paper: {row.paper_text}. Ours: {row.ours_text}. "
        f"Verdict: {row.verdict_label}."
    )
    return element(
        "div", [kind, verdict_class(row.verdict)], *children, role="group", aria_label=aria
    )


def _axis_row(chart: ChartLayout) -> Any:
    ticks = [
        element(
            "span",
            ["regime-chart-tick"],
            nodes.Text(tick_text(t)),
            style=f"left: {_pct(chart.axis.at(t))}",
        )
        for t in chart.axis.ticks
    ]
    track = element("div", ["regime-chart-ticks"], *ticks)
    unit = element("div", ["regime-chart-unit"], nodes.Text("pp"))
    return element(
        "div",
        ["regime-chart-axis"],
        element("div", ["regime-chart-label"]),
        track,
        unit,
        aria_hidden="true",
    )


def render_chart(
    pp_rows: Sequence[ChartRow],
    text_rows: Sequence[TextRow],
    caption: str,
    docname: str,
    *,
    numbers_shown: bool = True,
) -> Any:
    """The chart as :class:`html_element` nodes: a ``<figure>`` of the pp rows on their axis
    (tick labels above and below), the text rows, and its caption; ``numbers_shown`` false
    leaves every row's numbers in words to its aria-label (a compact chart)."""
    classes = ["regime-claims-chart"] + ([] if numbers_shown else ["regime-chart-compact"])
    figure = element("figure", classes)
    if pp_rows:
        chart = chart_layout(pp_rows)
        body = element("div", ["regime-chart-rows"])
        body += _axis_row(chart)
        for layout in chart.rows:
            body += _row(layout.row, _track(layout, chart), docname, numbers_shown=numbers_shown)
        body += _axis_row(chart)
        figure += body
    if text_rows:
        rest = element("div", ["regime-chart-text"])
        for row in text_rows:
            rest += _row(row, None, docname, numbers_shown=numbers_shown)
        figure += rest
    figure += element("figcaption", [], nodes.Text(caption))
    return figure


class ClaimsChartDirective(SphinxDirective):
    """The summary chart of every claim of ``paper_claims.yml`` (``:file:`` overrides it),
    judged on the records; a missing record or key is a warning, so a strict build fails.
    ``:compact:`` writes no row's numbers in words (the marks draw the pp rows'; the landing
    page's budget); the caption then says where they are written out."""

    option_spec: ClassVar[dict[str, Any]] = {
        "file": directives.unchanged,
        "compact": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        judged = judged_claims(self, self.options.get("file"))
        if judged is None:
            return []
        verdicts = [verdict for _, verdict in judged if verdict is not None]
        pp_rows, text_rows = chart_rows(verdicts)
        caption = chart_caption([v.claim.rule for v in verdicts], text_rows=bool(text_rows))
        compact = "compact" in self.options
        if compact:
            caption += (
                " Each row's numbers, in words, are in the table of the paper's numbers and ours."
            )
        return [
            render_chart(pp_rows, text_rows, caption, self.env.docname, numbers_shown=not compact)
        ]
