"""The annotation activity: deterministic sheets, kappa against scikit-learn, every error case.

The "annotators" here are synthetic: their labels are the automatic predicates with flips at
positions the test chooses, written into sheets in tmp dirs. No human label exists in the repo.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from helpers import refused
from sklearn.metrics import cohen_kappa_score

from regime_core.cli import main
from regime_core.data.toyworld import load_examples
from regime_core.teaching.annotate import (
    AUTO,
    SHEET_COLUMNS,
    auto_labels,
    kappa_report,
    make_sheet,
    read_sheet,
)

N = 20


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> Path:
    columns = columns or list(rows[0])
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _fill(sheet: Path, out: Path, name: str, flips: dict[str, set[int]], style=("1", "0")) -> Path:
    """A synthetic annotator: the automatic labels, flipped at the given row positions."""
    rows = _read(sheet)
    auto = auto_labels(load_examples(split="dev"))
    for i, row in enumerate(rows):
        for predicate in ("p1", "p2"):
            label = auto[predicate][row["id"]] != (i in flips.get(predicate, set()))
            row[predicate] = style[0] if label else style[1]
        row["annotator"] = name if i == 0 else ""  # the name in one row is enough
    return _write(out, rows)


@pytest.fixture()
def sheet(tmp_path: Path) -> Path:
    path, _spec = make_sheet("toyworld", tmp_path / "blank.csv", n=N, seed=7)
    return path


def test_sheet_is_deterministic_and_blank(tmp_path: Path, sheet: Path) -> None:
    again, _ = make_sheet("toyworld", tmp_path / "again.csv", n=N, seed=7)
    other, _ = make_sheet("toyworld", tmp_path / "other.csv", n=N, seed=8)
    assert sheet.read_bytes() == again.read_bytes()
    assert sheet.read_bytes() != other.read_bytes()
    rows = _read(sheet)
    assert len(rows) == N and list(rows[0]) == list(SHEET_COLUMNS)
    assert all(r["p1"] == r["p2"] == r["annotator"] == "" for r in rows)
    assert len({r["sample"] for r in rows}) == 1
    assert rows[0]["sample"].startswith("toyworld-dev-seed7-n20-")
    by_id = {ex.id: ex for ex in load_examples(split="dev")}
    first = by_id[rows[0]["id"]]
    assert rows[0]["question"] == first.question
    assert rows[0]["bridge_text"] == first.bridge.text
    assert rows[0]["hop2_entity"] == first.hop2_entity


@pytest.mark.parametrize(
    ("text", "expected"), [("1", True), (" Y ", True), ("yes", True), ("TRUE", True),
                           ("0", False), ("n", False), ("No", False), ("false", False)]
)  # fmt: skip
def test_every_spelling_of_a_label_is_read(
    tmp_path: Path, sheet: Path, text: str, expected: bool
) -> None:
    rows = _filled(tmp_path, sheet)
    rows[0]["p1"] = text
    read = read_sheet(_write(tmp_path / "spelled.csv", rows))
    assert read.labels["p1"][rows[0]["id"]] is expected


def test_kappa_matches_scikit_learn(tmp_path: Path, sheet: Path) -> None:
    a = _fill(sheet, tmp_path / "a.csv", "ann", {"p1": {0, 3, 5}, "p2": {2}})
    b = _fill(sheet, tmp_path / "b.csv", "bob", {"p1": {3, 9}, "p2": set()}, style=("y", "n"))
    report = kappa_report([a, b])
    assert report.raters == ("ann", "bob", AUTO)
    labels = {
        name: {p: [int(x) for x in col] for p, col in zip(("p1", "p2"), cols, strict=True)}
        for name, cols in (
            ("ann", _columns(a)),
            ("bob", _columns(b)),
        )
    }
    ids = [r["id"] for r in _read(sheet)]
    auto = auto_labels(load_examples(split="dev"))
    labels[AUTO] = {p: [int(auto[p][i]) for i in ids] for p in ("p1", "p2")}
    assert len(report.pairs) == 2 * 3
    for pair in report.pairs:
        expected = cohen_kappa_score(labels[pair.a][pair.predicate], labels[pair.b][pair.predicate])
        if math.isnan(expected):
            assert math.isnan(pair.kappa)
        else:
            assert pair.kappa == pytest.approx(expected)
    # disagreements: p1 at rows 0, 3, 5, 9 (row 3 flipped by both: they agree, auto differs)
    p1_rows = {ids.index(d.id) for d in report.disagreements if d.predicate == "p1"}
    assert p1_rows == {0, 3, 5, 9}
    row3 = next(d for d in report.disagreements if d.predicate == "p1" and d.id == ids[3])
    assert row3.labels["ann"] == row3.labels["bob"] != row3.labels[AUTO]
    assert row3.question


def _columns(path: Path) -> tuple[list[bool], list[bool]]:
    sheet = read_sheet(path)
    return (
        [sheet.labels["p1"][i] for i in sheet.ids],
        [sheet.labels["p2"][i] for i in sheet.ids],
    )


def test_single_sheet_against_auto_and_perfect_agreement(tmp_path: Path, sheet: Path) -> None:
    a = _fill(sheet, tmp_path / "carol.csv", "", {})  # no name: named after the file
    report = kappa_report([a])
    assert report.raters == ("carol", AUTO)
    p1 = next(p for p in report.pairs if p.predicate == "p1")
    assert p1.kappa == pytest.approx(1.0) and p1.agreement == 1.0
    assert report.disagreements == ()


def test_kappa_cli_json(tmp_path: Path, sheet: Path, capsys) -> None:
    a = _fill(sheet, tmp_path / "a.csv", "ann", {"p1": {1}})
    b = _fill(sheet, tmp_path / "b.csv", "bob", {})
    assert main(["annotate", "kappa", str(a), str(b), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["raters"] == ["ann", "bob", AUTO]
    assert len(payload["disagreements"]) == 1
    assert (
        payload["disagreements"][0]["labels"]["ann"] != payload["disagreements"][0]["labels"]["bob"]
    )
    assert main(["annotate", "kappa", str(a)]) == 0
    assert "kappa" in capsys.readouterr().out


def test_sample_cli(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.csv"
    assert (
        main(
            [
                "annotate",
                "sample",
                "toyworld",
                "--n",
                "5",
                "--seed",
                "1",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["n"] == 5 and len(_read(out)) == 5


# --- error cases: each names the file, the row and the column -------------------------------------


def _filled(tmp_path: Path, sheet: Path) -> list[dict[str, str]]:
    return _read(_fill(sheet, tmp_path / "ok.csv", "ann", {}))


# one cell of a filled sheet changed: (name, row index, column, new value (None: the id of the
# row above), who reads the sheet); the error names the file, the row (the header is row 1) and
# the column
CELL_ERRORS = {
    "bad_value": ("bad.csv", 4, "p2", "maybe", read_sheet),
    "empty_value": ("empty.csv", 0, "p1", "", read_sheet),
    "unknown_id": ("unknown.csv", 2, "id", "toy-dev-999999", lambda path: kappa_report([path])),
    "duplicate_id": ("dup.csv", 1, "id", None, read_sheet),
    "rows_of_different_samples_mixed": (
        "mixed.csv", 3, "sample", "toyworld-dev-seed1-n20-0123456789", read_sheet,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CELL_ERRORS))
def test_a_bad_cell_is_named(tmp_path: Path, sheet: Path, case: str) -> None:
    name, row, column, value, reader = CELL_ERRORS[case]
    rows = _filled(tmp_path, sheet)
    rows[row][column] = rows[row - 1]["id"] if value is None else value
    bad = _write(tmp_path / name, rows)
    with refused(ValueError, names=(f"{name}, row {row + 2}", f"'{column}'")):
        reader(bad)


def test_missing_column(tmp_path: Path, sheet: Path) -> None:
    rows = _filled(tmp_path, sheet)
    columns = [c for c in SHEET_COLUMNS if c != "p2"]
    bad = _write(tmp_path / "nocol.csv", rows, columns)
    with refused(ValueError, names=("nocol.csv, row 2", "'p2'")):
        read_sheet(bad)


def test_missing_rows(tmp_path: Path, sheet: Path) -> None:
    rows = _filled(tmp_path, sheet)
    bad = _write(tmp_path / "short.csv", rows[:-2])
    with refused(ValueError, names=("short.csv", "'id'", "2 question")):
        kappa_report([bad])


def test_sheets_of_different_samples(tmp_path: Path, sheet: Path) -> None:
    a = _fill(sheet, tmp_path / "a.csv", "ann", {})
    other, _ = make_sheet("toyworld", tmp_path / "other_blank.csv", n=N, seed=99)
    b = _fill(other, tmp_path / "b.csv", "bob", {})
    with refused(ValueError, names=("b.csv, row 2", "'sample'")):
        kappa_report([a, b])


def test_two_names_in_one_sheet_and_same_annotator_twice(tmp_path: Path, sheet: Path) -> None:
    rows = _filled(tmp_path, sheet)
    rows[5]["annotator"] = "eve"
    with refused(ValueError, names=("two.csv", "'annotator'", "'eve'", "row 7")):
        read_sheet(_write(tmp_path / "two.csv", rows))
    a = _fill(sheet, tmp_path / "a.csv", "ann", {})
    b = _fill(sheet, tmp_path / "b.csv", "ann", {})
    with refused(ValueError, names=("b.csv", "'annotator'", "'ann'")):
        kappa_report([a, b])


def test_kappa_cli_reports_errors(tmp_path: Path, sheet: Path, capsys) -> None:
    rows = _filled(tmp_path, sheet)
    rows[0]["p1"] = "2"
    bad = _write(tmp_path / "bad.csv", rows)
    assert main(["annotate", "kappa", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, row 2" in err and "'p1'" in err


@pytest.mark.realdata
@pytest.mark.slow  # prepares HotpotQA (about 40 s)
def test_sheet_from_prepared_data(real_data_dir: Path, tmp_path: Path) -> None:
    from regime_core import paths
    from regime_core.data import prepare

    work = tmp_path / "work"
    prepare(real_data_dir, paths.prepared_dir(work), ("hotpotqa",))
    path, spec = make_sheet("hotpotqa", tmp_path / "h.csv", n=10, seed=0, work=work)
    rows = _read(path)
    assert len(rows) == 10 and spec.dataset == "hotpotqa"
    a = _fill_real(path, tmp_path / "r.csv", work)
    report = kappa_report([a], work=work)
    assert all(p.agreement == 1.0 for p in report.pairs)


def _fill_real(sheet: Path, out: Path, work: Path) -> Path:
    from regime_core.data import load_examples as load_prepared

    auto = auto_labels(load_prepared("hotpotqa", split="dev", work=work))
    rows = _read(sheet)
    for row in rows:
        row["p1"] = str(int(auto["p1"][row["id"]]))
        row["p2"] = str(int(auto["p2"][row["id"]]))
        row["annotator"] = "synthetic-copy-of-auto"
    return _write(out, rows)
