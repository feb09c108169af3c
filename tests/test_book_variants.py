"""The page "Your variants" (regime_book.variants): without a variant it says what one
is and how to make one; a variant shows what differs and its claims' verdicts beside the
default's, as ``regime verdicts --variant`` judges them; a malformed one is a problem naming its
file, never skipped; the page is read again when the variants on disk change. On a one-page
book, a malformed variant fails the strict build with a warning naming its file."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from docutils import nodes
from helpers import GAIN_CLAIM, UNION_CLAIM, write_claims, write_stamped_record

from regime_book import variants as V
from regime_core import paths
from regime_core.runner.records import load_record, write_record
from regime_core.runner.verdicts import variant_report


def _numbers(diff: float, lo: float, hi: float, p: float) -> dict[str, Any]:
    comparison = {"diff": diff, "ci_lo": lo, "ci_hi": hi, "p_value": p}
    return {"n": 400, "c": {**comparison, "n_a_better": 40, "n_b_better": 20}, "u": comparison}


DEFAULT_NUMBERS = _numbers(0.02, 0.001, 0.04, 0.03)
VARIANT_NUMBERS = _numbers(0.05, 0.03, 0.07, 0.0001)


@pytest.fixture
def work(tmp_path: Path) -> tuple[Path, Path]:
    """A work directory holding the default record of run ``r`` (config ``x = 1``), and the
    claims file of its two claims."""
    claims = write_claims(tmp_path / "claims.yml", GAIN_CLAIM, UNION_CLAIM)
    root = tmp_path / "work"
    write_stamped_record(root, "r", config={"x": 1, "k": 5}, numbers=DEFAULT_NUMBERS)
    write_stamped_record(root, "other", config={"y": "a"}, numbers={"n": 1})
    return root, claims


def _write_variant(work: Path, run: str, config: dict[str, Any], numbers: Any) -> Path:
    """A variant record where a notebook run by hand writes it: ``variants/<run>/<hash>``."""
    staging = work / "staging" / run
    written = load_record(write_record(staging, name=run, config=config, numbers=numbers))
    folder = paths.variant_dir(run, written["config_hash"], work)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(folder)
    return folder / "record.json"


def _page(work: Path, claims: Path) -> tuple[list[V.HeldVariant], list[nodes.Node]]:
    held = [V.judge_variant(f, work, claims) for f in V.variant_files(work)]
    return held, V.variants_nodes(held, "book/reproducing/variants")


def _rows(table: nodes.table) -> list[list[str]]:
    """The body's cells as text, without the column names a card shows on a phone."""
    body = table.next_node(nodes.tbody).deepcopy()
    for label in list(body.findall(nodes.inline)):
        if "regime-card-label" in label["classes"]:
            label.parent.remove(label)
    return [[e.astext() for e in row.findall(nodes.entry)] for row in body.findall(nodes.row)]


def _text(found: list[nodes.Node]) -> str:
    return " ".join(" ".join(n.astext().split()) for n in found)


def test_without_variants_the_page_says_what_one_is_and_how_to_make_one(
    work: tuple[Path, Path],
) -> None:
    held, found = _page(*work)
    assert held == []
    text = _text(found)
    assert text.startswith("A variant is a notebook you ran yourself with parameters")
    assert "variants/<run>/<config hash>" in text and "holds none" in text
    assert "-p NAME VALUE" in text and '-y "NAME: [a, b]"' in text and "make book" in text
    assert "regime reproduce --set RUN.PARAM=VALUE" in text
    (commands,) = [n for n in found if isinstance(n, nodes.literal_block)]
    lines = commands.astext().splitlines()
    assert lines[1::2] == [command for _, command in V.VARIANT_COMMANDS]
    assert all(line.startswith("# ") for line in lines[::2])


