"""The chapters' findings (regime_book.findings): the wording follows the values on
constructed records (a gain or a loss, inside or outside the paper's range, a tie), a missing
record or key is an error that names it, every chapter with the ``regime-findings`` directive has
findings and every finding a chapter; and on the quick profile every sentence computed from the
records stands, word for word, on its rendered page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import refused

import regime_book.findings as F
from regime_book.findings import beyond as B
from regime_book.findings import claims as C
from regime_book.findings import landing as L
from regime_book.tables import code_spans, plain_text
from regime_core import paths
from regime_core.book import words as W
from regime_core.paper import load_claims
from regime_core.runner.records import Record


def _records(**runs: dict[str, Any]) -> W.Records:
    return W.Records({run: Record({"numbers": numbers}) for run, numbers in runs.items()})


def _cmp(diff: float, lo: float, hi: float, **more: Any) -> dict[str, Any]:
    return {"diff": diff, "ci_lo": lo, "ci_hi": hi, **more}


# --- the formatting helpers ---------------------------------------------------------------------


def test_an_interval_names_its_kind_and_carries_the_unit_once() -> None:
    assert W.interval(_cmp(0.066, 0.045, 0.091)) == "+6.6 pp (95% CI +4.5 to +9.1 pp)"
    # the one implementation of this format: the book's cells of ours say it the same way
    assert W.estimate_interval(0.066, 0.045, 0.091) == "+6.6 pp (95% CI +4.5 to +9.1 pp)"
    adjusted = W.holm_interval(_cmp(-0.02, -0.055, 0.0), 1 - 0.05 / 9)
    assert adjusted == "-2.0 pp (99.44% Holm-level interval -5.5 to 0.0 pp)"
    beside = _cmp(-0.02, -0.055, 0.0, ci_lo_unadjusted=-0.04, ci_hi_unadjusted=-0.001)
    assert W.holm_interval(beside, 0.975) == (
        "-2.0 pp (97.50% Holm-level interval -5.5 to 0.0 pp; 95% CI -4.0 to -0.1 pp)"
    )


def test_holm_levels_are_read_from_the_family_the_record_keeps() -> None:
    family = {"a": {"x": {"p": 0.001, "p_holm": 0.003}}, "b": {"p": 0.04, "p_holm": 0.08},
              "c": {"p": 0.02, "p_holm": 0.04}}  # fmt: skip
    levels = W.holm_levels(family)
    # Holm rejects all three: the largest p is tested at 5% itself
    assert levels == pytest.approx({"a.x": 1 - 0.05 / 3, "c": 1 - 0.05 / 2, "b": 0.95})


def test_direction_follows_the_interval_not_the_estimate() -> None:
    assert W.direction(_cmp(0.03, 0.01, 0.05)) == "a significant gain"
    assert W.direction(_cmp(-0.03, -0.05, -0.01)) == "a significant loss"
    assert W.direction(_cmp(0.03, -0.01, 0.05)) == "no significant change"
    # an interval touching zero does not exclude it
    assert W.direction(_cmp(0.03, 0.0, 0.05)) == "no significant change"
    assert not W.significant(_cmp(0.0, 0.0, 0.0))


def test_row_comparison_reads_the_comparisons_node() -> None:
    node = _cmp(0.01, -0.01, 0.03)
    assert W.row_comparison({"comparisons": {"routed_vs_union": node}}, "routed_vs_union") is node
    assert W.row_comparison({"comparisons": {"routed_vs_union": node}}, "routed_vs_q") is None
    assert W.row_comparison({"degenerate": True}, "routed_vs_q") is None
    assert W.alpha_label("0p25") == "0.25" and W.alpha_label("m0p50") == "-0.50"


def test_backticks_become_code_and_the_reader_sees_them_dropped() -> None:
    text = "`hop2_overlap` is constant"
    parts = code_spans(text)
    assert [type(p).__name__ for p in parts] == ["literal", "Text"]
    assert plain_text(text) == "hop2_overlap is constant"


# --- the wording follows the values -------------------------------------------------------------


def _t3(drop_minilm: tuple[float, float, float], drop_tfidf: tuple[float, float, float]) -> Any:
    def cell(d: tuple[float, float, float]) -> dict[str, Any]:
        return {"drop": d[0], "ci_lo": d[1], "ci_hi": d[2], "n": 120}

    return _records(
        t3_brel_knockout={
            "paper": {"drop_low": 0.086, "drop_high": 0.141},
            "comparisons": {
                "union_vs_knockout": {"minilm": {"all": cell(drop_minilm)},
                                      "tfidf": {"all": cell(drop_tfidf)}}
            },
        }
    )  # fmt: skip


def test_the_knockout_finding_places_each_drop_against_the_papers_range() -> None:
    text = C._t3_drop(_t3((0.10, 0.07, 0.13), (0.30, 0.25, 0.35)))
    assert text.startswith("On 120 B-dominant questions, knocking B_rel out")
    assert "with MiniLM, inside the paper's range" in text
    assert "with TF-IDF, above the paper's range" in text
    assert "though" not in text
    text = C._t3_drop(_t3((0.05, 0.02, 0.09), (0.17, 0.13, 0.20)))
    assert "with MiniLM, below the paper's range though its interval reaches into it" in text
    assert "with TF-IDF, above the paper's range though its interval reaches into it" in text
    assert "(the paper: +8.6 pp to +14.1 pp)" in text


def test_the_constant_feature_finding_counts_what_the_router_routes_on() -> None:
    def router(**coefficients: float) -> Any:
        return _records(router_train={"train": {"coefficients": coefficients}})

    one = C._router_constant(router(a=0.4, b=0.0, c=-1.2))
    assert one.startswith("`b` is constant") and "its coefficient is 0" in one
    assert "routes on 2 of its 3 features" in one
    two = C._router_constant(router(a=0.4, b=0.0, c=0.0))
    assert two.startswith("`b`, `c` are constant") and "their coefficient" in two
    assert C._router_constant(router(a=0.4, b=-0.1)) == (
        "Each of its 2 features has a non-zero coefficient."
    )


def test_the_musique_finding_says_tie_only_when_the_three_policies_tie() -> None:
    def transfer(q: float, union: float, routed: float) -> Any:
        node = {
            "hit@5_q": q, "hit@5_union": union, "hit@5_routed": routed, "share_union": 0.9,
            "union_vs_q": _cmp(union - q, -0.02, 0.02, n_a_better=11, n_b_better=11),
            "oracle_vs_q": _cmp(0.08, 0.05, 0.11),
        }  # fmt: skip
        return _records(zero_shot_transfer={"transfer": {"musique": node}})

    tie = C._musique_tie(transfer(0.6, 0.6, 0.6))
    assert "all reach 60.0%" in tie and "wins 11 questions and loses 11, which cancel" in tie
    apart = C._musique_tie(transfer(0.6, 0.62, 0.61))
    assert "cancel" not in apart and "union against q wins 11 questions" in apart
    assert "an oracle choosing per question would add +8.0 pp" in apart


def test_the_t1_finding_counts_the_questions_left_out_and_says_what_it_counts() -> None:
    def t1(dropped: int, encoders: list[str]) -> Any:
        summary = {"queries_without_negative": dropped, "queries": 300}
        record = Record({"config": {"encoders": encoders}, "numbers": {"summary": summary}})
        return W.Records({"t1_auc_margin": record})

    assert (
        C._t1_dropped(t1(0, ["minilm"]))
        == "Every one of the 300 questions has at least one negative candidate."
    )
    assert C._t1_dropped(t1(7, ["minilm"])).startswith(
        "7 of the 300 questions have no negative candidate"
    )
    # T1 fits each question once per encoder: two encoders count question × encoder pairs
    assert C._t1_dropped(t1(7, ["minilm", "tfidf"])).startswith(
        "7 of the 300 question × encoder pairs (each question once per encoder, 2 encoders) "
        "have no negative candidate"
    )


def _sweep_records(sweep: dict[str, Any], encoder: str = "minilm") -> W.Records:
    """An ablations record whose main encoder's α sweep of MuSiQue is ``sweep``."""
    numbers = {"alpha_sweep": {encoder: {"musique": sweep}, "tfidf": {"musique": {}}}}
    return W.Records(
        {"ablations": Record({"config": {"encoders": [encoder, "tfidf"]}, "numbers": numbers})}
    )


