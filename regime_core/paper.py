"""The paper's claims, read from ``paper_claims.yml``: every number of the paper, typed once.

``paper_claims.yml`` (at the top of the repository) holds each claim of the paper with its
source: the *paper's* side (its numbers) and the record keys of *ours*. This module reads and
validates it; nothing else types a number of the paper. The experiments print the paper's
numbers next to theirs from here (``PAPER_*`` in :mod:`regime_core.experiments.t1_auc_margin`,
:mod:`~regime_core.experiments.t3_brel_knockout` and
:mod:`~regime_core.experiments.zero_shot_transfer`), and :mod:`regime_core.runner.judge` judges
each claim on our records.

Code finds a claim by what the file says of it (:func:`claim_where`), never by its id:

>>> knockout = claim_where(run="t3_brel_knockout")
>>> knockout.rule, knockout.number("low"), knockout.number("high"), knockout.p_text()
('range', 0.086, 0.141, 'p < 0.001')
>>> claim_where(comparison="routed_vs_q", data=["transfer_2"]).p_text()
'n.s.'
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core import paths

PAPER_CLAIMS_FILE = paths.source_root() / "paper_claims.yml"

#: The fields of the paper's side each kind of claim (``rule``) must state.
_REQUIRED_PAPER: dict[str, tuple[str, ...]] = {
    "estimate": ("value",),
    "range": ("low", "high"),
    "positive": ("statement",),
    "no_loss": ("statement",),
    "equivalence": ("statement",),
    "level": ("levels",),
    "bound": ("bound",),
    "share": ("passing", "total"),
    "holds": ("statement",),
    "untestable": ("statement", "why"),
}
#: The record keys of our side each kind of claim must name (a comparison claim judged part by
#: part names them under each of ``parts`` instead).
_COMPARISON_OURS: tuple[str, ...] = ("estimate", "ci_lo", "ci_hi")
_REQUIRED_OURS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("estimate", "range", "positive", "no_loss", "equivalence"), _COMPARISON_OURS),
    "level": (),
    "bound": ("estimate",),
    "share": ("passing", "total"),
    "holds": ("holds",),
    "untestable": (),  # optional record keys, shown beside the reason
}
#: The kinds of claim; :data:`regime_core.runner.judge.VERDICT_RULES` gives each its verdict rule.
CLAIM_RULES: tuple[str, ...] = tuple(_REQUIRED_PAPER)
#: Whose statement a claim is (its ``origin``): the paper's (the default), or ours, a statement
#: the paper never makes (such as the calibrated weight of the α-transfer run): no paper value
#: to reproduce, judged by the same rules, and every page that lists verdicts says so.
ORIGINS: tuple[str, ...] = ("paper", "ours")
#: A claim's ``comparison``: routed against always-q or always-union, the oracle against
#: routed, or routed with the rule's ``B_rel`` against with the gold one.
COMPARISONS = ("routed_vs_q", "routed_vs_union", "oracle_vs_routed", "rule_vs_gold")
#: The fields of a claim's ``multiverse`` (:attr:`Claim.multiverse`).
MULTIVERSE_FIELDS: tuple[str, ...] = ("title", "estimate", "percent", "outside")
#: The fields of an entry of a claim's ``why`` (:mod:`regime_core.runner.explanation`).
WHY_FIELDS: tuple[str, ...] = ("run", "each", "when", "lead", "text", "join", "none")
#: The comparisons a ``why`` entry's ``when`` may make.
WHEN_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
#: A field of a ``why`` template: ``{[RUN:]numbers.KEY[|KIND[:DIGITS]]}``,
#: ``{[RUN:]config.FIELD}`` or ``{paper.KEY[|KIND[:DIGITS]]}`` (the claim's paper side).
WHY_FIELD = re.compile(
    r"\{(?:(?P<run>[a-z0-9_]+):)?(?P<source>numbers|config|paper)\.(?P<key>[A-Za-z0-9_.@+-]+)"
    r"(?:\|(?P<kind>[a-z0-9]+)(?::(?P<digits>[0-9]+))?)?\}"
)
#: A key of a ``why`` entry's ``when``: ``[RUN:]dotted.key`` of ``numbers``, or ``paper.KEY``.
WHY_KEY = re.compile(r"^(?:(?P<run>[a-z0-9_]+):)?(?P<key>[A-Za-z0-9_.@+-]+)$")
#: The longest short ``label`` of a claim: it names the claim's row in the landing page's chart,
#: its verdict table and the paper-against-ours cards, so it must fit on a phone's line.
LABEL_MAX_CHARS = 40


def _check_label(where: str, label: Any) -> str:
    """A claim's ``label``: a non-empty one-line text of at most :data:`LABEL_MAX_CHARS`."""
    if not isinstance(label, str) or not label.strip():
        raise ValueError(
            f"{where}: 'label' must be a short non-empty text naming the claim (at most "
            f"{LABEL_MAX_CHARS} characters, e.g. 'T3: knocking out B_rel costs 8.6–14.1 pp')"
        )
    text = label.strip()
    if "\n" in text:
        raise ValueError(f"{where}: 'label' {text!r} must be one line")
    if len(text) > LABEL_MAX_CHARS:
        raise ValueError(
            f"{where}: 'label' {text!r} has {len(text)} characters; shorten it to at most "
            f"{LABEL_MAX_CHARS} (the full statement belongs in 'claim')"
        )
    return text


