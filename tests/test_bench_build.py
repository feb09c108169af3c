"""benchmarks/bench_build.py on a fixture work directory, and the runner's CPU measurement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import load_benchmark, refused

from regime_core.runner.children import _wait_measured
from regime_core.runner.execution import write_timing


def _bench() -> ModuleType:
    return load_benchmark("bench_build")


def _call(encoder: str, n_texts: int, n_cached: int, keys: list[str]) -> dict[str, object]:
    return {
        "encoder": encoder,
        "identity_hash": f"h-{encoder}",
        "mode": "document",
        "n_texts": n_texts,
        "n_unique": n_texts,
        "n_cached": n_cached,
        "n_encoded": n_texts - n_cached,
        "encoded_keys": keys,
    }


E5_KEYS = [f"k{i}" for i in range(10)]


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "w"
    for run, seconds, calls in [
        ("slow", 9.0, [_call("e5", 10, 0, E5_KEYS), _call("tfidf", 4, 1, ["t0", "t1", "t2"])]),
        ("fast", 2.0, [_call("e5", 10, 8, E5_KEYS[:2])]),  # two already encoded by "slow"
    ]:
        runs_dir = work / "runs" / run
        runs_dir.mkdir(parents=True)
        (runs_dir / "encodes.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
        write_timing(runs_dir, run, seconds, 0, {"user_seconds": 1.5, "system_seconds": 0.25})
        assert not (runs_dir / "encodes.jsonl").exists()  # folded into timing.json
    old = work / "runs" / "old"
    old.mkdir()
    (old / "stamp.json").write_text(json.dumps({"seconds": 5.0}))
    (work / "runs" / "never_finished").mkdir()
    return work


def test_runs_are_listed_slowest_first_with_their_encodes(tmp_path: Path) -> None:
    bench = _bench()
    rows = bench.run_rows(_work(tmp_path))
    assert [r["run"] for r in rows] == ["slow", "old", "fast"]
    slow, old, fast = rows
    assert (slow["wall_seconds"], slow["cpu_seconds"], slow["n_texts"], slow["n_encoded"]) == (
        9.0, 1.75, 14, 13,
    )  # fmt: skip
    assert old["source"] == "stamp.json" and old["cpu_seconds"] is None and old["n_encoded"] is None
    assert fast["n_encoded"] == 2
    e5, tfidf = bench.encoder_rows(rows)
    assert (e5["encoder"], e5["n_texts"], e5["n_cached"], e5["n_encoded"]) == ("e5", 20, 8, 12)
    assert e5["n_encoded_twice"] == 2
    assert e5["runs"] == ["slow", "fast"]
    assert (tfidf["n_cached"], tfidf["n_encoded"], tfidf["n_encoded_twice"]) == (1, 3, 0)


def test_markdown_and_json_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    work = _work(tmp_path)
    assert bench.main(["--work", str(work)]) == 0
    text = capsys.readouterr().out
    assert "| slow | 9.0 | 1.8 |" in text
    assert "| old | 5.0 | - |" in text
    assert "| e5 | h-e5 | document | 20 | 20 | 8 | 12 | 2 | slow, fast |" in text
    assert bench.main(["--work", str(work), "--json"]) == 0
    loaded = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in loaded["runs"]] == ["slow", "old", "fast"]
    assert "encodes" not in loaded["runs"][0]


def test_a_missing_work_directory_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _bench().main(["--work", str(tmp_path / "nowhere")]) == 2
    assert "nowhere/runs does not exist" in capsys.readouterr().err


def test_a_timing_file_without_a_field_is_named(tmp_path: Path) -> None:
    work = _work(tmp_path)
    (work / "runs" / "slow" / "timing.json").write_text(json.dumps({"wall_seconds": 1}))
    with refused(ValueError, names=("slow/timing.json", "user_seconds")):
        _bench().run_rows(work)


def test_a_torn_encode_log_line_is_counted_not_raised(tmp_path: Path) -> None:
    (tmp_path / "encodes.jsonl").write_text(json.dumps(_call("e5", 2, 0, ["a", "b"])) + '\n{"enc')
    write_timing(tmp_path, "r", 1.0, -9, {})
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert (len(timing["encodes"]), timing["unreadable_encode_lines"]) == (1, 1)


def test_the_child_cpu_seconds_are_measured_per_child() -> None:
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", burn + "import sys; sys.stderr.write('done')"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    usage: dict[str, float] = {}
    stderr = _wait_measured(proc, usage)
    assert (proc.returncode, stderr) == (0, "done")
    assert usage["user_seconds"] + usage["system_seconds"] >= 0.3


def _book_timing(file: Path) -> Path:
    """What ``regime book --timing`` writes, for twelve pages (one read, not written)."""
    documents: dict[str, dict[str, float | None]] = {
        f"book/p{i:02d}": {"read_seconds": float(i), "write_seconds": 0.5} for i in range(12)
    }
    documents["book/only_read"] = {"read_seconds": 0.25, "write_seconds": None}
    documents["book/only_written"] = {"read_seconds": None, "write_seconds": 0.125}
    phases = {"startup": 1.0, "read": 70.0, "check": 0.5, "write": 8.0, "finish": 2.0}
    timing = {
        "format": "regime-book-timing/1",
        "builder": "html",
        "parallel": 1,
        "failed": False,
        "warnings": 0,
        "phases": {**phases, "total": 81.5},
        "documents": documents,
        "project": [
            {"kind": "directive", "name": "rec-table", "calls": 7, "seconds": 3.25},
            {"kind": "handler", "name": "doctree-read: figure_alt_text", "calls": 13,
             "seconds": 0.125},
            {"kind": "role", "name": "rec", "calls": 40, "seconds": 4.5},
            {"kind": "directive", "name": "regime-findings", "calls": 0, "seconds": 0.0},
        ],
    }  # fmt: skip
    file.write_text(json.dumps(timing))
    return file


def test_the_book_step_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    work = _work(tmp_path)
    _book_timing(work / "book-timing.json")  # the default place: read without --book-timing
    assert bench.main(["--work", str(work)]) == 0
    text = capsys.readouterr().out
    assert "| slow | 9.0 | 1.8 |" in text  # the runs' table is still there
    phases = text.split("| phase | seconds |\n|---|---|\n")[1].split("\n\n")[0].splitlines()
    assert phases == [
        "| startup | 1.000 |", "| read | 70.000 |", "| check | 0.500 |",
        "| write | 8.000 |", "| finish | 2.000 |", "| total | 81.500 |",
    ]  # fmt: skip
    assert "book-timing.json; warnings: 0)" in text and "pages read: 13, written: 13" in text
    pages = [ln.split(" | ")[0][2:] for ln in text.splitlines() if ln.startswith("| book/")]
    assert pages == [f"book/p{i:02d}" for i in range(11, 1, -1)]  # the 10 slowest to read
    project = text.split("| kind | name | calls | seconds |\n|---|---|---|---|\n")[1].splitlines()
    assert project == [
        "| role | rec | 40 | 4.500 |",
        "| directive | rec-table | 7 | 3.250 |",
        "| handler | doctree-read: figure_alt_text | 13 | 0.125 |",
    ]  # regime-findings was never called
    assert bench.main(["--work", str(work), "--json"]) == 0
    book = json.loads(capsys.readouterr().out)["book"]
    assert [p["phase"] for p in book["phases"]][-1] == "total"
    assert book["slowest_reads"][0] == {"page": "book/p11", "read_seconds": 11.0,
                                        "write_seconds": 0.5}  # fmt: skip
    assert [u["name"] for u in book["project"]] == ["rec", "rec-table", project[2].split(" | ")[1]]


def test_a_book_timing_alone_and_a_wrong_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _bench()
    timing = _book_timing(tmp_path / "t.json")
    assert bench.main(["--work", str(tmp_path / "nowhere"), "--book-timing", str(timing)]) == 0
    text = capsys.readouterr().out
    assert "| read | 70.000 |" in text and "total wall" not in text  # no runs, no runs' table
    timing.write_text(json.dumps({"format": "something-else"}))
    assert bench.main(["--work", str(tmp_path), "--book-timing", str(timing)]) == 2
    assert "t.json: format 'something-else'" in capsys.readouterr().err
    assert bench.main(["--work", str(tmp_path), "--book-timing", str(tmp_path / "no.json")]) == 2
    assert "no.json: not readable JSON" in capsys.readouterr().err
