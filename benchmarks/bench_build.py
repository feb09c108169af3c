"""Where a build's time went: each notebook run's wall and CPU seconds, and its encodings.

    python benchmarks/bench_build.py [--work _build/regime] [--json]

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
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_COUNTS = ("n_texts", "n_unique", "n_cached", "n_encoded")


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
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = parser.parse_args(argv)
    try:
        rows = run_rows(args.work)
    except ValueError as err:
        print(f"bench_build: {err}", file=sys.stderr)
        return 2
    encoders = encoder_rows(rows)
    if args.json:
        plain = [{k: v for k, v in r.items() if k != "encodes"} for r in rows]
        print(json.dumps({"runs": plain, "encoders": encoders}, indent=1))
    else:
        print(markdown(rows, encoders))
    return 0


if __name__ == "__main__":
    sys.exit(main())