def _check_ours(where: str, rule: str, ours: Mapping[str, Any]) -> None:
    """Our side names every record key its rule reads, directly or under each part."""
    parts = ours.get("parts")
    if rule == "level" or (rule in _REQUIRED_PAPER and parts is not None and rule != "holds"):
        if not isinstance(parts, Mapping) or not parts:
            raise ValueError(f"{where}: 'ours.parts' must map each part to its record keys")
        needed = ("estimate", "n") if rule == "level" else _COMPARISON_OURS
        for label, keys in parts.items():
            if not isinstance(keys, Mapping):
                raise ValueError(f"{where}: 'ours.parts.{label}' must map fields to record keys")
            missing = [f for f in needed if f not in keys]
            if missing:
                raise ValueError(f"{where}: 'ours.parts.{label}' lacks the record keys {missing}")
        return
    missing = [f for f in _REQUIRED_OURS[rule] if f not in ours]
    if missing:
        raise ValueError(f"{where}: 'ours' lacks the record keys {missing}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_paper(where: str, rule: str, paper: Mapping[str, Any]) -> None:
    """The paper's values its rule judges or shows, checked once here so that the judge trusts
    them: numbers (not yes or no), an estimate other than zero, a range of one sign, a share of
    whole cells, a positive bound. Checked, never coerced."""
    numbers = {f: paper[f] for f in ("value", "low", "high", "bound", "threshold") if f in paper}
    if rule == "level":
        numbers.update({f"levels.{k}": v for k, v in paper["levels"].items()})
    if rule == "share":
        numbers.update(passing=paper["passing"], total=paper["total"])
    for name, value in numbers.items():
        if not _is_number(value):
            raise ValueError(f"{where}: 'paper.{name}' is {value!r}, not a number")
    if rule == "estimate" and paper["value"] == 0:
        raise ValueError(
            f"{where}: 'paper.value' is 0, which is no effect; judge it with the rule 'no_loss'"
        )
    if rule == "range":
        low, high = paper["low"], paper["high"]
        if not low <= high or low * high < 0 or low == high == 0:
            raise ValueError(
                f"{where}: 'paper.low' {low} and 'paper.high' {high} are no range of one sign "
                "(low <= high, both above or both below zero)"
            )
    if rule == "share":
        passing, total = paper["passing"], paper["total"]
        if not isinstance(passing, int) or not isinstance(total, int) or not 0 <= passing <= total:
            raise ValueError(
                f"{where}: 'paper.passing' {passing} of 'paper.total' {total} is no share of "
                "whole cells (0 <= passing <= total)"
            )
        if total <= 0:
            raise ValueError(f"{where}: 'paper.total' is {total}; a share needs a cell")
    if rule == "bound" and not paper["bound"] > 0:
        raise ValueError(f"{where}: 'paper.bound' is {paper['bound']}, not above zero")


def _check_paper_keys(
    where: str, paper: Mapping[str, Any], why: Sequence[Mapping[str, Any]]
) -> None:
    """Every ``{paper.KEY}`` of a ``why`` entry, and every ``paper.KEY`` its ``when`` compares,
    names a value the claim states (a number, for a comparison): the claims file, not a record,
    would be wrong, so it fails here rather than when a page is built."""
    for i, entry in enumerate(why):
        fills = [str(v) for v in (entry.get("each") or {"": "{value}"}).values()]
        for fill in fills:
            texts = [
                str(entry.get(f, "")).replace("{value}", fill) for f in ("text", "lead", "none")
            ]
            keys = [
                (m.group("key"), False)
                for t in texts
                for m in WHY_FIELD.finditer(t)
                if m.group("source") == "paper"
            ]
            keys += [
                (str(k).replace("{value}", fill).removeprefix("paper."), True)
                for k in (entry.get("when") or [])[::2]
                if str(k).startswith("paper.")
            ]
            for key, compared in keys:
                node: Any = paper
                for part in key.split("."):
                    node = node.get(part) if isinstance(node, Mapping) else None
                if node is None or isinstance(node, Mapping) or (compared and not _is_number(node)):
                    raise ValueError(
                        f"{where}: why[{i}] names the paper's {key!r}, which the claim does not "
                        "state" + (" as a number" if compared and node is not None else "")
                    )


@dataclass(frozen=True, slots=True)
class Role:
    """A role of the data a claim reads (``roles:`` of ``paper_claims.yml``): its name, what it
    is in words, the paper's dataset in it, whose name the claims' record keys use (None: keys
    that name no dataset, e.g. every dataset of a run pooled) and, by run id, the config field
    whose dataset(s) fill it (:mod:`regime_core.runner.roles`)."""

    name: str
    what: str
    paper: str | None
    fields: Mapping[str, str]


@dataclass(frozen=True)
class Claim:
    """One claim of ``paper_claims.yml``: the paper's side (values) and ours (record keys)."""

    id: str
    claim: str
    source: str
    rule: str
    paper: Mapping[str, Any]
    run: str
    ours: Mapping[str, Any]
    computed_on: str = ""
    chapter: str = ""
    #: a short name for the claim's row (at most :data:`LABEL_MAX_CHARS`); required in the file
    label: str = ""
    #: the settings a verdict other than "reproduced" is diagnosed under
    #: (:mod:`regime_core.runner.diagnosis`): each ``factor``, ``run`` and ``node`` (with
    #: ``values``), or ``label`` and ``node`` or ``ours``
    diagnosis: tuple[Mapping[str, Any], ...] = ()
    #: whose statement it is (:data:`ORIGINS`): ``paper`` (default) or ``ours``
    origin: str = "paper"
    #: why a verdict other than "reproduced" came out, in sentence templates filled from the
    #: records (:mod:`regime_core.runner.explanation`): each ``text``, with ``run``, ``each``,
    #: ``when``, ``lead``, ``join`` and ``none``
    why: tuple[Mapping[str, Any], ...] = ()
    #: the roles of the data it reads (``roles:`` of the claims file: the training set, each
    #: transfer set, every dataset pooled); judged on whatever dataset fills them
    data: tuple[str, ...] = ()
    #: what its estimate compares (:data:`COMPARISONS`), for the multiverse's routing readings
    comparison: str = ""
    #: its specification curve's ``title``, ``estimate`` and ``percent``, or why it is ``outside``
    #: the multiverse (:mod:`regime_core.experiments.robustness_grid`)
    multiverse: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ours_only(self) -> bool:
        """True for a statement of ours, which the paper never makes (so it has no paper
        value)."""
        return self.origin == "ours"

    def runs(self) -> list[str]:
        """The runs whose records the claim, its diagnosis and its why read, its own first."""
        return list(
            dict.fromkeys(
                [self.run, *(str(d["run"]) for d in self.diagnosis), *why_runs(self.why, self.run)]
            )
        )

    def number(self, field: str) -> float:
        """The paper's number ``field`` (``ValueError`` naming the claim if it is not one)."""
        value = self.paper.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"claim {self.id!r}: the paper's {field!r} is {value!r}, not a number")
        return value

    def count(self, field: str) -> int:
        """The paper's whole number ``field`` (a count of cells, ...)."""
        value = self.number(field)
        if not isinstance(value, int):
            raise ValueError(f"claim {self.id!r}: the paper's {field!r} is {value!r}, not a count")
        return value

    def p_text(self) -> str:
        """The paper's significance statement: ``p < x``, ``p = x``, ``n.s.`` or ``""``."""
        if "p_below" in self.paper:
            return f"p < {self.paper['p_below']}"
        if "p" in self.paper:
            return f"p = {self.paper['p']}"
        return "n.s." if self.paper.get("significant") is False else ""