def test_the_musique_alpha_finding_names_where_the_router_starts_to_gain() -> None:
    def row(diff: float, lo: float, hi: float) -> dict[str, Any]:
        return {"comparisons": {"routed_vs_q": _cmp(diff, lo, hi)}}

    sweep = {
        "0p10": row(0.0, -0.02, 0.02),
        "0p25": row(0.01, -0.01, 0.03),
        "0p50": row(0.05, 0.02, 0.08),
        "1p00": {"degenerate": True},
    }
    text = C._musique_alpha(_sweep_records(sweep))
    assert "from α = 0.50 on, the bridge weighs enough for the router to gain" in text
    assert "α = 1.00" not in text  # a degenerate row is not a reading
    text = C._musique_alpha(_sweep_records({"0p25": row(0.01, -0.01, 0.03)}))
    assert text.endswith("at no α of the grid does the router gain significantly.")
    # the main encoder's sweep (the first of the run's encoders), not another's
    with refused(KeyError, names=("alpha_sweep.bm25.musique",)):
        C._musique_alpha(
            W.Records(
                {
                    "ablations": Record(
                        {"config": {"encoders": ["bm25"]}, "numbers": {"alpha_sweep": {}}}
                    )
                }
            )
        )


# --- errors name what is missing ----------------------------------------------------------------


