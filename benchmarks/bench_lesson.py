"""Time the lesson's steps as a class runs them and write the teachers' page's timings file.

    python benchmarks/bench_lesson.py [--output FILE] [--data-dir D] [--keep]

In a fresh temporary work directory ``W`` it first runs ``regime data prepare --data-dir D
--work W`` (reported, not a lesson step), then each step of :data:`STEPS` in order, the command
the teachers' page shows with ``--work W`` added: the toy world's first run (its passages are
embedded), its rerun (embeddings read from the store), the exercises, and the annotation pair.
The annotation commands run in a class folder beside ``W``, so their file names are the page's
(``sheet.csv``, ``alice.csv``, ``bob.csv``). The two labelled sheets ``kappa`` reads are made,
untimed, from the sampled sheet: ``alice.csv`` and ``bob.csv`` fill ``p1``/``p2`` with two
different fixed patterns of yes and no (they are no one's labels; only the command's time counts).

For every step it records the wall seconds and the one-minute load average (``os.getloadavg``)
before and after; the file also holds the date, the number of cores and a ``machine`` sentence
made from them (e.g. "a machine with 2 CPU cores, one-minute load average 0.4 to 1.1 during the
measurement, the default profile"). The JSON is the format ``load_timings`` of
``regime_core/teaching/plan.py`` reads (``regime-lesson-timings/1``: ``format``, ``measured``,
``machine``, ``steps`` with ``command``, ``seconds``, ``note``), checked with it before anything
is printed or written; the loads, the core count and the prepare step are extra fields it ignores.

It prints the JSON on stdout, or writes it to ``--output`` (the committed one is
``book/start/lesson_timings.json``); the commands' own output goes to stderr. If any command
exits non-zero it stops, names the step and writes nothing. ``--keep`` keeps the temporary
directory (its path is printed on stderr). Timings describe this machine at this load; nothing
asserts them.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "regime-lesson-timings/1"  # regime_core.inputs.lesson_timings.TIMINGS_FORMAT
PROFILE = "default"  # regime reproduce's profile when none is named (runner.declarations)


@dataclass(frozen=True)
class Step:
    """One timed step: its key in the timings file, the command as the page shows it (without
    ``--work``), and what is special about the run."""

    key: str
    command: tuple[str, ...]
    note: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.command)


#: The lesson's steps, in the order a class runs them (the order matters: the rerun and the
#: exercises find the toy world's embeddings in the store; kappa reads the sampled sheet).
STEPS: tuple[Step, ...] = (
    Step(
        "toyworld",
        ("regime", "reproduce", "--only", "toyworld", "--force"),
        "first run: the toy world's passages are embedded",
    ),
    Step(
        "toyworld_rerun",
        ("regime", "reproduce", "--only", "toyworld", "--force"),
        "rerun: embeddings read from the store",
    ),
    Step(
        "exercises",
        ("regime", "reproduce", "--only", "exercises", "--force"),
        "after the toy world: its embeddings are in the store",
    ),
    Step(
        "annotate_sample",
        ("regime", "annotate", "sample", "hotpotqa", "--n", "10", "--out", "sheet.csv"),
    ),
    Step("annotate_kappa", ("regime", "annotate", "kappa", "alice.csv", "bob.csv")),
)
#: The sheet ``annotate_sample`` writes, and the two filled copies ``annotate_kappa`` reads.
SHEET, ANNOTATORS = "sheet.csv", ("alice.csv", "bob.csv")


def machine_sentence(cores: int, loads: Sequence[float], profile: str = PROFILE) -> str:
    """The timings file's ``machine``: cores, the range of the one-minute load average sampled
    during the measurement, and the profile.

    >>> machine_sentence(2, [1.06, 0.4, 0.71])
    'a machine with 2 CPU cores, one-minute load average 0.4 to 1.1 during the measurement, the default profile'
    >>> machine_sentence(1, [3.0, 3.04])
    'a machine with 1 CPU core, one-minute load average 3.0 during the measurement, the default profile'
    """  # noqa: E501
    if not loads:
        raise ValueError("no load average was sampled")
    low, high = f"{min(loads):.1f}", f"{max(loads):.1f}"
    load = low if low == high else f"{low} to {high}"
    plural = "core" if cores == 1 else "cores"
    return (
        f"a machine with {cores} CPU {plural}, one-minute load average {load} during the "
        f"measurement, the {profile} profile"
    )


def timings_document(
    measured: str, cores: int, prepare: dict[str, Any], results: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The timings file's content from the measured steps (each: ``key``, ``command``,
    ``seconds``, ``note``, ``load_before``, ``load_after``); pure."""
    loads = [r[f"load_{when}"] for r in results for when in ("before", "after")]
    steps: dict[str, Any] = {}
    for r in results:
        entry: dict[str, Any] = {"command": r["command"], "seconds": r["seconds"]}
        if r["note"]:
            entry["note"] = r["note"]
        entry["load_average_1min_before"] = r["load_before"]
        entry["load_average_1min_after"] = r["load_after"]
        steps[r["key"]] = entry
    return {
        "format": FORMAT,
        "measured": measured,
        "machine": machine_sentence(cores, loads),
        "cpu_cores": cores,
        "setup": {"prepare": prepare},
        "steps": steps,
    }


