"""The book's statistical vocabulary, defined once: the name of every interval method and test a
record can name (its ``ci_method`` and ``test``), the label of an interval at its level, and the
glossary entries generated from them (the ``regime-statistics-glossary`` directive).

Every page that names a method, a test or an interval's level takes the words from here, so a page
cannot call an interval by a method its record was not computed with, nor give it a level it does
not have (the book's checks find either in a page's text: ``tools/bookcheck/prose.py``).

>>> interval_label(0.95)
'95% CI'
>>> interval_label(1 - 0.05 / 9, holm=True)
'99.44% Holm-level interval'
"""

from __future__ import annotations

from collections.abc import Iterable

from regime_core.config import CONFIDENCE, CONTINUITY_CORRECTION

#: The kinds a recorded number is written as (:func:`regime_core.runner.wording.format_number`;
#: a ``why`` template's ``{numbers.KEY|KIND}``).
NUMBER_KINDS: tuple[str, ...] = ("auto", "pp", "pct", "frac", "p", "int", "r2", "time", "str")
#: The interval methods a record's ``ci_method`` may name, with the name a page prints.
INTERVAL_NAMES: dict[str, str] = {
    "score": "Tango's score interval",
    "score_cc": "Tango's score interval with continuity correction",
    "conditional_exact": "the conditional exact interval",
    "bootstrap_percentile": "percentile bootstrap interval",
    "clopper_pearson": "exact (Clopper–Pearson) interval",
}
#: The tests a record's ``test`` may name, with the name a page prints.
TEST_NAMES: dict[str, str] = {
    "mcnemar_chi2": "asymptotic McNemar test",
    "mcnemar_chi2_cc": "McNemar's χ² test with continuity correction",
    "mcnemar_exact": "exact conditional McNemar test",
    "mcnemar_mid_p": "mid-p McNemar test",
    "sign": "sign test",
    "permutation": "paired permutation test",
    "permutation_exact": "exact paired permutation test",
}
#: The paired interval and test of a difference of hit rates the book uses now.
PAIRED_INTERVAL: str = "score_cc" if CONTINUITY_CORRECTION else "score"
PAIRED_TEST: str = "mcnemar_chi2_cc" if CONTINUITY_CORRECTION else "mcnemar_chi2"
#: How a Holm-level interval is named (its level before it).
HOLM_LEVEL = "Holm-level interval"


def glossary(verdict: Iterable[str], ours: Iterable[str]) -> list[tuple[tuple[str, ...], str]]:
    """The glossary's statistical entries, ``(terms, definition)``, from the names above and the
    words of a ``verdict`` and of ``ours`` (:mod:`regime_core.runner.judge`'s, which the glossary
    page's ``regime-statistics-glossary`` passes to generate "Statistics and verdicts")."""
    level = interval_label(CONFIDENCE)
    verdicts = ", ".join(f"*{v}*" for v in verdict)
    ours_words = ", ".join(f"*{v}*" for v in dict.fromkeys(ours))
    return [
        (
            ("confidence interval", "CI"),
            f"A {level}. For a difference of hit@5 between two arms on the same questions, "
            f"{INTERVAL_NAMES[PAIRED_INTERVAL]} of the paired difference, the inversion of the "
            f"{TEST_NAMES[PAIRED_TEST]}, so that it excludes zero exactly when that test's p is "
            f"below {1 - CONFIDENCE:.0%}. For a level (a hit rate), the "
            f"{INTERVAL_NAMES['clopper_pearson']}; for R² and differences of differences, a "
            f"{INTERVAL_NAMES['bootstrap_percentile']} with a fixed seed.",
        ),
        (
            (HOLM_LEVEL,),
            "The interval of one comparison of a Holm family at the level Holm tested it (for "
            f"example the {interval_label(1 - (1 - CONFIDENCE) / 9, holm=True)} of the first of "
            "nine comparisons): it excludes zero exactly when the comparison's Holm-adjusted p "
            f"is below {1 - CONFIDENCE:.0%}. It is not a simultaneous interval; the pages give "
            f"its level and, where a reader compares with the paper, the {level} beside it.",
        ),
        (
            ("McNemar test", "McNemar"),
            "The test of a paired difference of hits: of the questions on which two arms "
            "disagree (one finds the target, the other does not), are the wins of one more than "
            f"chance would give? This book uses the {TEST_NAMES[PAIRED_TEST]}, the test its "
            f"interval of the difference inverts; the p of the {TEST_NAMES['mcnemar_exact']} "
            f"and of the {TEST_NAMES['mcnemar_mid_p']} are kept beside it, and no verdict reads "
            "them.",
        ),
        (
            ("Holm adjustment",),
            "A correction of the p-values of a family of tests so that the chance of any false "
            f"positive stays below {1 - CONFIDENCE:.0%}. Where a family is adjusted (T2, T3) each "
            f"interval is the {HOLM_LEVEL} at the level Holm tested its comparison, labelled "
            "with that level; across the whole ledger a second Holm correction says which "
            "verdicts survive it.",
        ),
        (
            ("verdict",),
            f"The paper's claim judged on our numbers by a stated rule: {verdicts}. A statement "
            f"of our own, which the paper never makes, reads in its own words: {ours_words}.",
        ),
    ]


def interval_label(confidence: float, *, holm: bool = False) -> str:
    """The label of an interval at ``confidence``: ``95% CI``, or for a Holm-level interval
    its level with two decimals where it needs them, ``99.44% Holm-level interval``."""
    percent = 100 * confidence
    digits = 0 if abs(percent - round(percent)) < 1e-9 else 2
    level = f"{percent:.{digits}f}%"
    return f"{level} {HOLM_LEVEL}" if holm else f"{level} CI"
