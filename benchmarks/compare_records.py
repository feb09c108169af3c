"""Compare two work directories' results records key by key, and their verdicts.

    python benchmarks/compare_records.py OLD_WORK NEW_WORK [--json OUT]

Every record ``<work>/results/<run>/record.json`` is flattened to dotted keys; the script
prints, per run, how many keys are equal, changed, added and removed, with the changed keys
grouped by their last part (``ci_lo``, ``p_value``, ...), and lists every claim whose verdict or
verdict words differ (``regime verdicts --json`` on each work directory). Timings, the machine
and each record's hashes and creation time are counted apart (they move on every run).

A changed key is *exact* (integers: counts and ranks; text; booleans; anything but reals, which
must not move at all) or a *real* (a float, or a list of them, compared element by element): for
the reals it prints the largest difference and how many exceed the absolute tolerance of
``expected_numbers.yml`` (:func:`regime_core.runner.expected.tolerance_for`).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from regime_core.runner.expected import is_timing_key, tolerance_for

_ALWAYS_MOVE = ("created", "content_sha256", "record_hash")


def flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        out = {}
        for i, value in enumerate(node):
            out.update(flatten(value, f"{prefix}[{i}]"))
        return out
    return {prefix: node}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def real_gap(a: Any, b: Any) -> float | None:
    """``|a − b|`` if both are reals (a float on either side; NaN against NaN is 0), the largest
    over two equally long lists of them; None for anything exact (integers, text, booleans)."""
    if isinstance(a, list) and isinstance(b, list) and a and len(a) == len(b):
        gaps = [real_gap(x, y) for x, y in zip(a, b, strict=True)]
        return None if any(g is None for g in gaps) else max(g for g in gaps if g is not None)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    if not numbers or not (isinstance(a, float) or isinstance(b, float)):
        return None
    return 0.0 if math.isnan(a) and math.isnan(b) else abs(a - b)


def verdicts(work: Path) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "regime_core", "verdicts", "--json", "--work", str(work)],
        capture_output=True,
        text=True,
        check=False,
    )
    claims = json.loads(done.stdout).get("claims", [])
    return {c["id"]: c for c in claims}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report: dict[str, Any] = {"runs": {}, "verdicts": []}
    for record in sorted((args.old / "results").glob("*/record.json")):
        run = record.parent.name
        other = args.new / "results" / run / "record.json"
        if not other.exists():
            report["runs"][run] = {"missing_in_new": True}
            continue
        a = flatten(json.loads(record.read_text()))
        b = flatten(json.loads(other.read_text()))
        volatile = {
            k for k in a.keys() | b.keys()
            if k.rsplit(".", 1)[-1] in _ALWAYS_MOVE or is_timing_key(k)
        }  # fmt: skip
        changed = sorted(k for k in a.keys() & b.keys() - volatile if not same(a[k], b[k]))
        gaps = {k: real_gap(a[k], b[k]) for k in changed}
        reals = {k: gap for k, gap in gaps.items() if gap is not None}
        report["runs"][run] = {
            "keys": len(a.keys() | b.keys()),
            "changed": len(changed),
            "exact_changed": sorted(k for k, gap in gaps.items() if gap is None),
            "reals_changed": len(reals),
            "largest_real_difference": max(reals.values(), default=0.0),
            "reals_beyond_tolerance": sorted(
                k for k, gap in reals.items() if not gap <= tolerance_for(k, 0.0)
            ),
            "added": sorted(b.keys() - a.keys() - volatile),
            "removed": sorted(a.keys() - b.keys() - volatile),
            "volatile": len(volatile),
            "changed_by_last_part": dict(Counter(k.rsplit(".", 1)[-1] for k in changed)),
            "changed_keys": changed,
        }
    old, new = verdicts(args.old), verdicts(args.new)
    for claim_id in old:
        o, n = old[claim_id], new.get(claim_id)
        if n is None or (o["verdict"], o["flags"]) != (n["verdict"], n["flags"]):
            report["verdicts"].append(
                {
                    "id": claim_id,
                    "old": [o["verdict"], o["flags"], o.get("ours_text")],
                    "new": [n["verdict"], n["flags"], n.get("ours_text")] if n else None,
                }
            )
        for label, part in o.get("parts", {}).items():
            new_part = (n or {}).get("parts", {}).get(label)
            if new_part is None or new_part["verdict"] != part["verdict"]:
                report["verdicts"].append(
                    {
                        "id": f"{claim_id} / {label}",
                        "old": part["verdict"],
                        "new": new_part["verdict"] if new_part else None,
                    }
                )
    for run, r in report["runs"].items():
        if r.get("missing_in_new"):
            print(f"{run}: no record in {args.new}")
            continue
        print(
            f"{run}: {r['keys']} keys, {r['changed']} changed ({len(r['exact_changed'])} exact, "
            f"{r['reals_changed']} reals: largest difference {r['largest_real_difference']:.2g}, "
            f"{len(r['reals_beyond_tolerance'])} beyond tolerance), {len(r['added'])} added, "
            f"{len(r['removed'])} removed, {r['volatile']} timings/hashes; changed: "
            f"{r['changed_by_last_part']}"
        )
        for key in r["exact_changed"] + r["reals_beyond_tolerance"]:
            print(f"    {key}")
    print(f"verdicts that changed: {len(report['verdicts'])}")
    for v in report["verdicts"]:
        print(f"  {v['id']}: {v['old']} -> {v['new']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