def fill_sheet(sheet: Path, target: Path, pattern: int) -> None:
    """Copy of ``sheet`` with ``p1``/``p2`` filled by a fixed pattern (0 or 1), so that two
    copies disagree on some rows and neither is constant; ``annotator`` stays empty (named
    after the file)."""
    with io.StringIO(sheet.read_text(encoding="utf-8"), newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = list(reader.fieldnames or []), list(reader)
    for i, row in enumerate(rows):
        row["p1"] = "yes" if (i + pattern) % 2 == 0 else "no"
        row["p2"] = "yes" if (i // 2 + pattern) % 2 == 0 else "no"
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=fields, quoting=csv.QUOTE_ALL)
    writer.writeheader()
    writer.writerows(rows)
    target.write_text(buffer.getvalue(), encoding="utf-8")


def regime_command() -> list[str]:
    """The ``regime`` of the interpreter running this script (the venv's), else ``-m``."""
    script = Path(sys.executable).parent / "regime"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "regime_core"]


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def timed(argv: Sequence[str], cwd: Path) -> tuple[int, float, float, float]:
    """Run ``argv`` in ``cwd`` (its output to stderr): exit code, wall seconds, load before
    and after."""
    before = _load()
    start = time.perf_counter()
    code = subprocess.run(list(argv), cwd=cwd, stdout=sys.stderr, check=False).returncode
    seconds = time.perf_counter() - start
    return code, seconds, before, _load()


def measure(
    work: Path, classroom: Path, data_dir: Path
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Prepare, then time every step; ``RuntimeError`` naming the first one that fails."""
    regime = regime_command()
    prepare = ["data", "prepare", "--data-dir", str(data_dir), "--work", str(work)]
    print(f"bench_lesson: regime {' '.join(prepare)}", file=sys.stderr)
    code, seconds, before, after = timed([*regime, *prepare], classroom)
    if code != 0:
        raise RuntimeError(f"the data step `regime {' '.join(prepare)}` exited {code}")
    prepared = {
        "command": "regime data prepare --data-dir D",
        "seconds": round(seconds, 2),
        "load_average_1min_before": before,
        "load_average_1min_after": after,
    }
    results = []
    for step in STEPS:
        if step.key == "annotate_kappa":  # untimed: the two annotators' filled sheets
            for pattern, name in enumerate(ANNOTATORS):
                fill_sheet(classroom / SHEET, classroom / name, pattern)
        argv = [*regime, *step.command[1:], "--work", str(work)]
        print(f"bench_lesson: {step.key}: {step.text} --work {work}", file=sys.stderr)
        code, seconds, before, after = timed(argv, classroom)
        if code != 0:
            raise RuntimeError(f"step {step.key!r} (`{step.text}`) exited {code}")
        print(f"bench_lesson: {step.key}: {seconds:.1f} s", file=sys.stderr)
        results.append(
            {
                "key": step.key,
                "command": step.text,
                "seconds": round(seconds, 2),
                "note": step.note,
                "load_before": before,
                "load_after": after,
            }
        )
    return prepared, results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the timings here (e.g. book/start/lesson_timings.json; default: stdout)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="raw datasets for `regime data prepare` (default: REGIME_DATA_DIR, else regime's)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    args = parser.parse_args(argv)

    from regime_core import paths
    from regime_core.teaching.plan import LESSON_PLAN, parse_timings

    waited = {key for activity in LESSON_PLAN for key in activity.timed_steps}
    unknown = sorted(waited - {s.key for s in STEPS})
    if unknown:
        print(f"bench_lesson: the lesson plan waits on {unknown}, not in STEPS", file=sys.stderr)
        return 2
    data_dir = args.data_dir or paths.data_dir()
    measured = datetime.datetime.now(datetime.UTC).date().isoformat()
    cores = os.cpu_count() or 1
    root = Path(tempfile.mkdtemp(prefix="bench_lesson-"))
    work, classroom = root / "work", root / "class"
    classroom.mkdir()
    try:
        prepared, results = measure(work, classroom, data_dir)
    except RuntimeError as err:
        print(f"bench_lesson: {err}; nothing written", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"bench_lesson: kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    document = timings_document(measured, cores, prepared, results)
    parse_timings(document, "bench_lesson")  # the reader's own check, before anything is written
    text = json.dumps(document, indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        print(f"bench_lesson: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
