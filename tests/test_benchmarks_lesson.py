"""benchmarks/bench_lesson.py: the machine sentence comes from the measured loads and cores, the
file it writes is one the teachers' page reads, and its steps are the ones the plan waits on."""

from __future__ import annotations

import csv
import doctest
from pathlib import Path

from helpers import load_benchmark, refused

from regime_core.teaching import plan


def test_the_machine_sentence_is_made_from_cores_and_loads() -> None:
    sentence = load_benchmark("bench_lesson").machine_sentence
    assert sentence(2, [1.06, 0.4, 0.71]).startswith(
        "a machine with 2 CPU cores, one-minute load average 0.4 to 1.1 during the measurement"
    )
    assert "1 CPU core, one-minute load average 3.0 during" in sentence(1, [3.0, 3.04])
    with refused(ValueError, names=("load average")):
        sentence(2, [])
    assert doctest.testmod(load_benchmark("bench_lesson")).failed == 0


def test_the_document_is_a_timings_file_of_every_planned_step() -> None:
    bench = load_benchmark("bench_lesson")
    results = [
        {
            "key": s.key,
            "command": s.text,
            "seconds": 1.5,
            "note": s.note,
            "load_before": 0.5,
            "load_after": 1.2,
        }
        for s in bench.STEPS
    ]
    prepare = {"command": "regime data prepare --data-dir D", "seconds": 9.0}
    document = bench.timings_document("2026-12-07", 2, prepare, results)
    timings = plan.parse_timings(document, "bench")
    assert "2 CPU cores, one-minute load average 0.5 to 1.2" in timings.machine
    assert {s for a in plan.LESSON_PLAN for s in a.timed_steps} <= set(timings.steps)
    for step in timings.steps.values():
        assert step.command.startswith("regime ") and "--work" not in step.command


def test_the_two_filled_sheets_are_valid_and_differ(tmp_path: Path) -> None:
    fill_sheet = load_benchmark("bench_lesson").fill_sheet
    sheet = tmp_path / "sheet.csv"
    columns = ["id", "question", "p1", "p2", "annotator", "sample"]
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for i in range(4):
            writer.writerow({"id": f"q{i}", "question": "a, b", "p1": "", "p2": ""})
    fill_sheet(sheet, tmp_path / "alice.csv", 0)
    fill_sheet(sheet, tmp_path / "bob.csv", 1)
    with (tmp_path / "alice.csv").open(newline="", encoding="utf-8") as f:
        alice = list(csv.DictReader(f))
    with (tmp_path / "bob.csv").open(newline="", encoding="utf-8") as f:
        bob = list(csv.DictReader(f))
    assert [r["p1"] for r in alice] == ["yes", "no", "yes", "no"]
    assert [r["p2"] for r in alice] == ["yes", "yes", "no", "no"]
    assert all(a["p1"] != b["p1"] and a["p2"] != b["p2"] for a, b in zip(alice, bob, strict=True))
    assert [r["question"] for r in alice] == ["a, b"] * 4
