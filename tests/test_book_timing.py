"""The book step's timing (regime_book.timing): a one-page book built with
``timing=`` writes its phases, its page and the project's directives, roles and handlers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_book_build import _one_page_book

from regime_book.timing import PHASES, TIMING_FORMAT, setup_timing
from regime_core.book.build import TIMING_ENV, build_book

TIMED_PAGE = """\
# Slope

The slope is {rec}`demo:fit.slope|frac:4`.

```{rec-table} demo
:caption: The demo run's fit
Slope = fit.slope|frac
```

```{rec-figure} demo:demo_curve
:alt: the demo run's points and fitted line
The demo run's curve.
```
"""


def _seconds(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def test_a_timed_build_writes_its_phases_page_and_directives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TIMING_ENV, raising=False)
    root, work = _one_page_book(tmp_path, TIMED_PAGE)
    target = tmp_path / "timing" / "book.json"
    result = build_book(root, work=work, timing=target)
    assert result.ok, "\n".join(result.warnings()) or result.log[-3000:]
    timing = json.loads(target.read_text(encoding="utf-8"))
    assert (timing["format"], timing["builder"], timing["failed"]) == (TIMING_FORMAT, "html", False)
    assert isinstance(timing["warnings"], int)
    assert set(timing["phases"]) == {*PHASES, "total"}
    assert all(_seconds(s) for s in timing["phases"].values())
    assert list(timing["documents"]) == ["book/slope"]
    page = timing["documents"]["book/slope"]
    assert _seconds(page["read_seconds"]) and _seconds(page["write_seconds"])
    used = {(u["kind"], u["name"]): u for u in timing["project"]}
    for kind, name in [("directive", "rec-table"), ("directive", "rec-figure"), ("role", "rec")]:
        assert used[kind, name]["calls"] >= 1, (kind, name)
    assert used["directive", "regime-findings"]["calls"] == 0  # registered, not on the page
    # the project's handlers are counted under their event, Sphinx's own are not listed
    assert used["handler", "doctree-read: figure_alt_text"]["calls"] == 1
    assert used["handler", "html-page-context: tidy_page"]["calls"] >= 1
    assert all(_seconds(u["seconds"]) and u["calls"] >= 0 for u in timing["project"])
    assert not list(target.parent.glob(".*.partial"))
    # again, nothing out of date, asked through the environment with a path relative to here
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(TIMING_ENV, "again.json")
    assert build_book(root, work=work).ok
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert set(again["phases"]) == {*PHASES, "total"}
    assert all(_seconds(s) for s in again["phases"].values())
    assert again["documents"] == {} and again["phases"]["write"] == 0  # a phase not reached


def test_regime_book_takes_the_timing_file() -> None:
    from regime_core.cli import build_parser

    args = build_parser().parse_args(["book", "--timing", "t.json"])
    assert args.timing == Path("t.json")
    assert build_parser().parse_args(["book"]).timing is None


def test_without_the_variable_nothing_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMING_ENV, " ")
    assert setup_timing(object()) is None  # type: ignore[arg-type]  # never touches the app