#: The claims of every claims file read, by its path and the sha256 of its bytes (a book
#: build reads the same file for every directive and role).
_LOADED: dict[tuple[Path, str], tuple[Claim, ...]] = {}


def load_claims(path: Path | str | None = None) -> list[Claim]:
    """Parse and validate ``paper_claims.yml`` (once per content); ``ValueError`` names the
    file, claim and field."""
    from regime_core.integrity import read_bytes

    file = Path(path) if path is not None else PAPER_CLAIMS_FILE
    try:
        data = read_bytes(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"{file} does not exist") from None
    key = (file, hashlib.sha256(data).hexdigest())
    if key not in _LOADED:
        _LOADED[key] = tuple(_parse_claims(file, data))
    return list(_LOADED[key])


def _parse_claims(file: Path, data: bytes) -> list[Claim]:
    from regime_core.strict_json import parse_yaml

    try:
        raw = parse_yaml(data.decode("utf-8"), str(file))
    except UnicodeDecodeError as err:
        raise ValueError(f"{file}: not UTF-8 text (byte {err.start})") from err
    # a copy cut short can still parse (a key path cut to a shorter one): the file's last line
    # break is the one sign of its end that YAML keeps
    if not data.endswith(b"\n"):
        raise ValueError(
            f"{file}: the file does not end with a line break, so it looks cut short (a "
            "truncated copy?); restore it, or end its last line"
        )
    roles = _parse_roles(file, raw.get("roles") if isinstance(raw, dict) else None)
    claims_raw = raw.get("claims") if isinstance(raw, dict) else None
    if not isinstance(claims_raw, list) or not claims_raw:
        raise ValueError(f"{file}: expected a mapping with a non-empty 'claims' list")
    claims: list[Claim] = []
    seen: set[str] = set()
    for index, body in enumerate(claims_raw):
        where = f"{file}: claims[{index}]"
        if not isinstance(body, dict):
            raise ValueError(f"{where}: expected a mapping")
        for field_name in ("id", "claim", "source", "rule", "paper", "ours"):
            if field_name not in body:
                raise ValueError(f"{where}: missing field {field_name!r}")
        claim_id = str(body["id"])
        where = f"{file}: claim {claim_id!r}"
        if claim_id in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(claim_id)
        rule = body["rule"]
        if rule not in CLAIM_RULES:
            raise ValueError(f"{where}: rule {rule!r} is not one of {CLAIM_RULES}")
        paper, ours = body["paper"], body["ours"]
        if not isinstance(paper, dict) or not isinstance(ours, dict):
            raise ValueError(f"{where}: 'paper' and 'ours' must be mappings")
        missing_paper = [f for f in _REQUIRED_PAPER[rule] if f not in paper]
        if missing_paper:
            raise ValueError(f"{where}: 'paper' lacks {missing_paper} (rule {rule!r})")
        if not isinstance(ours.get("run"), str):
            raise ValueError(f"{where}: 'ours.run' (the run id of reproduce.yml) is required")
        _check_ours(where, rule, ours)
        if rule == "estimate" and paper.get("significant") is False:
            raise ValueError(
                f"{where}: the paper reports no significant effect; judge it with the rule "
                "'no_loss' (non-inferiority), not 'estimate'"
            )
        if rule == "level" and (
            not isinstance(paper["levels"], dict) or set(paper["levels"]) != set(ours["parts"])
        ):
            raise ValueError(f"{where}: 'paper.levels' and 'ours.parts' must name the same parts")
        _check_paper(where, rule, paper)
        label = _check_label(where, body.get("label"))
        origin = body.get("origin", "paper")
        if origin not in ORIGINS:
            raise ValueError(
                f"{where}: 'origin' is {origin!r}, not one of {ORIGINS} (paper: a statement of "
                "the paper; ours: a statement of ours the paper never makes)"
            )
        data = body.get("data", [])
        if not isinstance(data, list) or not all(isinstance(r, str) for r in data):
            raise ValueError(f"{where}: 'data' must be a list of role names")
        unknown = [r for r in data if r not in roles]
        if unknown:
            raise ValueError(
                f"{where}: 'data' names the role(s) {unknown}, which 'roles:' does not declare "
                f"(declared: {', '.join(roles) or 'none'})"
            )
        comparison = body.get("comparison", "")
        if comparison and comparison not in COMPARISONS:
            raise ValueError(f"{where}: 'comparison' {comparison!r} is not one of {COMPARISONS}")
        multiverse = body.get("multiverse", {})
        if not isinstance(multiverse, dict) or not set(multiverse) <= set(MULTIVERSE_FIELDS):
            raise ValueError(f"{where}: 'multiverse' must map some of {MULTIVERSE_FIELDS}")
        diagnosis = _check_diagnosis(where, body.get("diagnosis", []))
        why = check_why(where, body.get("why", []))
        _check_paper_keys(where, paper, why)
        claims.append(
            Claim(
                id=claim_id,
                claim=str(body["claim"]),
                source=str(body["source"]),
                rule=rule,
                paper=paper,
                run=ours["run"],
                ours={k: v for k, v in ours.items() if k != "run"},
                computed_on=str(body.get("computed_on", "")),
                chapter=str(body.get("chapter", "")),
                label=label,
                diagnosis=diagnosis,
                origin=origin,
                why=why,
                data=tuple(data),
                comparison=comparison,
                multiverse=multiverse,
            )
        )
    return claims


