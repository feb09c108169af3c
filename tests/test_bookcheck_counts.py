"""The counts the book prints: one quantity, one value (tools.bookcheck.counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.bookcheck.counts import QUANTITIES, book_counts, disagreements, page_counts

DATASETS = "We hold {} HotpotQA, {} 2WikiMultiHopQA and {} MuSiQue two-hop dev questions."


def test_a_quantity_printed_with_two_values_is_named_with_its_pages() -> None:
    pages = {
        "intro.html": DATASETS.format("685", "485", "192")
        + " We judged the 15 statements of the paper's abstract: ...",
        "paper_vs_ours.html": "(685 HotpotQA, 485 2WikiMultiHopQA and 192 MuSiQue questions)",
        "robustness.html": "Across 3,620 judged readings of 11 claims (claim × reading pairs; "
        "100 more are no evidence and left out). The multiverse holds 3,720 claim × reading "
        "pairs in all.",
        "reading_guide.html": DATASETS.format("685", "485", "193"),
    }
    counts = book_counts(pages)
    assert counts["judged readings of the multiverse"] == {"3620": ["robustness.html"]}
    assert counts["claims the multiverse judges"] == {"11": ["robustness.html"]}
    assert counts["claim × reading pairs of the multiverse, in all"] == {
        "3720": ["robustness.html"]
    }
    (problem,) = disagreements(counts)
    assert problem == (
        "two-hop dev questions held, per dataset (HotpotQA, 2WikiMultiHopQA, MuSiQue): "
        "685 / 485 / 192 on intro.html, paper_vs_ours.html; 685 / 485 / 193 on reading_guide.html"
    )


def test_a_count_is_read_across_line_breaks_and_in_words() -> None:
    text = "We judged the\n  one statement of the paper's abstract: it reproduces."
    assert page_counts(text) == {"statements of the paper's abstract": {"1"}}
    # a count of another quantity is not this one: the questions a figure leaves out
    left_out = "with MiniLM, HotpotQA loses 251 questions this way, 2WikiMultiHopQA 40"
    assert page_counts(left_out) == {}
    # nor the questions a profile's runs used, and a typographic apostrophe counts as one
    used = (
        "The runs behind this build used 40 HotpotQA, 40 2WikiMultiHopQA and 40 MuSiQue questions"
    )
    assert page_counts(used) == {}
    curly = "We judged the 15 statements of the paper’s abstract"
    assert page_counts(curly) == {"statements of the paper's abstract": {"15"}}
    assert disagreements(book_counts({"a": text, "b": "the 15 statements of the paper's abstract"}))


def test_every_quantity_has_a_count_group() -> None:
    for quantity in QUANTITIES:
        groups = set(quantity.phrase.groupindex)
        assert groups == {"n"} or (groups and all(g[0] == "n" for g in groups)), quantity.name


@pytest.mark.realdata
@pytest.mark.slow
def test_the_built_book_prints_each_quantity_with_one_value(quick_book: Any) -> None:
    from tools.bookcheck.counts import page_texts

    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    counts = book_counts(page_texts(Path(quick_book.html_dir)))
    print("\n".join(f"{q}: {dict(v)}" for q, v in sorted(counts.items())))
    # the landing page, the data caveats and the multiverse print these; none may go missing
    for wanted in (
        "two-hop dev questions held, per dataset (HotpotQA, 2WikiMultiHopQA, MuSiQue)",
        "statements of the paper's abstract",
        "judged readings of the multiverse",
    ):
        assert wanted in counts, wanted
    assert disagreements(counts) == []
