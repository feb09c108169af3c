"""``python -m tools.bookcheck`` on the tiny build ``book_build`` (conftest, ``tests/fixtures``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tools.bookcheck.__main__ import main


def _clean_build(book_build: Path, target: Path) -> Path:
    """The fixture build with its good pages only."""
    shutil.copytree(book_build, target, ignore=shutil.ignore_patterns("*.html", "*.ipynb"))
    for page in ("good.html", "notebook.html", "index.html", "sub/index.html"):
        shutil.copyfile(book_build / page, target / page)
    shutil.copyfile(book_build / "_sources/notebook.ipynb", target / "_sources/notebook.ipynb")
    return target


def test_json_lists_every_problem_and_exits_1(tmp_path: Path, book_build: Path, capsys) -> None:
    code = main(["--html", str(book_build), "--work", str(tmp_path), "--json"])
    assert code == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["ok"] is False and payload["browser"] is None
    assert payload["counts"] == {
        "warning": 2,
        "traceback": 3,
        "progress": 3,
        "path": 2,
        "markup": 4,
        "link": 3,
        "figure": 2,
        "alt": 2,
        "caption": 2,
        "placeholder": 2,
        "script": 1,
    }
    assert {"page": "alt.html", "kind": "alt", "detail": "no alt text: _images/dot.png"} in (
        payload["problems"]
    )


def test_text_report_of_a_clean_build(tmp_path: Path, book_build: Path, capsys) -> None:
    build = _clean_build(book_build, tmp_path / "html")
    assert main(["--html", str(build), "--work", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "no problems"


def test_figures_of_the_runs_records_under_work(tmp_path: Path, book_build: Path, capsys) -> None:
    build = _clean_build(book_build, tmp_path / "html")
    record = tmp_path / "work" / "results" / "notebook" / "record.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"figures": ["a.png", "b.png"]}), encoding="utf-8")
    assert main(["--html", str(build), "--work", str(tmp_path / "work")]) == 1
    out = capsys.readouterr().out
    assert "notebook.html: figure: the run writes 2 figures (a.png, b.png), 1 image" in out


def test_browser_screenshots_at_the_widths_asked(
    chromium: str, tmp_path: Path, book_build: Path, capsys
) -> None:
    build = _clean_build(book_build, tmp_path / "_build" / "html")
    args = ["--html", str(build), "--work", str(tmp_path), "--browser"]
    assert main([*args, "--width", "390", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    shots = tmp_path / "_build" / "screenshots"  # beside the build, by default
    assert payload["browser"]["screenshots"] == str(shots)
    assert sorted(p.relative_to(shots).as_posix() for p in shots.rglob("*.png")) == [
        "390/good.png",
        "390/notebook.png",
        "390/sub/index.png",
    ]


def test_a_missing_build_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["--html", str(tmp_path / "nothing")]) == 2
    assert "build the book first" in capsys.readouterr().err