def test_the_commands_make_one_variant_two_ways_then_build_the_book() -> None:
    """The papermill line names a notebook of the repository, writes into _build/ and sets
    parameters that notebook declares; the --set line sets the same values on that notebook's
    run (the same variant, the same folder); the last builds the book."""
    import shlex

    import yaml

    from regime_core.runner.declarations import notebook_parameters
    from regime_core.runner.runs import RUNS
    from regime_core.runner.variants import parse_setting

    (_, papermill), (_, one_command), (_, book) = V.VARIANT_COMMANDS
    words = shlex.split(papermill)
    assert words[0] == ".venv/bin/papermill"
    notebook, output = paths.REPO_ROOT / words[1], words[2]
    assert notebook.is_file() and output.startswith("_build/")
    by_hand: dict[str, Any] = {}
    rest = words[3:]
    while rest:
        if rest[0] == "-p":  # -p NAME VALUE (papermill reads VALUE as YAML too)
            by_hand[rest[1]] = yaml.safe_load(rest[2])
            rest = rest[3:]
        else:
            assert rest[0] == "-y"
            by_hand.update(yaml.safe_load(rest[1]))
            rest = rest[2:]
    assert by_hand == {"alpha": 0.5, "encoders": ["minilm"]}
    assert set(by_hand) <= set(notebook_parameters(notebook))
    words = shlex.split(one_command)
    assert words[:2] == [".venv/bin/regime", "reproduce"] and words[2::2] == ["--set"] * 2
    settings = [parse_setting(item) for item in words[3::2]]
    assert {s.run_id for s in settings} == {"t3_brel_knockout"}
    assert RUNS["t3_brel_knockout"].notebook.resolve() == notebook.resolve()
    assert {s.parameter: s.value for s in settings} == by_hand
    assert book == ".venv/bin/regime book"


def test_a_variant_shows_what_differs_and_its_verdicts_beside_the_default(
    work: tuple[Path, Path],
) -> None:
    root, claims = work
    file = _write_variant(root, "r", {"x": 2, "k": 5}, VARIANT_NUMBERS)
    held, found = _page(root, claims)
    (variant,) = held
    assert variant.problem is None and variant.file == file
    # what `regime verdicts --variant` prints
    report = variant_report(file, root, claims).to_dict()
    assert variant.report is not None and variant.report.to_dict() == report
    default = [c["default"]["verdict"] for c in report["claims"]]
    assert default != [c["variant"]["verdict"] for c in report["claims"]]  # the fixture moves one
    text = _text(found)
    assert "holds 1 variant, judged as regime verdicts --variant RUN/HASH" in text
    assert (
        f"Variant {variant.name}" in text
        and variant.name == f"r/{report['variant']['config_hash']}"
    )
    assert "Its parameters differ from the default's: x 1 → 2." in text
    (table,) = list(found[1].findall(nodes.table))
    assert [e.astext() for e in table.findall(nodes.entry)][:5] == [
        name for name, _ in V.VARIANT_COLUMNS
    ]
    assert "regime-cards" in table["classes"]  # a card per claim on a phone, each cell labelled
    labels = [n.astext() for n in table.next_node(nodes.tbody).findall(nodes.inline)
              if "regime-card-label" in n["classes"]]  # fmt: skip
    assert labels == [name for name, _ in V.VARIANT_COLUMNS[1:]] * len(report["claims"])
    assert _rows(table) == [
        ["a gain" if c["id"] == "gain" else "beats always-union", c["default"]["verdict"],
         c["default"]["ours_text"], c["variant"]["verdict"], c["variant"]["ours_text"]]
        for c in report["claims"]
    ]  # fmt: skip
    assert str(root) not in text  # no local path on a page


