"""``paper_claims.yml``, declared: the paper's claims, each with the paper's side and the record
keys of ours, the roles of the data they read, and why a verdict came out (read by
:func:`regime_core.paper.load_claims`, which keeps the rules that depend on a claim's ``rule``).

A number of a record is named in one grammar wherever the file names one
(:data:`RECORD_KEY`): a dotted key of a record's numbers, ``{value}`` where each setting's
value goes, ``RUN:`` before it for another run's record (:data:`RUN_RECORD_KEY`, in a ``why``
entry's ``when``, and inside a template's ``{numbers.KEY}`` fields:
:data:`WHY_FIELD_RE`).
"""

from __future__ import annotations

from dataclasses import replace

from regime_core.inputs import (
    Choice,
    Data,
    Field,
    Flag,
    Format,
    Items,
    Nested,
    Nullable,
    Number,
    Pattern,
    Table,
    Text,
    Tuple,
)
from regime_core.inputs.run_declarations import RUN_ID
from regime_core.vocabulary import NUMBER_KINDS

#: the characters of one level of a record key (a dataset, an encoder, ``hit@5``, ``P1-P2+``)
KEY_CHARS = r"[A-Za-z0-9_@+-]"
#: a dotted record key as a record holds it (the key of a template's ``{numbers.KEY}`` field)
DOTTED_KEY_RE = rf"{KEY_CHARS}+(?:\.{KEY_CHARS}+)*"
RECORD_KEY_RE = rf"(?:{KEY_CHARS}|\{{value\}})+(?:\.(?:{KEY_CHARS}|\{{value\}})+)*"
#: a dotted record key as the claims file writes it, ``{value}`` standing for part of a level
RECORD_KEY = Pattern(RECORD_KEY_RE, "a dotted record key")
#: a record key of another run's record: ``RUN:KEY`` (or of the claim's own: ``KEY``)
RUN_RECORD_KEY = Pattern(rf"(?:[a-z0-9_]+:)?{RECORD_KEY_RE}", "a dotted record key (RUN:KEY)")
#: a field of a ``why`` template: ``{[RUN:]numbers.KEY[|KIND[:DIGITS]]}``,
#: ``{[RUN:]config.FIELD}`` or ``{paper.KEY[|KIND[:DIGITS]]}`` (the claim's paper side)
WHY_FIELD_RE = (
    rf"\{{(?:(?P<run>[a-z0-9_]+):)?(?P<source>numbers|config|paper)\.(?P<key>{DOTTED_KEY_RE})"
    r"(?:\|(?P<kind>[a-z0-9]+)(?::(?P<digits>[0-9]+))?)?\}"
)
_VALUE = r"\{value\}"  # stands for part of a name or key inside a field, as in RECORD_KEY_RE
_TEMPLATE_RE = (
    rf"(?:[^{{}}]|{_VALUE}|\{{label\}}|\{{(?:(?:[a-z0-9_]|{_VALUE})+:)?(?:numbers|config|paper)"
    rf"\.{RECORD_KEY_RE}(?:\|(?:{'|'.join(NUMBER_KINDS)})(?::[0-9]+)?)?\}})*"
)
_TEMPLATE_WHAT = (
    "a template whose braces are {numbers.KEY|KIND}, {RUN:numbers.KEY}, {config.FIELD}, "
    f"{{paper.KEY}}, {{label}} or {{value}} (KIND one of {', '.join(NUMBER_KINDS)})"
)
#: a ``why`` sentence template: text whose braces are fields of a known number format, or
#: ``{label}`` or ``{value}`` (a brace that is none would be printed as written), not blank
TEMPLATE = Pattern(rf"(?=[\s\S]*\S){_TEMPLATE_RE}", f"{_TEMPLATE_WHAT}, not blank")
#: a template that may be blank (a ``why`` entry's ``lead`` and ``none``)
BLANK_TEMPLATE = Pattern(_TEMPLATE_RE, _TEMPLATE_WHAT)
#: the comparisons a ``why`` entry's ``when`` may make
OPERATORS: tuple[str, ...] = ("<", "<=", ">", ">=", "==", "!=")
#: whose statement a claim is: the paper's, or ours (a statement the paper never makes)
ORIGINS: tuple[str, ...] = ("paper", "ours")
#: routed against always-q or always-union, the oracle against routed, or routed with the
#: rule's ``B_rel`` against with the gold one
COMPARISONS = ("routed_vs_q", "routed_vs_union", "oracle_vs_routed", "rule_vs_gold")
#: the longest short ``label`` of a claim: it names the claim's row in the landing page's chart,
#: its verdict table and the paper-against-ours cards, so it must fit on a phone's line
LABEL_MAX_CHARS = 40
#: one line of at most LABEL_MAX_CHARS characters once stripped of the spaces around it
LABEL = Pattern(
    rf"[ \t]*\S(?:[^\n]{{0,{LABEL_MAX_CHARS - 2}}}\S)?[ \t]*",
    f"one line of at most {LABEL_MAX_CHARS} characters (the full statement goes in 'claim')",
)
#: record keys: each a dotted key, or a group of them by name (``parts``, ``too_few``)
OURS = Table(RECORD_KEY, tree=True)

