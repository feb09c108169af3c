"""The paper's claims, read from ``paper_claims.yml``: every number of the paper, typed once.

``paper_claims.yml`` (at the top of the repository) holds each claim of the paper with its
source: the *paper's* side (its numbers) and the record keys of *ours*. This module reads and
validates it; nothing else types a number of the paper. The experiments print the paper's
numbers next to theirs from here (``PAPER_*`` in :mod:`regime_core.experiments.t1_auc_margin`,
:mod:`~regime_core.experiments.t3_brel_knockout` and
:mod:`~regime_core.experiments.zero_shot_transfer`), and :mod:`regime_core.runner.judge` judges
each claim on our records.

>>> knockout = paper_claim("t3_knockout")
>>> knockout.rule, knockout.number("low"), knockout.number("high"), knockout.p_text()
('range', 0.086, 0.141, 'p < 0.001')
>>> paper_claim("t1_r2").count("passing"), paper_claim("router_hotpotqa").p_text()
(6, 'n.s.')
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import paths

PAPER_CLAIMS_FILE = paths.REPO_ROOT / "paper_claims.yml"

#: The fields of the paper's side each kind of claim (``rule``) must state.
_REQUIRED_PAPER: dict[str, tuple[str, ...]] = {
    "estimate": ("value",),
    "range": ("low", "high"),
    "share": ("passing", "total"),
    "holds": ("statement",),
    "positive": ("statement",),
    "untestable": ("statement", "why"),
}
#: The record keys of our side each kind of claim must name.
_REQUIRED_OURS: dict[str, tuple[str, ...]] = {
    "estimate": ("estimate", "ci_lo", "ci_hi"),
    "range": ("estimate", "ci_lo", "ci_hi", "p"),
    "share": ("passing", "total"),
    "holds": ("holds",),
    "positive": ("estimate", "ci_lo", "ci_hi", "p"),
    "untestable": (),  # optional record keys, shown beside the reason
}
#: The kinds of claim; :data:`regime_core.runner.judge.VERDICT_RULES` gives each its verdict rule.
CLAIM_RULES: tuple[str, ...] = tuple(_REQUIRED_PAPER)


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

    def keys(self) -> list[str]:
        """Every record key this claim reads (in the run ``run``)."""
        out: list[str] = []
        for value in self.ours.values():
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, Mapping):
                out.extend(str(v) for v in value.values())
        return out

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


def load_claims(path: Path | str | None = None) -> list[Claim]:
    """Parse and validate ``paper_claims.yml``; ``ValueError`` names the file, claim and field."""
    file = Path(path) if path is not None else PAPER_CLAIMS_FILE
    raw = read_yaml(file)
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
        missing_ours = [f for f in _REQUIRED_OURS[rule] if f not in ours]
        if missing_ours:
            raise ValueError(f"{where}: 'ours' lacks the record keys {missing_ours}")
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
            )
        )
    return claims


@functools.cache
def _repository_claims() -> dict[str, Claim]:
    return {claim.id: claim for claim in load_claims()}


def paper_claim(claim_id: str) -> Claim:
    """The claim ``claim_id`` of the repository's ``paper_claims.yml`` (read once)."""
    claims = _repository_claims()
    if claim_id not in claims:
        raise KeyError(f"{PAPER_CLAIMS_FILE} has no claim {claim_id!r}; it has {sorted(claims)}")
    return claims[claim_id]


def read_yaml(file: Path, *, finite: bool = True) -> Any:
    """A YAML data file of the repository, read strictly
    (:func:`regime_core.integrity.read_yaml_file`: no duplicate key, no alias, bounded nesting,
    with ``finite`` no NaN or infinity); ``FileNotFoundError`` or ``ValueError`` naming it."""
    from regime_core.integrity import read_yaml_file

    try:
        return read_yaml_file(file, finite=finite)
    except FileNotFoundError:
        raise FileNotFoundError(f"{file} does not exist") from None