def test_a_missing_record_or_key_names_it() -> None:
    with refused(KeyError, names=("'t1_auc_margin'",)):
        C._t1_dropped(_records())
    with refused(KeyError, names=("'regimes.hotpotqa.all'",)):
        C._regime_shares(_records(data_regimes={}))
    with refused(KeyError, names=("'book/nowhere'",)):
        F.chapter_findings("book/nowhere")


# --- the registry and the pages -----------------------------------------------------------------

DIRECTIVE = re.compile(r"^```\{regime-findings\}", re.MULTILINE)


def _pages_with_directive() -> set[str]:
    found = set()
    for page in (paths.REPO_ROOT / "book").rglob("*.md"):
        if DIRECTIVE.search(page.read_text(encoding="utf-8")):
            found.add(page.relative_to(paths.REPO_ROOT).with_suffix("").as_posix())
    return found


def test_every_page_with_the_directive_has_findings_and_every_finding_a_page() -> None:
    chapters = {f.chapter for f in F.FINDINGS}
    assert _pages_with_directive() == chapters
    ids = [f.id for f in F.FINDINGS]
    assert len(ids) == len(set(ids)), "finding ids name CSS classes: they must be unique"
    for finding in F.FINDINGS:  # every finding reads records, or the verdicts of the claims
        assert finding.runs or finding.judged, finding.id


def test_each_finding_reads_runs_the_registry_knows() -> None:
    """(That it reads no run beyond those it declares is checked on the quick records, where
    each finding is written from its own runs' records only.)"""
    from regime_core.runner.runs import RUNS

    known = set(RUNS)
    for finding in F.FINDINGS:
        assert set(finding.runs) <= known, (finding.id, set(finding.runs) - known)


# --- on the quick profile: computed sentence == rendered sentence --------------------------------


def _rendered_findings(html: Path, chapter: str) -> dict[str, str]:
    from tools.bookcheck.check import parse_page

    soup = parse_page(html / f"{chapter}.html")
    out = {}
    for para in soup.select("p.regime-finding"):
        ids = [c.removeprefix("regime-finding-") for c in para["class"] if c != "regime-finding"]
        out[ids[0]] = " ".join(_straight_quotes(para.get_text()).split())
    return out


def _straight_quotes(text: str) -> str:
    """Sphinx's smart quotes curl the apostrophes of rendered text; the writers' are straight."""
    return text.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'}))