def _parse_roles(file: Path, raw: Any) -> dict[str, Role]:
    """The ``roles:`` of a claims file (none is an empty mapping); ``ValueError`` naming the
    file, the role and the field."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{file}: 'roles' must be a mapping of role name to its fields")
    roles: dict[str, Role] = {}
    for name, body in raw.items():
        where = f"{file}: role {name!r}"
        if not isinstance(body, dict) or not isinstance(body.get("what"), str):
            raise ValueError(f"{where}: expected a mapping with 'what' (the role in words)")
        fields = body.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise ValueError(
                f"{where}: 'fields' must map each run id to the config field that fills the role"
            )
        paper = body.get("paper")
        if paper is not None and not isinstance(paper, str):
            raise ValueError(f"{where}: 'paper' must be a dataset name")
        roles[str(name)] = Role(
            str(name), body["what"], paper, {str(k): str(v) for k, v in fields.items()}
        )
    return roles


_LOADED_ROLES: dict[tuple[Path, str], dict[str, Role]] = {}


def load_roles(path: Path | str | None = None) -> dict[str, Role]:
    """The roles declared in a claims file (``roles:``), by name."""
    from regime_core.integrity import read_bytes
    from regime_core.strict_json import parse_yaml

    file = Path(path) if path is not None else PAPER_CLAIMS_FILE
    data = read_bytes(file)
    key = (file, hashlib.sha256(data).hexdigest())
    if key not in _LOADED_ROLES:
        raw = parse_yaml(data.decode("utf-8"), str(file))
        _LOADED_ROLES[key] = _parse_roles(file, raw.get("roles") if isinstance(raw, dict) else None)
    return dict(_LOADED_ROLES[key])


def _entries(
    where: str, field: str, what: str, entries: Any
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A claim's list field ``field`` (of ``what``), entry by entry with where each stands
    (``where: field[i]``); ``ValueError`` when it is no list or an entry no mapping. Lazy, so
    an entry's own checks run before the next entry is looked at."""
    if not isinstance(entries, list):
        raise ValueError(f"{where}: {field!r} must be a list of {what}")
    for i, entry in enumerate(entries):
        at = f"{where}: {field}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at}: expected a mapping")
        yield at, entry


