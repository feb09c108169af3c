"""The claims' verdicts on the book's pages (regime_book.claims): a build judges each
claim once per content of the claim and of the records it reads, every page still depending on
the claims file and on each record it reads; a changed record or claim is judged anew."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import GAIN_CLAIM, UNION_CLAIM, write_claims, write_stamped_record

import regime_core.runner.verdicts as verdicts
from regime_book import claims as C
from regime_core.book.names import config_value
from regime_core.paper import load_claims
from regime_core.runner.records import load_record
from regime_core.runner.verdicts import judge_claims as judge_uncounted


def _numbers(diff: float) -> dict[str, Any]:
    comparison = {"diff": diff, "ci_lo": diff - 0.02, "ci_hi": diff + 0.02, "p_value": 0.001}
    return {"n": 400, "c": {**comparison, "n_a_better": 40, "n_b_better": 20}, "u": comparison}


class _Page:
    """What ``page_verdict`` reads of a page's environment: the app, and the dependencies it
    notes."""

    def __init__(self, app: Any) -> None:
        self.app, self.noted = app, set()

    def note_dependency(self, file: str) -> None:
        self.noted.add(file)


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """A book whose claims file beside it holds two claims of run ``r``, the records of ``r``
    and of the robustness run, and the ids of the claims ``judge_claims`` judged since."""
    write_claims(tmp_path / "paper_claims.yml", GAIN_CLAIM, UNION_CLAIM)
    write_stamped_record(tmp_path, "r", numbers=_numbers(0.05))
    summary = {"readings": 4, "holding": 1, "share": 0.25, "most_sensitive_knob": "pool"}
    write_stamped_record(tmp_path, "robustness", numbers={"claims": {"gain": summary}})
    judged: list[str] = []

    def counted(records: Any, claims: Any, *args: Any, **kwargs: Any) -> Any:
        judged.extend(c.id for c in claims)
        return judge_uncounted(records, claims, *args, **kwargs)

    monkeypatch.setattr(verdicts, "judge_claims", counted)
    config = SimpleNamespace(regime_work_dir=str(tmp_path))
    return SimpleNamespace(config=config, srcdir=str(tmp_path)), judged


def test_a_build_judges_each_claim_once_and_every_page_notes_what_it_reads(
    book: tuple[Any, list[str]],
) -> None:
    app, judged = book
    root = Path(app.srcdir)
    first, second = _Page(app), _Page(app)
    found = C.page_verdicts(first)
    assert C.page_verdicts(second) == found
    assert judged == ["gain", "beats_union"]  # once each, for both pages
    results = root / "results"
    records_read = {str(results / run / "record.json") for run in ("r", "robustness")}
    assert first.noted == second.noted == {str(root / "paper_claims.yml"), *records_read}
    # the verdicts are judge_claims's on the records, the robustness of each beside it
    claims = load_claims(root / "paper_claims.yml")
    records = {run: load_record(results / run) for run in ("r", "robustness")}
    expected = judge_uncounted(records, claims, records["robustness"], display=config_value)
    assert [v.to_dict() for v in found.values()] == [v.to_dict() for v in expected]
    assert found["gain"].robustness is not None and found["beats_union"].robustness is None
    # a page without the robustness takes the same judgement, without it
    (claim,) = (c for c in claims if c.id == "gain")
    alone = C.page_verdict(_Page(app), claim, None)
    assert alone.robustness is None and alone.judgement == found["gain"].judgement
    assert judged == ["gain", "beats_union"]


def test_a_changed_record_or_claim_is_judged_anew(book: tuple[Any, list[str]]) -> None:
    app, judged = book
    root = Path(app.srcdir)
    before = C.page_verdicts(_Page(app))
    write_stamped_record(root, "r", numbers=_numbers(-0.05))
    after = C.page_verdicts(_Page(app))
    assert judged == ["gain", "beats_union"] * 2
    assert after["beats_union"].verdict != before["beats_union"].verdict
    # the claims file changes one claim: that one is judged again, the other is not
    write_claims(root / "paper_claims.yml", {**GAIN_CLAIM, "paper": {"value": -0.05}}, UNION_CLAIM)
    again = C.page_verdicts(_Page(app))
    assert judged == ["gain", "beats_union"] * 2 + ["gain"]
    assert again["gain"].claim.paper["value"] == -0.05
    assert again["gain"].verdict != after["gain"].verdict


def test_the_verdict_count_keeps_the_abstract_and_ours_apart() -> None:
    from types import SimpleNamespace

    from regime_book.claims import verdict_counts
    from regime_core.runner.judge import Judgement

    def judged(verdict: str, source: str, origin: str = "paper") -> SimpleNamespace:
        claim = SimpleNamespace(source=source, ours_only=origin == "ours")
        return SimpleNamespace(claim=claim, judgement=Judgement(verdict, "", ours=origin == "ours"))

    rows = [
        judged("not reproduced", "abstract"),
        judged("reproduced", "abstract"),
        judged("reproduced", "abstract"),
        judged("not reproduced", "implied by the abstract"),
        judged("reproduced", "ours", origin="ours"),
    ]
    assert verdict_counts(rows) == (
        "The abstract's 3 statements: 2 reproduced, 1 not reproduced. "
        "Our 2 questions: 1 not reproduced, 1 holds."
    )
    assert verdict_counts(rows[:1]) == "The abstract's 1 statement: 1 not reproduced."
