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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.inputs import Choice, Items, Nested, check_value
from regime_core.inputs.claims_file import (
    CLAIM,
    CLAIMS_FILE,
    OPERATORS,
    OURS_BY_PART,
    OURS_BY_RULE,
    PAPER_BY_RULE,
    WHY_FIELD_RE,
)
from regime_core.inputs.claims_file import LABEL_MAX_CHARS as LABEL_MAX_CHARS

PAPER_CLAIMS_FILE = paths.source_root() / "paper_claims.yml"

#: The comparisons a ``why`` entry's ``when`` may make, by the operator the file writes.
WHEN_OPERATORS: dict[str, Callable[[float, float], bool]] = dict(
    zip(OPERATORS, (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne),
        strict=True)
)  # fmt: skip
#: A field of a ``why`` template (``claims_file.WHY_FIELD_RE``), once ``{value}`` is filled.
WHY_FIELD = re.compile(WHY_FIELD_RE)


def _check_paper(where: str, rule: str, paper: Mapping[str, Any]) -> None:
    """The paper's values its rule judges or shows (``PAPER_BY_RULE``), checked once here
    so that the judge trusts them, and what they must say together: an estimate other than
    zero, a range of one sign, a share of no more cells than there are. Checked, never
    coerced."""
    check_value(Nested(PAPER_BY_RULE[rule]), paper, where=where, field="paper")
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
    if rule == "share" and paper["passing"] > paper["total"]:
        raise ValueError(
            f"{where}: 'paper.passing' {paper['passing']} is more than the 'paper.total' "
            f"{paper['total']} cells"
        )


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
                stated_number = isinstance(node, int | float) and not isinstance(node, bool)
                if node is None or isinstance(node, Mapping) or (compared and not stated_number):
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
    """One claim of ``paper_claims.yml``: the paper's side (values) and ours (record keys).
    Its fields are the file's, and ``regime_core.inputs.claims_file.CLAIM`` says what each
    means (``run`` is ``ours.run``; ``why``, ``diagnosis`` and ``multiverse`` kept as written)."""

    id: str
    claim: str
    source: str
    rule: str
    paper: Mapping[str, Any]
    run: str
    ours: Mapping[str, Any]
    computed_on: str = ""
    chapter: str = ""
    label: str = ""
    diagnosis: tuple[Mapping[str, Any], ...] = ()
    origin: str = "paper"
    why: tuple[Mapping[str, Any], ...] = ()
    data: tuple[str, ...] = ()
    comparison: str = ""
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
        """The paper's number ``field`` (a number: the claims file's declaration says so)."""
        return self.paper[field]

    def count(self, field: str) -> int:
        """The paper's whole number ``field`` (a count of cells, ...)."""
        return self.paper[field]

    def p_text(self) -> str:
        """The paper's significance statement: ``p < x``, ``p = x``, ``n.s.`` or ``""``."""
        if "p_below" in self.paper:
            return f"p < {self.paper['p_below']}"
        if "p" in self.paper:
            return f"p = {self.paper['p']}"
        return "n.s." if self.paper.get("significant") is False else ""


#: The claims and roles of every claims file read, by its path and the sha256 of its bytes (a
#: book build reads the same file for every directive and role).
_LOADED: dict[tuple[Path, str], tuple[tuple[Claim, ...], dict[str, Role]]] = {}


def load_claims(path: Path | str | None = None) -> list[Claim]:
    """Parse and validate ``paper_claims.yml`` (once per content); ``ValueError`` names the
    file, claim and field."""
    return list(_read_claims_file(path)[0])


def load_roles(path: Path | str | None = None) -> dict[str, Role]:
    """The roles declared in a claims file (``roles:``), by name."""
    return dict(_read_claims_file(path)[1])


def _read_claims_file(path: Path | str | None) -> tuple[tuple[Claim, ...], dict[str, Role]]:
    from regime_core.integrity import read_bytes
    from regime_core.strict_json import parse_yaml

    file = Path(path) if path is not None else PAPER_CLAIMS_FILE
    data = read_bytes(file)  # a missing file: FileNotFoundError naming it
    key = (file, hashlib.sha256(data).hexdigest())
    if key in _LOADED:
        return _LOADED[key]
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
    top = CLAIMS_FILE.read(raw, where=str(file))
    roles = _roles(top["roles"])
    claims: list[Claim] = []
    for index, body in enumerate(top["claims"]):
        named = isinstance(body, Mapping) and isinstance(body.get("id"), str)
        where = f"{file}: claim {body['id']!r}" if named else f"{file}: claims[{index}]"
        claims.append(_claim(where, CLAIM.read(body, where=where), body, roles))
        if claims[-1].id in (c.id for c in claims[:-1]):
            raise ValueError(f"{where}: duplicate id")
    _LOADED[key] = (tuple(claims), roles)
    return _LOADED[key]


