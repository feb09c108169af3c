"""The paper's claims file: loading and validating it, and the typed numbers the experiments use."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import refused

from regime_core.inputs.claims_file import RULES
from regime_core.paper import LABEL_MAX_CHARS, Claim, load_claims


def test_repository_claims_are_valid_and_point_at_declared_runs() -> None:
    from regime_core.runner.declarations import load_declarations

    claims = load_claims()
    runs = set(load_declarations().runs)
    assert {c.run for c in claims} <= runs
    assert {c.rule for c in claims} <= set(RULES)
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids))
    labels = [c.label for c in claims]
    assert all(0 < len(label) <= LABEL_MAX_CHARS for label in labels)
    assert len(labels) == len(set(labels)), "two claims share a label"


def test_every_number_of_the_paper_is_read_from_the_claims_file() -> None:
    """The experiments' PAPER_* constants are the claims file's numbers, of the same types."""
    from regime_core.experiments import t1_auc_margin as t1
    from regime_core.experiments import t3_brel_knockout as t3
    from regime_core.experiments import zero_shot_transfer as transfer

    by_id = {c.id: c for c in load_claims()}
    t1_r2 = by_id["t1_r2"]
    paper_side = (t1_r2.paper["threshold"], t1_r2.paper["passing"], t1_r2.paper["total"])
    assert paper_side == (t1.PAPER_R2_THRESHOLD, t1.PAPER_CELLS_PASSING, t1.PAPER_CELLS_TOTAL)
    assert type(t1.PAPER_CELLS_PASSING) is int and type(t1.PAPER_CELLS_TOTAL) is int
    knockout = by_id["t3_knockout"].paper
    assert (knockout["low"], knockout["high"], knockout["p_below"]) == (0.086, 0.141, 0.001)
    assert (t3.PAPER_DROP_LOW, t3.PAPER_DROP_HIGH, t3.PAPER_P_BELOW) == (0.086, 0.141, 0.001)
    assert transfer.PAPER_REFERENCE == {
        "2wikimultihopqa": {"delta": 0.056, "p": "p < 0.001", "setting": "5-fold cross-fitted"},
        "musique": {"delta": 0.053, "p": "p = 0.002", "setting": "zero-shot"},
        "hotpotqa": {"delta": 0.011, "p": "n.s.", "setting": "zero-shot"},
    }
    assert transfer.PAPER_ORACLE_GAP == by_id["oracle_gap"].paper["value"] == 0.046


@pytest.mark.parametrize(
    ("paper", "text"),
    [
        ({"value": 0.056, "p_below": 0.001}, "p < 0.001"),
        ({"value": 0.053, "p": 0.002}, "p = 0.002"),
        ({"value": 0.011, "significant": False}, "n.s."),
        ({"value": 0.046, "approximate": True}, ""),
    ],
)
def test_p_text_states_the_paper_s_significance(paper: dict, text: str) -> None:
    assert Claim("c", "x", "s", "estimate", paper, "r", {}).p_text() == text


def _claims_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "claims.yml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ("claims: []\n", ("'claims'",)),
        (
            "claims:\n  - {id: a, label: a, claim: x, source: s, rule: guess, paper: {}, "
            "ours: {run: r}}\n",
            ("claim 'a'", "'rule'", "'guess'"),
        ),
        (
            "claims:\n  - {id: a, label: a, claim: x, source: s, rule: range, paper: {low: 1}, "
            "ours: {run: r}}\n",
            ("claim 'a'", "'paper.high'"),
        ),
        (
            "claims:\n  - {id: a, label: a, claim: x, source: s, rule: holds, "
            "paper: {statement: y}, ours: {holds: k}}\n",
            ("claim 'a'", "'ours.run'"),
        ),
        (
            "claims:\n  - {id: a, label: a, claim: x, source: s, rule: holds, "
            "paper: {statement: y}, ours: {run: r}}\n",
            ("claim 'a'", "'ours.holds'"),
        ),
        ("claims:\n  - {claim: x}\n", ("claims[0]", "'id'")),
    ],
)
def test_bad_claims_files_name_the_problem(tmp_path: Path, body: str, names: tuple[str]) -> None:
    with refused(ValueError, names=("claims.yml", *names)):
        load_claims(_claims_file(tmp_path, body))


def _one_claim(rule: str, paper: str, ours: str = "", extra: str = "") -> str:
    return (
        f"claims:\n  - {{id: a, label: a, claim: x, source: s, rule: {rule}, paper: {paper}, "
        f"ours: {{run: r{ours}}}{extra}}}\n"
    )


COMPARISON_OURS = ", estimate: e, ci_lo: l, ci_hi: h"


@pytest.mark.parametrize(
    ("body", "names"),
    [
        (_one_claim("estimate", "{value: yes}", COMPARISON_OURS), ("'paper.value'", "True")),
        (_one_claim("estimate", "{value: '0.05'}", COMPARISON_OURS), ("'paper.value'", "'0.05'")),
        (_one_claim("estimate", "{value: 0}", COMPARISON_OURS), ("'paper.value'", "'no_loss'")),
        (_one_claim("range", "{low: 0.1, high: 0.05}", COMPARISON_OURS), ("'paper.low'",)),
        (_one_claim("range", "{low: -0.1, high: 0.05}", COMPARISON_OURS), ("'paper.high'",)),
        (_one_claim("range", "{low: 0, high: 0}", COMPARISON_OURS), ("'paper.low'",)),
        (
            _one_claim("share", "{passing: 9, total: 8}", ", passing: p, total: t"),
            ("'paper.passing'",),
        ),
        (
            _one_claim("share", "{passing: 6.0, total: 8}", ", passing: p, total: t"),
            ("'paper.passing'",),
        ),
        (
            _one_claim("share", "{passing: 0, total: 0}", ", passing: p, total: t"),
            ("'paper.total'",),
        ),
        (_one_claim("bound", "{bound: 0}", ", estimate: e"), ("'paper.bound'",)),
        (
            _one_claim("level", "{levels: {a: high}}", ", parts: {a: {estimate: e, n: n}}"),
            ("'paper.levels.a'", "'high'"),
        ),
        (
            _one_claim(
                "holds", "{statement: y}", ", holds: k", ", why: [{text: '{paper.value|pp}'}]"
            ),
            ("why[0]", "'value'"),
        ),
        (
            _one_claim(
                "level",
                "{levels: {a: 0.5}, note: n}",
                ", parts: {a: {estimate: e, n: n}}",
                ", why: [{when: [x, '<', paper.note], text: t}]",
            ),
            ("why[0]", "'note'"),
        ),
        (
            _one_claim(
                "level",
                "{levels: {a: 0.5}}",
                ", parts: {a: {estimate: e, n: n}}",
                ", why: [{each: {A: a, B: b}, text: '{paper.levels.{value}|frac}'}]",
            ),
            ("why[0]", "'levels.b'"),
        ),
    ],
)
def test_the_papers_values_are_checked_when_the_file_is_read(
    tmp_path: Path, body: str, names: tuple[str]
) -> None:
    with refused(ValueError, names=("claims.yml", "claim 'a'", *names)):
        load_claims(_claims_file(tmp_path, body))


def test_a_claims_file_is_parsed_once_per_content(tmp_path: Path) -> None:
    body = _one_claim("holds", "{statement: y}", ", holds: k")
    file = _claims_file(tmp_path, body)
    first, second = load_claims(file), load_claims(file)
    assert first == second and first is not second and first[0] is second[0]
    file.write_text(body.replace("statement: y", "statement: z"), encoding="utf-8")
    assert load_claims(file)[0].paper == {"statement": "z"}  # a changed file is read again


LABELLED = (
    "claims:\n  - {{id: a, claim: x, source: s, rule: holds, paper: {{statement: y}}, "
    "ours: {{run: r, holds: k}}{label}}}\n"
)


@pytest.mark.parametrize(
    "label",
    ["", ", label: ''", ", label: '   '", ", label: 3",
     ", label: '" + "x" * (LABEL_MAX_CHARS + 1) + "'", ', label: "two\\nlines"'],
)  # fmt: skip
def test_a_claim_needs_a_short_label(tmp_path: Path, label: str) -> None:
    with refused(ValueError, names=("claims.yml", "claim 'a'", "'label'")):
        load_claims(_claims_file(tmp_path, LABELLED.format(label=label)))


def test_a_label_at_the_limit_is_kept_stripped(tmp_path: Path) -> None:
    label = "x" * LABEL_MAX_CHARS
    (claim,) = load_claims(_claims_file(tmp_path, LABELLED.format(label=f", label: ' {label} '")))
    assert claim.label == label


def test_a_statement_of_ours_says_so_wherever_the_papers_value_is_shown(tmp_path: Path) -> None:
    from regime_core.runner.claim_record import OURS_ONLY_TEXT, paper_text

    body = LABELLED.format(label=", label: L")
    (paper,) = load_claims(_claims_file(tmp_path, body))
    assert paper.origin == "paper" and not paper.ours_only and paper_text(paper) == "y"
    (ours,) = load_claims(_claims_file(tmp_path, LABELLED.format(label=", label: L, origin: ours")))
    assert ours.ours_only and paper_text(ours) == OURS_ONLY_TEXT
    with refused(ValueError, names=("claim 'a'", "'origin'", "'both'")):
        load_claims(_claims_file(tmp_path, LABELLED.format(label=", label: L, origin: both")))
    # the repository's one statement of ours
    origins = {c.id: c.origin for c in load_claims()}
    assert [c for c, o in origins.items() if o == "ours"] == ["calibrated_alpha"]


def test_code_finds_a_claim_by_what_the_file_says_of_it(tmp_path: Path) -> None:
    """claim_where: exactly one claim with the fields asked for, or a KeyError naming them."""
    from regime_core.paper import claim_where

    body = (
        "claims:\n"
        "  - {id: a, label: A, claim: x, source: s, rule: holds, comparison: routed_vs_q, "
        "paper: {statement: y}, ours: {run: r, holds: k}}\n"
        "  - {id: b, label: B, claim: x, source: s, rule: holds, comparison: routed_vs_union, "
        "paper: {statement: y}, ours: {run: r, holds: k}}\n"
    )
    claims = load_claims(_claims_file(tmp_path, body))
    assert claim_where(claims, comparison="routed_vs_union").id == "b"
    assert claim_where(claims, run="r", comparison="routed_vs_q").id == "a"
    with refused(KeyError, names=("2 claims", "run 'r'")):
        claim_where(claims, run="r")
    with refused(KeyError, names=("0 claims", "comparison 'oracle_vs_routed'")):
        claim_where(claims, comparison="oracle_vs_routed")
    with refused(ValueError, names=("claim 'a'", "'comparison'", "'routed'")):
        load_claims(_claims_file(tmp_path, body.replace("routed_vs_q", "routed")))


def test_doctests_pass() -> None:
    import doctest

    from regime_core import paper

    assert doctest.testmod(paper).failed == 0


def test_a_claims_file_cut_short_is_refused_even_where_it_still_parses(tmp_path: Path) -> None:
    from regime_core.paper import PAPER_CLAIMS_FILE, load_claims

    text = PAPER_CLAIMS_FILE.read_text(encoding="utf-8")
    cut = text.rstrip("\n")  # parses as the whole file does: only the end is missing
    path = tmp_path / "claims.yml"
    path.write_text(cut, encoding="utf-8")
    with refused(ValueError, names=("claims.yml", "line break")):
        load_claims(path)
    path.write_text(cut + "\n", encoding="utf-8")  # the same text, ended: read as written
    assert load_claims(path)


LISTED = (
    "claims:\n  - {{id: a, claim: x, source: s, rule: holds, paper: {{statement: y}}, "
    "ours: {{run: r, holds: k}}, label: l, {field}: {value}}}\n"
)


@pytest.mark.parametrize(
    ("field", "value", "names"),
    [
        ("why", "{text: x}", ("'why'",)),
        ("why", "[{text: x}, y]", ("why[1]",)),
        ("why", "[{lead: x}, y]", ("'why[0].text'",)),  # entry by entry
        ("diagnosis", "{factor: f}", ("'diagnosis'",)),
        ("diagnosis", "[x]", ("diagnosis[0]",)),
    ],
)
def test_a_claims_list_fields_name_the_field_and_the_entry(
    tmp_path: Path, field: str, value: str, names: tuple[str]
) -> None:
    with refused(ValueError, names=("claims.yml", "claim 'a'", *names)):
        load_claims(_claims_file(tmp_path, LISTED.format(field=field, value=value)))
