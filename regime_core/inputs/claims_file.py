"""``paper_claims.yml``, declared: the paper's claims, each with the paper's side and the record
keys of ours, the roles of the data they read, and why a verdict came out (read by
:func:`regime_core.paper.load_claims`, which keeps the rules that depend on a claim's ``rule``).

A number of a record is named in one grammar wherever the file names one
(:data:`RECORD_KEY`): a dotted key of a record's numbers, ``{value}`` where each setting's
value goes, ``RUN:`` before it for another run's record (:data:`RUN_RECORD_KEY`, in a ``why``
entry's ``when``, and inside a template's ``{numbers.KEY}`` fields:
:data:`regime_core.paper.WHY_FIELD`).
"""

from __future__ import annotations

from regime_core.inputs import (
    Choice,
    Data,
    Field,
    Flag,
    Format,
    Items,
    Nullable,
    Number,
    Pattern,
    Record,
    Table,
    Text,
)

#: the characters of one level of a record key (a dataset, an encoder, ``hit@5``, ``P1-P2+``)
KEY_CHARS = r"[A-Za-z0-9_@+-]"
#: a dotted record key, each level's characters or ``{value}``
RECORD_KEY_RE = rf"(?:{KEY_CHARS}|\{{value\}})+(?:\.(?:{KEY_CHARS}|\{{value\}})+)*"
RECORD_KEY = Pattern(RECORD_KEY_RE, "a dotted record key")
#: a record key of another run's record: ``RUN:KEY`` (or of the claim's own: ``KEY``)
RUN_RECORD_KEY = Pattern(rf"(?:[a-z0-9_]+:)?{RECORD_KEY_RE}", "a dotted record key (RUN:KEY)")
#: whose statement a claim is: the paper's, or ours (a statement the paper never makes)
ORIGINS: tuple[str, ...] = ("paper", "ours")
#: routed against always-q or always-union, the oracle against routed, or routed with the
#: rule's ``B_rel`` against with the gold one
COMPARISONS: tuple[str, ...] = (
    "routed_vs_q",
    "routed_vs_union",
    "oracle_vs_routed",
    "rule_vs_gold",
)
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

#: the paper's numbers any claim may state: each one a number, never yes or no
_PAPER_NUMBERS = tuple(
    Field(name, Number(), required=False, meaning=meaning)
    for name, meaning in (
        ("value", "the paper's estimate"),
        ("low", "the low end of the paper's range"),
        ("high", "the high end of the paper's range"),
        ("bound", "the paper's bound"),
        ("threshold", "the threshold the paper's cells pass"),
    )
)
STATEMENT = Field("statement", Text(), meaning="what the paper states, in words")


def _paper_side(rule: str, *fields: Field) -> Format:
    """The paper's side of a claim judged by ``rule``: the fields the rule judges or shows, the
    numbers any claim may state, and whatever else the paper says (``p_below``, ``setting``)."""
    named = {field.name for field in fields}
    rest = tuple(field for field in _PAPER_NUMBERS if field.name not in named)
    return Format(f"the paper's side of a {rule!r} claim", (*fields, *rest), closed=False)


#: the paper's side of a claim, by its ``rule`` (the kinds of claim); what the fields must say
#: together (a range of one sign, a share of no more cells than there are, an estimate other
#: than zero) is :func:`regime_core.paper.load_claims`'s
PAPER_BY_RULE: dict[str, Format] = {
    "estimate": _paper_side("estimate", Field("value", Number(), meaning="the paper's estimate")),
    "range": _paper_side(
        "range",
        Field("low", Number(), meaning="the low end of the paper's range"),
        Field("high", Number(), meaning="the high end of the paper's range"),
    ),
    **{rule: _paper_side(rule, STATEMENT) for rule in ("positive", "no_loss", "equivalence")},
    "level": _paper_side(
        "level", Field("levels", Table(Number(), min_items=1), meaning="each part's level")
    ),
    "bound": _paper_side(
        "bound", Field("bound", Number(low=0, low_open=True), meaning="the paper's bound")
    ),
    "share": _paper_side(
        "share",
        Field("passing", Number(low=0, integer=True), meaning="the cells that pass"),
        Field("total", Number(low=1, integer=True), meaning="the cells there are"),
    ),
    "holds": _paper_side("holds", STATEMENT),
    "untestable": _paper_side(
        "untestable", STATEMENT, Field("why", Text(), meaning="why it cannot be tested here")
    ),
}
RULES: tuple[str, ...] = tuple(PAPER_BY_RULE)

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
        Field("text", Text(), meaning="the sentence template, its fields filled from records"),
        Field("run", Text(), required=False, meaning="the run whose record fills it"),
        Field("each", Table(Text(), min_items=1), required=False,
              meaning="one sentence per label, its value filling {value}"),
        Field("when", Items(Text(), length=3), required=False,
              meaning="[KEY, OP, KEY]: said only when the comparison holds"),
        Field("lead", Text(blank=True), required=False, meaning="the text before the sentences"),
        Field("join", Text(blank=True), required=False, meaning="what joins the sentences"),
        Field("none", Text(blank=True), required=False, meaning="said when no sentence is"),
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
        Field("multiverse", Record(MULTIVERSE), required=False, default={},
              meaning="its specification curve in the robustness chapter"),
        Field("diagnosis", Items(Record(DIAGNOSIS)), required=False, default=(),
              meaning="the settings a verdict other than 'reproduced' is re-judged under"),
        Field("why", Items(Record(WHY)), required=False, default=(),
              meaning="why a verdict other than 'reproduced' came out, in templates"),
    ),
)  # fmt: skip
CLAIMS_FILE = Format(
    "paper_claims.yml",
    (
        Field("paper", Text(), required=False, meaning="the paper's title and arXiv id"),
        Field("roles", Table(Record(ROLE)), required=False, default={},
              meaning="the roles of the data a claim reads, by name"),
        Field("claims", Items(Data(), min_items=1),
              meaning="every claim, each a CLAIM read on its own so that a refusal names it"),
    ),
)  # fmt: skip
