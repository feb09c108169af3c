"""Where a build's time went: each notebook run's wall and CPU seconds, its encodings, the book.

    python benchmarks/bench_build.py [--work _build/regime] [--book-timing FILE] [--json]

Reads, for every run of the work directory ``W`` (the one ``make book`` fills), the runner's
``W/runs/<run_id>/timing.json`` (wall seconds, the papermill child's user and system CPU
seconds with its kernel's, and one entry per embedding-store call the notebook made). A run
executed before the runner wrote timing files has only its ``stamp.json``: its wall seconds come
from there and its CPU and encode columns are empty ("-"), never zero.

Prints a Markdown table of runs (slowest first) and one of encoders: texts requested, distinct,
found in the store and encoded, summed over runs, and how many encoded texts had been encoded by
another call already (the short keys ``timing.json`` keeps of each encoded text, repeated).
``--json`` prints both as JSON instead.
An engine's encodes (``store.missing``, then ``store.add``) count as the texts ``missing``
handed it.

The book step: ``regime book --timing W/book-timing.json`` (or ``REGIME_BOOK_TIMING=FILE`` in
the environment of any ``regime book`` or ``make book``) makes the build write its phases'
seconds to that file (``book/_ext/regime_book/timing.py``; a normal build writes nothing).
``--book-timing FILE`` reads it, by default ``W/book-timing.json`` when that file exists, and
adds three tables: the phases (startup, read, check, write, finish, total) and their seconds, the
10 pages slowest to read, and the project's directives, roles and event handlers the build called,
by seconds (a directive's seconds include those of what its content parses). ``--json`` gives
them under ``"book"``. With ``--book-timing`` a work directory without runs is not an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_COUNTS = ("n_texts", "n_unique", "n_cached", "n_encoded")
BOOK_TIMING_FORMAT = "regime-book-timing/1"  # regime_book.timing.TIMING_FORMAT
BOOK_TIMING_FILE = "book-timing.json"  # the default, under the work directory
SLOWEST_PAGES = 10


def _read_json(file: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{file}: not readable JSON ({err})") from err
    if not isinstance(loaded, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(loaded).__name__}")
    return loaded


def run_rows(work: Path) -> list[dict[str, Any]]:
    """One row per run directory under ``work/runs``: its timings and encode totals."""
    runs = work / "runs"
    if not runs.is_dir():
        raise ValueError(f"{runs} does not exist: is {work} a build's work directory (--work)?")
    rows = []
    for directory in sorted(p for p in runs.iterdir() if p.is_dir()):
        timing_file, stamp_file = directory / "timing.json", directory / "stamp.json"
        row: dict[str, Any] = {"run": directory.name, "source": None, "wall_seconds": None}
        row.update({"user_seconds": None, "system_seconds": None, "cpu_seconds": None})
        row.update({"n_store_calls": None, "n_texts": None, "n_encoded": None})
        if timing_file.is_file():
            timing = _read_json(timing_file)
            for field in ("wall_seconds", "user_seconds", "system_seconds", "encodes"):
                if field not in timing:
                    raise ValueError(f"{timing_file}: no {field!r} field")
            row["source"] = "timing.json"
            row["wall_seconds"] = float(timing["wall_seconds"])
            row["user_seconds"] = float(timing["user_seconds"])
            row["system_seconds"] = float(timing["system_seconds"])
            row["cpu_seconds"] = round(row["user_seconds"] + row["system_seconds"], 3)
            encodes = timing["encodes"]
            row["n_store_calls"] = len(encodes)
            row["n_texts"] = sum(int(e["n_texts"]) for e in encodes)
            row["n_encoded"] = sum(int(e["n_encoded"]) for e in encodes)
            row["encodes"] = encodes
        elif stamp_file.is_file():
            stamp = _read_json(stamp_file)
            if "seconds" not in stamp:
                raise ValueError(f"{stamp_file}: no 'seconds' field")
            row["source"] = "stamp.json"
            row["wall_seconds"] = float(stamp["seconds"])
        else:
            continue  # a run that never finished once: nothing measured
        rows.append(row)
    rows.sort(key=lambda r: -(r["wall_seconds"] or 0.0))
    return rows


def encoder_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store-call counts summed per (encoder, identity hash, mode), over every run."""
    totals: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        for call in row.get("encodes", []):
            group = (str(call["encoder"]), str(call["identity_hash"]), str(call["mode"]))
            entry = totals.setdefault(
                group,
                {"encoder": group[0], "identity_hash": group[1], "mode": group[2], "runs": []},
            )
            for count in _COUNTS:
                entry[count] = entry.get(count, 0) + int(call[count])
            if row["run"] not in entry["runs"]:
                entry["runs"].append(row["run"])
            entry.setdefault("_keys", []).extend(call.get("encoded_keys", []))
    for entry in totals.values():
        keys = entry.pop("_keys")
        # the store encodes a text once; two runs at once (--jobs) may both miss it
        entry["n_encoded_twice"] = len(keys) - len(set(keys))
    return sorted(totals.values(), key=lambda e: -e["n_encoded"])


