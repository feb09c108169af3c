"""The statistical vocabulary (regime_core.vocabulary): labels at their level, names from one
definition, and the check that finds a page naming a method or a level its records do not have
(tools.bookcheck.prose)."""

from __future__ import annotations

import doctest
from typing import Any

import pytest

from regime_core import vocabulary
from regime_core.runner.judge import OURS_WORDS, VERDICTS
from regime_core.runner.ours import Comparison
from tools.bookcheck.prose import label_problems


def test_doctests_pass() -> None:
    result = doctest.testmod(vocabulary)
    assert result.attempted >= 2 and result.failed == 0


def test_a_holm_level_interval_says_so_with_its_level_and_the_95_interval_beside_it() -> None:
    plain = Comparison(0.066, 0.045, 0.091, p=1e-6, n=657)
    assert plain.text() == "+6.6 pp (95% CI +4.5 pp to +9.1 pp), p < 0.001"
    holm = Comparison(0.08, 0.04, 0.12, p=0.002, n=300, confidence=1 - 0.05 / 9, holm=True,
                      ci_nominal=(0.052, 0.107))  # fmt: skip
    text = holm.text()
    assert text.startswith("+8.0 pp (99.44% Holm-level interval +4.0 pp to +12.0 pp; 95% CI")
    assert "Holm p = 0.002" in text and "95% CI +4.0" not in text


def test_the_glossary_is_written_from_the_definitions() -> None:
    entries = dict(vocabulary.glossary(VERDICTS, OURS_WORDS.values()))
    ci = entries[("confidence interval", "CI")]
    assert vocabulary.INTERVAL_NAMES[vocabulary.PAIRED_INTERVAL] in ci
    assert vocabulary.TEST_NAMES[vocabulary.PAIRED_TEST] in ci
    assert "not a simultaneous interval" in entries[(vocabulary.HOLM_LEVEL,)]
    verdict = entries[("verdict",)]
    assert all(f"*{v}*" in verdict for v in VERDICTS)  # inconclusive and not testable included
    # the glossary no longer calls every interval a bootstrap, nor Holm a p-value-only affair
    assert "adjusts p-values, not intervals" not in " ".join(entries.values())


def test_label_problems_finds_a_wrong_method_or_level() -> None:
    ok = "+6.6 pp (95% CI +4.5 to +9.1 pp), Tango's score interval; 99.44% Holm-level interval"
    assert label_problems(ok, methods=["score"], holm_levels=[1 - 0.05 / 9]) == []
    wrong_method = "the interval is Tango's score interval with continuity correction"
    assert label_problems(wrong_method, methods=["score"])
    wrong_level = "+11.3 pp (95% CI +5.0 to +17.6 pp) labelled 99% CI"
    assert any("99% CI" in p for p in label_problems(wrong_level, methods=["score"]))
    holm_not_there = "a 97.50% Holm-level interval"
    assert label_problems(holm_not_there, methods=["score"], holm_levels=[0.99])


#: The pages that name the book's earlier intervals on purpose: the statistics section that
#: compares them, and the page of the choices made after seeing results, which lists each change
#: of method. (The glossary, whose example level belongs to no family, and the API pages, which
#: document the code, are not read.)
PAGES_NAMING_EARLIER_METHODS: frozenset[str] = frozenset(
    {"our_reading.html", "choices_after_results.html"}
)


@pytest.mark.realdata
@pytest.mark.slow
def test_no_built_page_names_a_method_or_level_its_records_do_not_have(
    quick_book: Any, quick_run: Any
) -> None:
    from regime_core.multiplicity import family_confidences
    from tools.bookcheck.check import book_pages, parse_page, visible_text

    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    levels = [
        *family_confidences(quick_run.record("t2_regime_decomposition").node("cells")).values(),
        *family_confidences(quick_run.record("t3_brel_knockout").node("comparisons")).values(),
    ]
    used = {vocabulary.PAIRED_INTERVAL, "bootstrap_percentile", "clopper_pearson"}
    problems = {}
    api = quick_book.html_dir / "book" / "reference" / "api"
    for page in book_pages(quick_book.html_dir):
        # the API pages document the code, which names every method it can compute (the
        # vocabulary's own table of names, a docstring's example level), not the records
        if page.name == "glossary.html" or page.is_relative_to(api):
            continue
        methods = (
            set(vocabulary.INTERVAL_NAMES) if page.name in PAGES_NAMING_EARLIER_METHODS else used
        )
        found = label_problems(visible_text(parse_page(page)), methods=methods, holm_levels=levels)
        if found:
            problems[page.name] = found
    assert problems == {}