def _claim(
    where: str, read: Mapping[str, Any], body: Mapping[str, Any], roles: Mapping[str, Role]
) -> Claim:
    """One claim as ``CLAIM`` read it, with the rules that depend on its ``rule`` and on the
    rest of the file. The ``why``, ``diagnosis`` and ``multiverse`` entries are kept as written
    (their absent fields absent, not filled with defaults: their readers ask for them)."""
    rule, paper, ours = read["rule"], read["paper"], read["ours"]
    _check_paper(where, rule, paper)
    by_part = rule == "level" or ("parts" in ours and rule in OURS_BY_PART)
    check_value(Nested((OURS_BY_PART if by_part else OURS_BY_RULE)[rule]), ours, where=where,
                field="ours")  # fmt: skip
    if rule == "estimate" and paper.get("significant") is False:
        raise ValueError(
            f"{where}: the paper reports no significant effect; judge it with the rule "
            "'no_loss' (non-inferiority), not 'estimate'"
        )
    if rule == "level" and set(paper["levels"]) != set(ours["parts"]):
        raise ValueError(f"{where}: 'paper.levels' and 'ours.parts' must name the same parts")
    check_value(Items(Choice(tuple(roles))), read["data"], where=where, field="data")  # 'roles:'
    diagnosis = _check_diagnosis(where, body.get("diagnosis", []))
    why = tuple(body.get("why", ()))  # as written: CLAIM read every entry by WHY
    _check_paper_keys(where, paper, why)
    return Claim(
        id=read["id"],
        claim=read["claim"],
        source=read["source"],
        rule=rule,
        paper=paper,
        run=ours["run"],
        ours={k: v for k, v in ours.items() if k != "run"},
        computed_on=read["computed_on"],
        chapter=read["chapter"],
        label=read["label"].strip(),
        diagnosis=diagnosis,
        origin=read["origin"],
        why=why,
        data=read["data"],
        comparison=read["comparison"],
        multiverse=body.get("multiverse", {}),
    )


def _roles(read: Mapping[str, Mapping[str, Any]]) -> dict[str, Role]:
    """The ``roles:`` of a claims file as :data:`ROLE` read them, by name."""
    return {
        name: Role(name, body["what"], body["paper"], dict(body["fields"]))
        for name, body in read.items()
    }


def why_runs(entries: Sequence[Mapping[str, Any]], default_run: str) -> list[str]:
    """Every run whose record a claim's ``why`` entries read: each entry's ``run`` (default
    ``default_run``) and every run a field or a ``when`` key names (``RUN:``)."""
    runs = []
    for entry in entries:
        runs.append(str(entry.get("run", default_run)))
        texts = [str(entry.get(f, "")) for f in ("text", "lead", "none")]
        runs.extend(m.group("run") for t in texts for m in WHY_FIELD.finditer(t) if m.group("run"))
        runs.extend(key.rpartition(":")[0] for key in (entry.get("when") or [])[::2] if ":" in key)
    return list(dict.fromkeys(runs))


def _check_diagnosis(where: str, entries: Any) -> tuple[Mapping[str, Any], ...]:
    """A claim's ``diagnosis`` list as written (``CLAIM`` has read each entry by ``DIAGNOSIS``):
    what its fields must say together (``ValueError`` naming the entry)."""
    for i, entry in enumerate(entries):
        at = f"{where}: diagnosis[{i}]"
        if "values" not in entry and "label" not in entry:
            raise ValueError(f"{at}: a single setting needs a 'label'")
        if ("node" in entry) == ("ours" in entry):
            raise ValueError(f"{at}: name the setting's 'node' or its 'ours' keys, one of them")
        if "values" in entry and "node" in entry and "{value}" not in entry["node"]:
            raise ValueError(f"{at}: with 'values', 'node' must hold '{{value}}'")
    return tuple(entries)


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