@pytest.mark.realdata
@pytest.mark.slow
def test_on_the_quick_book_every_finding_stands_on_its_page(
    quick_book: Any, quick_run: Any
) -> None:
    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    from regime_core.runner.verdicts import ROBUSTNESS_RUN, judge_claims, load_run_records

    html = Path(quick_book.html_dir)
    claims = load_claims(quick_run.book_root / "paper_claims.yml")  # the book's claims file
    runs = [run for c in claims for run in c.runs()]
    records = load_run_records([*runs, ROBUSTNESS_RUN], quick_run.work)
    verdicts = {v.claim.id: v for v in judge_claims(records, claims, records[ROBUSTNESS_RUN])}
    for chapter in sorted({f.chapter for f in F.FINDINGS}):
        wanted = {f.id for f in F.chapter_findings(chapter)}
        computed = {}
        for finding in F.chapter_findings(chapter):  # from the runs it declares, and no others
            runs = {run: quick_run.record(run) for run in finding.runs}
            own = W.Records(runs, verdicts if finding.judged else None)
            computed[finding.id] = " ".join(plain_text(finding.write(own)).split())
        rendered = _rendered_findings(html, chapter)
        assert set(rendered) == wanted, chapter
        assert rendered == computed, chapter
        for text in computed.values():  # a finding carries a number, not only words
            assert re.search(r"\d", text), (chapter, text)


def test_the_bottom_line_counts_the_abstract_and_ours_apart_in_words() -> None:
    from types import SimpleNamespace

    from regime_core.runner.judge import Judgement

    def judged(
        *verdicts: str, ours: tuple[str, ...] = (), implied: tuple[str, ...] = ()
    ) -> W.Records:
        made = (
            [(v, "abstract", "paper") for v in verdicts]
            + [(v, "ours", "ours") for v in ours]
            + [(v, "implied by the abstract", "paper") for v in implied]
        )
        claims = {
            str(i): SimpleNamespace(
                verdict=v,
                judgement=Judgement(v, "", ours=origin == "ours"),
                claim=SimpleNamespace(source=source, ours_only=origin == "ours"),
            )
            for i, (v, source, origin) in enumerate(made)
        }
        return W.Records({}, claims)

    four = judged("reproduced", "smaller than reported", "not reproduced", "not reproduced")
    assert L._bottom_counts(four) == (
        "We judged the 4 statements of the paper's abstract: 1 reproduces, 1 comes out smaller "
        "than the paper reports and 2 do not reproduce."
    )
    assert L._bottom_ours(four) == "Every row of the chart is a statement of the abstract."
    one = judged("reproduced", ours=("not reproduced",))
    assert L._bottom_counts(one) == (
        "We judged the one statement of the paper's abstract: it reproduces."
    )
    assert L._bottom_ours(one) == (
        "One more row is a question of ours, not the abstract's, judged by the same rules: "
        "it does not hold."
    )
    # a test the abstract only implies is ours, whatever its origin says
    mixed = judged(
        "reproduced", ours=("reproduced",), implied=("not reproduced", "not testable here")
    )
    assert L._bottom_ours(mixed) == (
        "The other 3 rows of the chart are questions of ours, not the abstract's, judged by the "
        "same rules: 1 holds, 1 does not hold and 1 cannot be tested here."
    )
    # the landing's paragraph: both counts in one sentence, apart; one statement: two sentences
    assert L._bottom_verdicts(mixed) == f"{L._bottom_counts(mixed)} {L._bottom_ours(mixed)}"
    several = judged("reproduced", "not reproduced", ours=("reproduced", "not testable here"))
    assert L._bottom_verdicts(several) == (
        "We judged the 2 statements of the paper's abstract (1 reproduces and 1 does not "
        "reproduce) and, by the same rules, 2 questions of our own (1 holds and 1 cannot be "
        "tested here)."
    )
    with refused(KeyError, names=("verdicts")):
        L._bottom_counts(_records())


# --- beyond the paper: a weight that transfers -----------------------------------------------