def check_why(where: str, entries: Any) -> tuple[Mapping[str, Any], ...]:
    """A claim's ``why`` list (:mod:`regime_core.runner.explanation` fills it), each entry
    checked: its fields, its ``when``, the number formats its fields name (``ValueError`` naming
    the entry and the field)."""
    from regime_core.runner.wording import NUMBER_KINDS

    out = []
    for at, entry in _entries(where, "why", "sentence templates", entries):
        unknown = sorted(set(entry) - set(WHY_FIELDS))
        if unknown:
            raise ValueError(f"{at}: unknown field(s) {unknown}; known {list(WHY_FIELDS)}")
        if not isinstance(entry.get("text"), str) or not entry["text"].strip():
            raise ValueError(f"{at}: 'text' must be a non-empty sentence template")
        for name in ("run", "lead", "join", "none"):
            if name in entry and not isinstance(entry[name], str):
                raise ValueError(f"{at}: {name!r} must be a string")
        each = entry.get("each")
        if each is not None and (not isinstance(each, dict) or not each):
            raise ValueError(f"{at}: 'each' must map each label to what fills {{value}}")
        when = entry.get("when")
        if when is not None and (
            not isinstance(when, list)
            or len(when) != 3
            or when[1] not in WHEN_OPERATORS
            or not all(
                isinstance(k, str) and WHY_KEY.match(k.replace("{value}", "v"))
                for k in (when[0], when[2])
            )
        ):
            raise ValueError(
                f"{at}: 'when' must be [KEY, OP, KEY], OP one of {list(WHEN_OPERATORS)}, each "
                f"KEY a dotted record key (RUN:KEY for another run), got {when!r}"
            )
        for template in (entry["text"], entry.get("lead", ""), entry.get("none", "")):
            rest = WHY_FIELD.sub("", template.replace("{value}", "v")).replace("{label}", "")
            if "{" in rest or "}" in rest:
                raise ValueError(
                    f"{at}: {template!r} holds a brace that is no field; a field is "
                    "{numbers.KEY|KIND}, {RUN:numbers.KEY}, {config.FIELD}, {paper.KEY}, "
                    "{label} or {value}"
                )
            for match in WHY_FIELD.finditer(template):
                kind = match.group("kind")
                if kind is not None and kind not in NUMBER_KINDS:
                    raise ValueError(
                        f"{at}: the field {match.group(0)!r} has the format {kind!r}; known "
                        f"{', '.join(NUMBER_KINDS)}"
                    )
        out.append(entry)
    return tuple(out)