#: what the paper's side of a claim may state; its rule requires some (:data:`PAPER_BY_RULE`)
_PAPER = {
    field.name: field
    for field in (
        Field("value", Number(), required=False, meaning="the paper's estimate"),
        Field("low", Number(), required=False, meaning="the low end of the paper's range"),
        Field("high", Number(), required=False, meaning="the high end of the paper's range"),
        Field("bound", Number(low=0, low_open=True), required=False, meaning="its bound"),
        Field("threshold", Number(), required=False, meaning="what the paper's cells pass"),
        Field("statement", Text(), required=False, meaning="what the paper states, in words"),
        Field("why", Text(), required=False, meaning="why it cannot be tested here"),
        Field("levels", Table(Number(), min_items=1), required=False, meaning="each level"),
        Field("passing", Number(low=0, integer=True), required=False, meaning="cells passing"),
        Field("total", Number(low=1, integer=True), required=False, meaning="cells in all"),
        Field("p_below", Number(low=0, high=1), required=False, meaning="p is below this"),
        Field("p", Number(low=0, high=1), required=False, meaning="the paper's p-value"),
        Field("significant", Flag(), required=False, meaning="false: the paper's n.s."),
        Field("approximate", Flag(), required=False, meaning="the paper says ≈"),
        Field("setting", Text(), required=False, meaning="how the paper's number was obtained"),
        Field("unit", Text(), required=False, meaning="the unit of the paper's bound"),
    )
}


def _paper_side(rule: str, *required: str) -> Format:
    """The paper's side of a claim judged by ``rule``: the fields the rule judges or shows
    (``required``), any other it may state, and whatever else the paper says (``p_below``)."""
    fields = {**_PAPER, **{name: replace(_PAPER[name], required=True) for name in required}}
    return Format(f"the paper's side of a {rule!r} claim", tuple(fields.values()), closed=False)


#: the paper's side of a claim, by its ``rule`` (the kinds of claim); what the fields must say
#: together (a range of one sign, a share of no more cells than there are, an estimate other
#: than zero) is :func:`regime_core.paper.load_claims`'s
PAPER_BY_RULE: dict[str, Format] = {
    "estimate": _paper_side("estimate", "value"),
    "range": _paper_side("range", "low", "high"),
    **{rule: _paper_side(rule, "statement") for rule in ("positive", "no_loss", "equivalence")},
    "level": _paper_side("level", "levels"),
    "bound": _paper_side("bound", "bound"),
    "share": _paper_side("share", "passing", "total"),
    "holds": _paper_side("holds", "statement"),
    "untestable": _paper_side("untestable", "statement", "why"),
}
RULES: tuple[str, ...] = tuple(PAPER_BY_RULE)

#: the record keys of our side a comparison reads: its estimate and its interval
_COMPARISON_KEYS = ("estimate", "ci_lo", "ci_hi")


def _ours_side(rule: str, *keys: str, parts: bool = False) -> Format:
    """Our side of a claim judged by ``rule``: its ``run`` and the record keys ``keys`` the rule
    reads, directly or (``parts``) under each part; any other key is a record key too (``OURS``)."""
    named = tuple(Field(key, RECORD_KEY, meaning=f"the record key of our {key}") for key in keys)
    if parts:
        part = Format(f"a part of a {rule!r} claim", named, closed=False)
        named = (Field("parts", Table(Nested(part), min_items=1), meaning="each part's keys"),)
    run = Field("run", RUN_ID, meaning="the run whose record holds our numbers")
    return Format(f"our side of a {rule!r} claim", (run, *named), closed=False)


#: our side of a claim by its ``rule``, naming the record keys directly
OURS_BY_RULE: dict[str, Format] = {
    **{rule: _ours_side(rule, *_COMPARISON_KEYS) for rule in ("estimate", "range", "positive",
                                                              "no_loss", "equivalence")},
    "level": _ours_side("level", "estimate", "n", parts=True),
    "bound": _ours_side("bound", "estimate"),
    "share": _ours_side("share", "passing", "total"),
    "holds": _ours_side("holds", "holds"),
    "untestable": _ours_side("untestable"),  # optional record keys, shown beside the reason
}  # fmt: skip
#: our side of a claim judged part by part (``ours.parts``, always for ``level``; ``holds``
#: reads its one record key whatever its parts)
OURS_BY_PART: dict[str, Format] = {
    rule: OURS_BY_RULE["level"] if rule == "level" else _ours_side(rule, *_COMPARISON_KEYS,
                                                                    parts=True)
    for rule in RULES
    if rule != "holds"
}  # fmt: skip