def _pair(ratio: float, best: float, cal: float, vs_fixed: Any, vs_tuned: Any,
          fitting: bool = False, routing: Any = None) -> dict[str, Any]:  # fmt: skip
    return {
        "fitting_pair": fitting,
        "spreads": {"all": {"all": {"median_ratio": ratio}}},
        "best": {"in_sample": best},
        "rules": {"calibrated": {"alpha": cal}},
        "calibrated_vs_fixed": vs_fixed,
        "calibrated_vs_tuned_fixed": vs_tuned,
        "routing": routing
        or {
            "fixed": {"routed_vs_union": _cmp(0.01, -0.01, 0.03)},
            "calibrated": {"routed_vs_union": _cmp(0.05, 0.03, 0.07)},
        },
    }


def _transfer(**pairs: Any) -> W.Records:
    by: dict[str, dict[str, Any]] = {}
    for key, pair in pairs.items():
        encoder, dataset = key.split("__")
        by.setdefault(encoder, {})[dataset] = pair
    return _records(
        alpha_transfer={
            "pairs": by,
            "fit": {"c": 1.18, "tuned_fixed_alpha": 0.95},
            "protocol": {"fixed_alpha": 0.25, "train_encoder": "minilm"},
        }
    )


def test_alpha_findings_follow_the_values() -> None:
    gain, loss, tie = _cmp(0.07, 0.01, 0.11), _cmp(-0.03, -0.05, -0.01), _cmp(0.0, -0.02, 0.02)
    r = _transfer(
        minilm__2wikimultihopqa=_pair(0.80, 0.95, 1.09, gain, tie, fitting=True),
        minilm__musique=_pair(0.90, 0.85, 1.07, gain, tie),
        minilm__hotpotqa=_pair(0.89, 0.25, 1.05, loss, tie),
        tfidf__musique=_pair(0.93, 1.95, 1.10, gain, tie),
    )
    geometry = B._alpha_geometry(r)
    assert geometry.startswith("The spread ratio R = σ_q/σ_B lies between 0.80 (2WikiMultiHopQA")
    assert "near 1 for both encoders" in geometry
    assert "the calibrated α = c·R runs from 1.05 to 1.10 on the pairs c was not" in geometry
    # the fitting pair's α is cross-fitted, not c times its R: the sentence says so
    assert "(1.09 on 2WikiMultiHopQA with MiniLM-L6, the fitting pair, where each fold" in geometry
    assert "the best grid α runs from 0.25 to 1.95" in geometry
    text = B._alpha_gain(r)
    # the fitting pair is left out; two gains and one loss over the three others
    assert "2WikiMultiHopQA" not in text and "over the 3 pairs it was not fitted on" in text
    assert text.endswith("a significant gain on 2 of them and a significant loss on 1.")
    assert "-3.0 pp (95% CI -5.0 to -1.0 pp) on HotpotQA with MiniLM" in text
    control = B._alpha_control(r)
    assert "fitting pair (α = 0.95)" in control and "no pair tells them apart" in control
    assert "'" not in control + B._alpha_router(r)  # no apostrophe for smartquotes to curl
    router = B._alpha_router(r)
    assert router.endswith("a heavier bridge gives the router more to do.")
    # every pair gaining: the wording says so; a ratio far from 1: so does the geometry's
    r = _transfer(
        minilm__musique=_pair(0.5, 0.85, 0.6, gain, gain),
        tfidf__musique=_pair(2.0, 1.9, 2.0, gain, gain),
    )
    assert B._alpha_gain(r).endswith("it beats the fixed α significantly on every one.")
    assert "spread their scores differently" in B._alpha_geometry(r)
    assert "the geometry adds a significant gain on 2 of 2 pairs" in B._alpha_control(r)
    r = _transfer(minilm__musique=_pair(0.9, 0.85, 1.0, tie, loss))
    assert B._alpha_gain(r).endswith("no significant difference on any of them.")
    assert "hurts on 1 of 1 pairs" in B._alpha_control(r)
    with refused(KeyError, names=("alpha_transfer",)):
        B._alpha_gain(_records(ablations={}))