def test_a_verdict_is_coloured_by_the_verdict_not_its_words(tmp_path: Path) -> None:
    """A statement of ours reads "holds" where the paper's reads "reproduced": its cells take
    the colour of the verdict, a class the style sheet defines."""
    from regime_book.claims import verdict_class

    claims = write_claims(tmp_path / "claims.yml", {**GAIN_CLAIM, "origin": "ours"})
    root = tmp_path / "work"
    write_stamped_record(root, "r", config={"x": 1, "k": 5}, numbers=DEFAULT_NUMBERS)
    _write_variant(root, "r", {"x": 2, "k": 5}, VARIANT_NUMBERS)
    _, found = _page(root, claims)
    (table,) = list(found[1].findall(nodes.table))
    (row,) = _rows(table)
    assert row[3] == "holds"  # the variant's words
    cells = list(table.next_node(nodes.tbody).findall(nodes.entry))
    assert verdict_class("reproduced") in cells[3]["classes"]
    css = (Path(V.__file__).parent / "static" / "regime-claims.css").read_text(encoding="utf-8")
    defined = set(re.findall(r"\.(regime-verdict-[a-z-]+)", css))
    used = {c for cell in cells for c in cell["classes"] if c.startswith("regime-verdict-")}
    assert used and used <= defined


def test_a_claim_the_variant_cannot_give_is_not_judged_in_its_row(
    work: tuple[Path, Path],
) -> None:
    """A variant whose parameters leave a claim's number out (here the union comparison) is
    listed with its other claims judged, the missing one "not judged" with its key; `regime
    verdicts --variant` says the same (issue 44: it raised a KeyError, a traceback)."""
    root, claims = work
    numbers = {key: value for key, value in VARIANT_NUMBERS.items() if key != "u"}
    file = _write_variant(root, "r", {"x": 2, "k": 5}, numbers)
    judged = {c["id"]: c for c in variant_report(file, root, claims).to_dict()["claims"]}
    assert judged["beats_union"]["variant"] is None
    assert "has no number 'u.diff'" in judged["beats_union"]["not_judged"]
    (variant,), found = _page(root, claims)
    assert variant.problem is None
    assert variant.report is not None
    by_id = {c["id"]: c for c in variant.report.to_dict()["claims"]}
    assert by_id["beats_union"]["variant"] is None
    assert "has no number 'u.diff'" in by_id["beats_union"]["not_judged"]
    assert by_id["gain"]["variant"]["verdict"] == "reproduced"
    (table,) = list(found[1].findall(nodes.table))
    rows = _rows(table)
    assert rows[1][3] == "not judged"
    assert rows[1][4].startswith("Its record cannot give this claim: record 'r' has no number")


def test_a_variant_of_a_run_without_claims_is_listed_with_what_differs(
    work: tuple[Path, Path],
) -> None:
    root, claims = work
    _write_variant(root, "other", {"y": "b"}, {"n": 2})
    (variant,), found = _page(root, claims)
    assert variant.problem is None and variant.report is not None and variant.report.claims == ()
    text = _text(found)
    assert "Its parameters differ from the default's: y a → b." in text
    assert "No claim of the paper is judged on run other" in text
    assert not list(found[1].findall(nodes.table))


def test_a_malformed_variant_is_a_problem_naming_its_file_not_skipped(
    work: tuple[Path, Path],
) -> None:
    root, claims = work
    good = _write_variant(root, "r", {"x": 2, "k": 5}, VARIANT_NUMBERS)
    broken = paths.variant_dir("r", "0badc0ffee00", root) / "record.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"schema": "regime-record/1", "name": "r"', encoding="utf-8")
    moved = _write_variant(root, "r", {"x": 3, "k": 5}, VARIANT_NUMBERS)
    elsewhere = paths.variant_dir("r", "aaaaaaaaaaaa", root)
    moved.parent.rename(elsewhere)  # a record in another variant's folder
    held, found = _page(root, claims)
    by_file = {v.file: v for v in held}
    assert set(by_file) == {good, broken, elsewhere / "record.json"}
    assert by_file[good].problem is None
    assert str(broken) in by_file[broken].problem
    # rewritten by its notebook, not by `regime reproduce --only <hash>`
    assert "rerun the notebook of run 'r' by hand" in by_file[broken].problem
    assert "--only" not in by_file[broken].problem
    moved_problem = by_file[elsewhere / "record.json"].problem
    assert "field 'config_hash'" in moved_problem and str(elsewhere) in moved_problem
    text = _text(found)
    assert "holds 3 variants, each judged as" in text
    assert text.count("It could not be judged:") == 2
    problems = [n for n in found[1:] for p in n.findall(nodes.paragraph)
                if "regime-variant-problem" in p["classes"]]  # fmt: skip
    assert len(problems) == 2
    assert str(root) not in text and "<work>/variants/r/0badc0ffee00/record.json" in text