ROLE = Format(
    "role",
    (
        Field("what", Text(), meaning="the role in words"),
        Field("paper", Nullable(Text()), required=False,
              meaning="the paper's dataset in it, whose name the claims' record keys use"),
        Field("fields", Table(Text(), min_items=1),
              meaning="by run id, the config field whose dataset(s) fill the role"),
    ),
)  # fmt: skip
MULTIVERSE = Format(
    "multiverse",
    (
        Field("title", Text(), required=False, meaning="its specification curve's title"),
        Field("estimate", Text(), required=False, meaning="what the curve's estimate is"),
        Field("percent", Flag(), required=False, meaning="false: no difference of rates"),
        Field("outside", Text(), required=False, meaning="why the multiverse cannot re-judge it"),
    ),
)  # fmt: skip
DIAGNOSIS = Format(
    "diagnosis",
    (
        Field("factor", Text(), meaning="the setting that bears on the claim, in words"),
        Field("run", Text(), meaning="the run whose record holds the re-judged numbers"),
        Field("label", Text(), required=False, meaning="a single setting's name"),
        Field("node", RECORD_KEY, required=False, meaning="the record node of the setting(s)"),
        Field("values", Table(Text(), min_items=1), required=False,
              meaning="each setting's label and what fills {value} in 'node' or 'ours'"),
        Field("ours", OURS, required=False, meaning="the setting's record keys, as the claim's"),
    ),
)  # fmt: skip
WHY = Format(
    "why",
    (
        Field("text", TEMPLATE, meaning="the sentence template, its fields filled from records"),
        Field("run", Text(), required=False, meaning="the run whose record fills it"),
        Field("each", Table(Text(), min_items=1), required=False,
              meaning="one sentence per label, its value filling {value}"),
        Field("when", Tuple((RUN_RECORD_KEY, Choice(OPERATORS), RUN_RECORD_KEY)), required=False,
              meaning="[KEY, OP, KEY]: said only when the comparison holds"),
        Field("lead", BLANK_TEMPLATE, required=False, meaning="the text before the sentences"),
        Field("join", Text(blank=True), required=False, meaning="what joins the sentences"),
        Field("none", BLANK_TEMPLATE, required=False, meaning="said when no sentence is"),
    ),
)  # fmt: skip
CLAIM = Format(
    "claim",
    (
        Field("id", Text(), meaning="the claim's id, unique in the file"),
        Field("label", LABEL, meaning="a short name for its row in charts and tables"),
        Field("claim", Text(), meaning="the statement, in the paper's words"),
        Field("source", Text(), meaning="where the paper states it"),
        Field("chapter", Text(), required=False, default="", meaning="the book page testing it"),
        Field("data", Items(Text()), required=False, default=(),
              meaning="the roles of the data it reads (declared under 'roles')"),
        Field("rule", Choice(RULES), meaning="how it is judged (which paper and ours fields)"),
        Field("comparison", Choice(COMPARISONS), required=False, default="",
              meaning="what its estimate compares, for the multiverse's routing readings"),
        Field("origin", Choice(ORIGINS), required=False, default="paper",
              meaning="whose statement it is"),
        Field("paper", Table(Data()), meaning="the paper's values (its rule says which)"),
        Field("ours", OURS, meaning="'run' and the record keys of our side (its rule says which)"),
        Field("computed_on", Text(blank=True), required=False, default="",
              meaning="what our number is computed on ({config.field}, {numbers.key} filled)"),
        Field("multiverse", Nested(MULTIVERSE), required=False, default={},
              meaning="its specification curve in the robustness chapter"),
        Field("diagnosis", Items(Nested(DIAGNOSIS)), required=False, default=(),
              meaning="the settings a verdict other than 'reproduced' is re-judged under"),
        Field("why", Items(Nested(WHY)), required=False, default=(),
              meaning="why a verdict other than 'reproduced' came out, in templates"),
    ),
)  # fmt: skip
CLAIMS_FILE = Format(
    "paper_claims.yml",
    (
        Field("paper", Text(), required=False, meaning="the paper's title and arXiv id"),
        Field("roles", Table(Nested(ROLE)), required=False, default={},
              meaning="the roles of the data a claim reads, by name"),
        Field("claims", Items(Data(), min_items=1),
              meaning="every claim, each a CLAIM read on its own so that a refusal names it"),
    ),
)  # fmt: skip