def book_rows(timing: dict[str, Any], source: Path) -> dict[str, Any]:
    """A book timing file's phases, its ``SLOWEST_PAGES`` pages slowest to read, and the
    project's code the build called (slowest first); ``ValueError`` naming ``source`` and the
    field when the file is not one ``regime book --timing`` writes."""
    if timing.get("format") != BOOK_TIMING_FORMAT:
        raise ValueError(
            f"{source}: format {timing.get('format')!r}, not {BOOK_TIMING_FORMAT!r}: "
            "is it a file `regime book --timing` wrote?"
        )
    for name in ("phases", "documents", "project"):
        if name not in timing:
            raise ValueError(f"{source}: no {name!r} field")
    try:
        phases = [{"phase": p, "seconds": float(s)} for p, s in timing["phases"].items()]
        pages = [
            {
                "page": page,
                "read_seconds": _float_or_none(entry["read_seconds"]),
                "write_seconds": _float_or_none(entry["write_seconds"]),
            }
            for page, entry in timing["documents"].items()
        ]
        project = [
            {
                "kind": str(u["kind"]),
                "name": str(u["name"]),
                "calls": int(u["calls"]),
                "seconds": float(u["seconds"]),
            }
            for u in timing["project"]
        ]
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        raise ValueError(
            f"{source}: a phase, document or project entry is malformed ({err!r})"
        ) from err
    read = sorted(
        (p for p in pages if p["read_seconds"] is not None), key=lambda p: -p["read_seconds"]
    )
    return {
        "source": str(source),
        "failed": bool(timing.get("failed", False)),
        "warnings": timing.get("warnings"),
        "phases": phases,
        "n_pages_read": len(read),
        "n_pages_written": sum(p["write_seconds"] is not None for p in pages),
        "slowest_reads": read[:SLOWEST_PAGES],
        "project": sorted(
            (u for u in project if u["calls"] > 0), key=lambda u: (-u["seconds"], u["name"])
        ),
    }


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def book_markdown(book: dict[str, Any]) -> str:
    lines = [f"book step ({book['source']}; warnings: {_cell(book['warnings'])}"]
    lines[0] += ", a FAILED build)" if book["failed"] else ")"
    lines += ["", "| phase | seconds |", "|---|---|"]
    lines += [f"| {p['phase']} | {_seconds(p['seconds'])} |" for p in book["phases"]]
    lines.append(f"\npages read: {book['n_pages_read']}, written: {book['n_pages_written']}")
    if book["slowest_reads"]:
        lines += ["", f"| page (the {SLOWEST_PAGES} slowest to read) | read_seconds |"]
        lines[-1] += " write_seconds |"
        lines.append("|---|---|---|")
        for p in book["slowest_reads"]:
            cells = [p["page"], _seconds(p["read_seconds"]), _seconds(p["write_seconds"])]
            lines.append("| " + " | ".join(cells) + " |")
    if book["project"]:
        lines += ["", "| kind | name | calls | seconds |", "|---|---|---|---|"]
        for u in book["project"]:
            lines.append(f"| {u['kind']} | {u['name']} | {u['calls']} | {_seconds(u['seconds'])} |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def markdown(rows: Sequence[dict[str, Any]], encoders: Sequence[dict[str, Any]]) -> str:
    columns = ["run", "wall_seconds", "cpu_seconds", "user_seconds", "system_seconds"]
    columns += ["n_store_calls", "n_texts", "n_encoded", "source"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(r[c]) for c in columns) + " |" for r in rows]
    walls = [r["wall_seconds"] for r in rows]
    cpus = [r["cpu_seconds"] for r in rows if r["cpu_seconds"] is not None]
    lines.append(f"\ntotal wall {sum(walls):.1f} s over {len(rows)} runs; ")
    lines[-1] += f"CPU {sum(cpus):.1f} s over the {len(cpus)} runs with a timing.json"
    if encoders:
        enc_columns = ["encoder", "identity_hash", "mode", *_COUNTS, "n_encoded_twice", "runs"]
        lines += ["", "| " + " | ".join(enc_columns) + " |", "|" + "---|" * len(enc_columns)]
        for e in encoders:
            cells = [_cell(e[c]) for c in enc_columns[:-1]] + [", ".join(e["runs"])]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("_build/regime"))
    parser.add_argument(
        "--book-timing",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"what `regime book --timing FILE` wrote (default: WORK/{BOOK_TIMING_FILE} if any)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = parser.parse_args(argv)
    book_file = args.book_timing
    if book_file is None and (args.work / BOOK_TIMING_FILE).is_file():
        book_file = args.work / BOOK_TIMING_FILE
    try:
        book = book_rows(_read_json(book_file), book_file) if book_file is not None else None
        try:
            rows = run_rows(args.work)
        except ValueError:
            if args.book_timing is None:
                raise
            rows = []  # only the book step was asked for
    except ValueError as err:
        print(f"bench_build: {err}", file=sys.stderr)
        return 2
    encoders = encoder_rows(rows)
    if args.json:
        plain = [{k: v for k, v in r.items() if k != "encodes"} for r in rows]
        print(json.dumps({"runs": plain, "encoders": encoders, "book": book}, indent=1))
    else:
        parts = [markdown(rows, encoders)] if rows or book is None else []
        print("\n\n".join(parts + ([book_markdown(book)] if book is not None else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
