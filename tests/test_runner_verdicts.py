"""Verdicts from records: the sentences that state a direction or a significance, the claims
judged from records, and ``regime verdicts``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import GAIN_CLAIM, UNION_CLAIM, refused, write_claims, write_stamped_record

from regime_core import cli, paths
from regime_core.paper import load_claims
from regime_core.runner.claim_record import claim_values, judge_values
from regime_core.runner.records import write_record
from regime_core.runner.verdicts import (
    Robustness,
    comparison_phrase,
    judge_claims,
    robustness_phrase,
    significance_word,
    variant_report,
    verdicts_report,
)


@pytest.mark.parametrize(
    ("diff", "lo", "hi", "p", "word"),
    [
        (0.05, 0.01, 0.09, 0.01, "significantly above zero"),
        (-0.452, -0.52, -0.38, 1e-9, "significantly below zero"),  # significant either way
        (0.05, 0.0, 0.09, 0.01, "not significantly different from zero"),  # CI touches zero
        (0.05, 0.01, 0.09, 0.05, "not significantly different from zero"),  # p at the level
        (0.05, 0.01, 0.09, 0.0499, "significantly above zero"),
        (0.0, 0.0, 0.0, 1.0, "not significantly different from zero"),
    ],
)
def test_significance_word_follows_the_numbers(
    diff: float, lo: float, hi: float, p: float, word: str
) -> None:
    assert significance_word(diff, lo, hi, p) == word


def test_comparison_phrase_prefers_the_adjusted_p() -> None:
    node = {"diff": -0.045, "ci_lo": -0.077, "ci_hi": -0.013, "p": 0.004, "p_holm": 0.42}
    text = comparison_phrase(node)
    assert "p = 0.420 Holm" in text and text.endswith("not significantly different from zero")
    assert comparison_phrase(node, p_key="p").endswith("significantly below zero")
    with refused(KeyError, names=("p-value",)):
        comparison_phrase({"diff": 0.1, "ci_lo": 0.0, "ci_hi": 0.2})


def test_robustness_phrase() -> None:
    assert robustness_phrase(None) == "its robustness was not computed in this run"
    text = robustness_phrase(Robustness(24, 3, 0.125, "tie_rule"))
    assert text == (
        "reproduced under 3 of 24 readings (12.5%); the knob that changes its verdict most is "
        "tie rule"
    )
    assert robustness_phrase(Robustness(0, 0, 0.0, "none")) == "no reading of it could be judged"
    assert robustness_phrase(Robustness(4, 4, 1.0, "none")).endswith("no knob changes its verdict")


@pytest.fixture
def work(tmp_path: Path) -> tuple[Path, Path]:
    why = "Ours is {numbers.c.diff|pp} on {numbers.n|int} questions, the paper's {paper.value|pp}"
    gain = {**GAIN_CLAIM, "why": [{"text": why}]}
    claims = write_claims(tmp_path / "claims.yml", gain, UNION_CLAIM)
    numbers = {
        "n": 400,
        "c": {
            "diff": 0.02,
            "ci_lo": 0.001,
            "ci_hi": 0.04,
            "p_value": 0.03,
            "n_a_better": 30,
            "n_b_better": 22,
        },
        "u": {"diff": 0.004, "ci_lo": 0.0, "ci_hi": 0.01, "p_value": 0.25},
    }
    work = tmp_path / "work"
    write_stamped_record(work, "r", config={"x": 1}, numbers=numbers)
    return work, claims


def test_a_report_judges_every_claim_from_the_records(work: tuple[Path, Path]) -> None:
    report = verdicts_report(*work)
    by_id = {c["id"]: c for c in report["claims"]}
    gain, union = by_id["gain"], by_id["beats_union"]
    # 5 pp beyond [0.1, 4] pp, our CI above zero: smaller than reported, with its power
    assert gain["verdict"] == "smaller than reported"
    assert gain["power"]["discordance"] == pytest.approx(52 / 400)
    assert gain["power"]["decided"]  # its interval excludes zero: no questions-needed sentence
    # the ledger-wide Holm correction: a field per claim, None outside the family (no counts)
    assert "ledger" in gain and "ledger_holm" in gain and report["ledger"].endswith("ledger_holm")
    assert gain["ours"] == {"estimate": 0.02, "ci_lo": 0.001, "ci_hi": 0.04, "p": 0.03, "n": 400}
    assert gain["paper"]["value"] == 0.05 and gain["paper"]["text"].startswith("+5.0 pp")
    # a CI touching zero and reaching the smallest effect of interest: the data cannot tell
    assert union["verdict"] == "inconclusive (too few questions)" and union["power"] is None
    assert gain["robustness"] is None and report["robustness_run"] is None


def test_a_report_carries_the_robustness_record(work: tuple[Path, Path]) -> None:
    root, claims = work
    summary = {"readings": 4, "holding": 1, "share": 0.25, "most_sensitive_knob": "pool"}
    write_stamped_record(
        root,
        "robustness",
        config={"x": 1},
        numbers={"claims": {"gain": {**summary, "primary_verdict": "direction only"}}},
    )
    by_id = {c["id"]: c for c in verdicts_report(root, claims)["claims"]}
    assert by_id["gain"]["robustness"] == summary
    assert by_id["beats_union"]["robustness"] is None
    # a summary without one of its fields is refused, naming the record, the claim and the field
    numbers = {"claims": {"gain": {"readings": 4, "holding": 1, "share": 0.25}}}
    write_stamped_record(root, "robustness", config={"x": 1}, numbers=numbers)
    with refused(ValueError, names=("robustness", "claims.gain", "'most_sensitive_knob'")):
        verdicts_report(root, claims)


def test_regime_verdicts_json_and_errors(work: tuple[Path, Path], capsys: Any) -> None:
    root, claims = work
    assert cli.main(["verdicts", "--work", str(root), "--claims", str(claims), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in out["claims"]] == ["gain", "beats_union"]
    assert set(out["claims"][0]["ours"]) == {"estimate", "ci_lo", "ci_hi", "p", "n"}
    assert {c["origin"] for c in out["claims"]} == {"paper"}  # none of ours in this file
    # the claim's why, filled from the record, as the book's card shows it (issue 31)
    why = "Ours is +2.0 pp on 400 questions, the paper's +5.0 pp."
    assert out["claims"][0]["why"]["sentence"] == why
    assert out["claims"][1]["why"] is None  # no diagnosis, no why
    assert cli.main(["verdicts", "--work", str(root), "--claims", str(claims)]) == 0
    text = capsys.readouterr().out
    assert "gain: smaller than reported" in text
    assert f"  why:   {why}" in text
    assert cli.main(["verdicts", "--work", str(root / "missing"), "--claims", str(claims)]) == 2
    err = capsys.readouterr().err
    assert "no record for run 'r'" in err and "no registered run has that name" in err
    # a registered run's missing record: the advice is the command that produces it
    registered = claims.with_name("registered.yml")
    registered.write_text(claims.read_text().replace("run: r\n", "run: t3_brel_knockout\n"))
    assert "run: t3_brel_knockout" in registered.read_text()
    assert cli.main(["verdicts", "--work", str(root / "missing"), "--claims", str(registered)]) == 2
    err = capsys.readouterr().err
    assert "no record for run 't3_brel_knockout'" in err and "`regime reproduce --work" in err


def test_a_record_edited_and_resealed_is_refused_naming_record_and_stamp(
    work: tuple[Path, Path], capsys: Any
) -> None:
    """Issue 22: a record rewritten with valid seals (here: T3's verdict flipped by a better
    estimate) must not change a verdict; neither may one without a stamp."""
    root, claims = work
    record = root / "results" / "r" / "record.json"
    stamp = root / "runs" / "r" / "stamp.json"
    numbers = json.loads(record.read_text())["numbers"]
    numbers["c"]["diff"] = 0.05  # now the paper's value exactly
    write_record(root / "results" / "r", name="r", config={"x": 1}, numbers=numbers)
    assert cli.main(["verdicts", "--work", str(root), "--claims", str(claims)]) == 2
    err = capsys.readouterr().err
    assert f"{record} does not match its run's stamp {stamp}" in err
    assert "regime reproduce --only r --force" in err
    stamp.unlink()
    with refused(ValueError, names=(str(record), str(stamp))):
        verdicts_report(root, claims)


def test_a_record_whose_inputs_are_not_its_stamps_is_refused(work: tuple[Path, Path]) -> None:
    from regime_core.runner.stamps import write_stamp

    root, claims = work
    write_record(
        root / "results" / "r",
        name="r",
        config={"x": 1},
        numbers=json.loads((root / "results" / "r" / "record.json").read_text())["numbers"],
        inputs={"manifest": "f" * 64},  # the data it read
    )
    components = {"manifest": "0" * 64}  # the data the run was keyed on
    write_stamp(root, "r", {"key": "k", "components": components}, seconds=0.0)
    with refused(ValueError, names=("inputs.manifest",)):
        verdicts_report(root, claims)


@pytest.mark.realdata
@pytest.mark.slow
def test_regime_verdicts_on_the_quick_run(quick_run: Any, capsys: Any) -> None:
    assert cli.main(["verdicts", "--work", str(quick_run.work), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ids = [c["id"] for c in report["claims"]]
    from regime_core.runner.runs import RUNS

    assert set(ids) == {c.id for run in RUNS.values() for c in run.claims()}
    claims = {c.id: c for c in load_claims()}
    for entry in report["claims"]:
        # the same verdict as the paper-against-ours table's judge
        claim = claims[entry["id"]]
        values = claim_values(claim, quick_run.record(claim.run))
        assert entry["verdict"] == judge_values(claim, values).words
        # the multiverse re-judges results under readings of the paper: not the paper's setup
        # (untestable) nor a timing of this machine (bound), which no reading changes, nor the
        # claims it declares outside it (each with its reason)
        if claim.rule in ("untestable", "bound") or "outside" in claim.multiverse:
            assert entry["robustness"] is None, entry["id"]
            continue
        assert entry["robustness"] is not None, entry["id"]
        assert set(entry["robustness"]) == {"readings", "holding", "share", "most_sensitive_knob"}
    judged = judge_claims({c.run: quick_run.record(c.run) for c in claims.values()})
    assert [j.claim.id for j in judged] == ids


VARIANT_NUMBERS = {
    "n": 400,
    "c": {
        "diff": 0.05,
        "ci_lo": 0.03,
        "ci_hi": 0.07,
        "p_value": 0.0001,
        "n_a_better": 40,
        "n_b_better": 20,
    },
    "u": {"diff": 0.03, "ci_lo": 0.01, "ci_hi": 0.05, "p_value": 0.002},
}


def test_a_variant_is_judged_beside_the_default(
    work: tuple[Path, Path], tmp_path: Path, capsys: Any
) -> None:
    root, claims = work
    variant = paths.variant_dir("r", "feedc0ffee12", root)
    write_record(variant, name="r", config={"x": 2}, numbers=VARIANT_NUMBERS)
    # the variant's verdicts are those of a work directory whose default record it were
    alone = tmp_path / "alone"
    write_stamped_record(alone, "r", config={"x": 2}, numbers=VARIANT_NUMBERS)
    expected = {c["id"]: c["verdict"] for c in verdicts_report(alone, claims)["claims"]}
    default = {c["id"]: c["verdict"] for c in verdicts_report(root, claims)["claims"]}
    assert expected != default  # the fixture must move a verdict, or the test shows nothing

    report = variant_report("r/feedc0ffee12", root, claims).to_dict()
    assert report["variant"]["run"] == "r" and report["variant"]["path"] == str(variant)
    assert report["variant"]["differs"] == {"x": {"default": 1, "variant": 2}}
    assert {c["id"]: c["default"]["verdict"] for c in report["claims"]} == default
    assert {c["id"]: c["variant"]["verdict"] for c in report["claims"]} == expected
    assert variant_report(variant, root, claims).to_dict() == report  # a folder path names it

    assert cli.main(["verdicts", "--work", str(root), "--claims", str(claims), "--variant",
                     "r/feedc0ffee12", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == report
    assert cli.main(["verdicts", "--work", str(root), "--claims", str(claims), "--variant",
                     "r/feedc0ffee12"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "differs from the default: x 1 -> 2" in text
    assert f"  variant: {expected['gain']}; " in text


def test_an_unknown_variant_lists_the_held_ones(work: tuple[Path, Path]) -> None:
    root, claims = work
    with refused(FileNotFoundError, names=("r/nope",)):
        variant_report("r/nope", root, claims)
    write_record(
        paths.variant_dir("r", "abc", root), name="r", config={"x": 2}, numbers=VARIANT_NUMBERS
    )
    with refused(FileNotFoundError, names=("r/nope", "r/abc")):
        variant_report("r/nope", root, claims)
    assert variant_report("r", root, claims).folder.name == "abc"  # the only one
    write_record(
        paths.variant_dir("r", "abd", root), name="r", config={"x": 3}, numbers=VARIANT_NUMBERS
    )
    with refused(FileNotFoundError, names=("2 variants", "r/abc, r/abd")):
        variant_report("r", root, claims)


def test_a_variant_of_a_run_without_claims_is_refused(work: tuple[Path, Path]) -> None:
    root, claims = work
    folder = paths.variant_dir("other", "abc", root)
    write_record(folder, name="other", config={"x": 2}, numbers={"n": 1})
    with refused(ValueError, names=("field 'name'", "'other'")):
        variant_report("other/abc", root, claims)
