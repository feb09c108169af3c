"""Routing latency over every prepared two-hop question: Python and JavaScript, warm and cold.

The paper says routing takes under a millisecond. This times the packaged router (or --model) on
the dev questions of every prepared dataset with regime_core.router.latency, the same code the
router chapter's latency run records, and prints the medians and 99th percentiles. Timings
describe this machine; nothing asserts them.

    python benchmarks/bench_routing_latency.py [--work W] [--model FILE] [--no-js] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from regime_core import config, paths
from regime_core.data import load_examples
from regime_core.router.io import load_router
from regime_core.router.latency import measure_latency, routing_items
from regime_core.router.model import default_router_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="work directory (prepared data)")
    parser.add_argument("--model", type=Path, default=None, help="router JSON (default: packaged)")
    parser.add_argument("--no-js", action="store_true", help="time Python only")
    parser.add_argument("--json", action="store_true", help="print the record's numbers as JSON")
    args = parser.parse_args(argv)
    model_file = args.model or default_router_path()
    items = {
        name: routing_items(load_examples(name, split=config.SPLIT, work=paths.work_dir(args.work)))
        for name in config.DATASETS
    }
    result = measure_latency(items, load_router(model_file), model_file, javascript=not args.no_js)
    numbers = result.to_numbers()
    if args.json:
        print(json.dumps(numbers, indent=2))
        return 0
    print(f"{numbers['n_total']} questions on {numbers['machine']['cpu']}")
    for language, modes in numbers["timings"].items():
        for mode, s in modes.items():
            print(
                f"{language:>10} {mode}: p50 {s['p50_seconds'] * 1e6:8.1f} µs   "
                f"p99 {s['p99_seconds'] * 1e6:8.1f} µs   max {s['max_seconds'] * 1e6:9.1f} µs"
                f"   (n = {s['n']})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