def test_a_variant_whose_default_record_is_missing_is_a_problem(
    work: tuple[Path, Path],
) -> None:
    root, claims = work
    _write_variant(root, "lonely", {"z": 1}, {"n": 1})
    (variant,), _ = _page(root, claims)
    assert "no record for run 'lonely'" in variant.problem
    assert "regime reproduce" in variant.problem
    assert variant.problem.count("regime reproduce") == 1


def test_the_page_is_read_again_when_the_variants_on_disk_change(
    work: tuple[Path, Path],
) -> None:
    root, _ = work
    page = "book/reproducing/variants"
    env = SimpleNamespace(all_docs={page: 0, "book/intro": 0})
    app = SimpleNamespace(config=SimpleNamespace(regime_work_dir=str(root)), srcdir=str(root))

    def outdated(changed: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        return V.outdated_variant_pages(app, env, set(), set(changed), set())  # type: ignore[arg-type]

    assert outdated() == []  # no page listed variants
    V.VariantListings.of(env)[page] = [str(f) for f in V.variant_files(root)]
    assert outdated() == []  # nothing changed on disk
    added = _write_variant(root, "r", {"x": 2, "k": 5}, VARIANT_NUMBERS)
    assert outdated() == [page]
    assert outdated({page}) == []  # read again anyway
    V.VariantListings.of(env)[page] = [str(added)]
    assert outdated() == []
    added.unlink()
    assert outdated() == [page]
    # a parallel read's listing is merged into the main environment
    other = SimpleNamespace()
    V.VariantListings.of(other)[page] = ["x"]
    V.VariantListings().merge_other(app, env, {page}, other)  # type: ignore[arg-type]
    assert V.VariantListings.of(env)[page] == ["x"]
    V.VariantListings().clear_doc(app, env, page)  # type: ignore[arg-type]
    assert page not in V.VariantListings.of(env)


# --- on a one-page book ---------------------------------------------------------------------------

VARIANTS_PAGE = """\
# Your variants

```{regime-variants}
:file: book/claims_demo.yml
```
"""


@pytest.mark.slow
def test_the_page_follows_the_variants_on_disk_and_a_malformed_one_fails_the_build(
    tmp_path: Path,
) -> None:
    """Built without a variant, the page says so; a variant written afterwards is on the page of
    the next (incremental) build, and a malformed one fails the strict build with a warning
    naming its file, its folder still on the page."""
    from test_book_build import DEMO_CLAIMS, _one_page_book

    from regime_core.book.build import build_book

    root, work = _one_page_book(tmp_path, VARIANTS_PAGE, page="variants")
    result = build_book(root, work=work)
    assert result.ok, "\n".join(result.warnings()) or result.log[-3000:]
    page = root / "_build" / "html" / "book" / "variants.html"
    assert "holds none" in page.read_text(encoding="utf-8")

    loss = {**DEMO_CLAIMS["loss"], "diff": -0.04, "ci_lo": -0.045, "ci_hi": -0.035}
    good = _write_variant(work, "demo", {"n_points": 5}, {"claims": {**DEMO_CLAIMS, "loss": loss}})
    broken = paths.variant_dir("demo", "0badc0ffee00", work) / "record.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{", encoding="utf-8")
    result = build_book(root, work=work)
    assert not result.ok
    warnings = "\n".join(result.warnings())
    assert f"variant demo/0badc0ffee00: {broken}" in warnings and "'book/variants'" in warnings
    assert str(good) not in warnings
    html = page.read_text(encoding="utf-8")
    assert "holds 2 variants" in html
    assert f"Variant demo/{good.parent.name}" in html and "n_points 3 → 5" in html
    assert "Variant demo/0badc0ffee00" in html and "It could not be judged" in html
    assert str(work) not in html