def why_runs(entries: Sequence[Mapping[str, Any]], default_run: str) -> list[str]:
    """Every run whose record a claim's ``why`` entries read: each entry's ``run`` (default
    ``default_run``) and every run a field or a ``when`` key names (``RUN:``)."""
    runs = []
    for entry in entries:
        runs.append(str(entry.get("run", default_run)))
        texts = [str(entry.get(f, "")) for f in ("text", "lead", "none")]
        runs.extend(m.group("run") for t in texts for m in WHY_FIELD.finditer(t) if m.group("run"))
        for key in (entry.get("when") or [])[::2]:
            found = WHY_KEY.match(str(key))
            if found and found.group("run"):
                runs.append(found.group("run"))
    return list(dict.fromkeys(runs))


def _check_diagnosis(where: str, entries: Any) -> tuple[Mapping[str, Any], ...]:
    """A claim's ``diagnosis`` list, each entry checked (``ValueError`` naming the entry)."""
    out = []
    for at, entry in _entries(where, "diagnosis", "settings", entries):
        for name in ("factor", "run"):
            if not isinstance(entry.get(name), str) or not entry[name].strip():
                raise ValueError(f"{at}: {name!r} must be a non-empty string")
        if "values" in entry:
            values, node = entry["values"], entry.get("node")
            if not isinstance(values, dict) or not values:
                raise ValueError(f"{at}: 'values' must map each label to what fills {{value}}")
            if "ours" in entry:  # the record keys of each setting, '{value}' filled in them
                if "node" in entry or not isinstance(entry["ours"], dict):
                    raise ValueError(
                        f"{at}: with 'values', name the settings' 'node' or their 'ours' keys "
                        "(a mapping), one of them"
                    )
            elif not isinstance(node, str) or "{value}" not in node:
                raise ValueError(f"{at}: with 'values', 'node' must hold '{{value}}'")
        else:
            if not isinstance(entry.get("label"), str):
                raise ValueError(f"{at}: a single setting needs a 'label'")
            if ("node" in entry) == ("ours" in entry):
                raise ValueError(f"{at}: name the setting's 'node' or its 'ours' keys, one of them")
        unknown = sorted(set(entry) - {"factor", "run", "node", "values", "label", "ours"})
        if unknown:
            raise ValueError(f"{at}: unknown field(s) {unknown}")
        out.append(entry)
    return tuple(out)


def claim_where(
    claims: Sequence[Claim] | None = None,
    *,
    run: str | None = None,
    comparison: str | None = None,
    data: Sequence[str] | None = None,
) -> Claim:
    """The one claim of ``claims`` (the repository's by default) judged on ``run``, with the
    ``comparison`` and the roles of ``data`` given (None: any); else ``KeyError`` naming them."""
    found = [
        c
        for c in (load_claims() if claims is None else claims)
        if run in (None, c.run)
        and comparison in (None, c.comparison)
        and (data is None or c.data == tuple(data))
    ]
    if len(found) != 1:
        asked = f"run {run!r}, comparison {comparison!r} and data {data!r}"
        raise KeyError(f"{PAPER_CLAIMS_FILE}: {len(found)} claims have {asked}; expected one")
    return found[0]


def read_yaml(file: Path, *, finite: bool = True) -> Any:
    """A YAML data file of the repository, read strictly
    (:func:`regime_core.strict_json.read_yaml_file`: no duplicate key, no alias, bounded nesting,
    with ``finite`` no NaN or infinity); ``FileNotFoundError`` or ``ValueError`` naming it."""
    from regime_core.strict_json import read_yaml_file

    try:
        return read_yaml_file(file, finite=finite)
    except FileNotFoundError:
        raise FileNotFoundError(f"{file} does not exist") from None
