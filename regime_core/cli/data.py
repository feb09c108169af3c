"""``regime data prepare|stats|export|fetch``.

``prepare`` reads the known datasets' raw files (``--data-dir``), or, with ``--jsonl FILE
--name NAME``, one file of one's own in the ``regime-twohop/1`` format
(:mod:`regime_core.data.twohop`); ``export`` writes any prepared dataset in that format.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from regime_core import paths
from regime_core.cli._common import (
    add_dataset_argument,
    add_file_option,
    add_json_option,
    add_work_option,
    name_value,
    path_value,
    print_result,
)
from regime_core.data import fetch as fetch_module
from regime_core.data import prepare
from regime_core.data.custom import export_jsonl, prepare_jsonl
from regime_core.data.discovery import UNREADABLE_KEY
from regime_core.data.prepared import PREPARED_DATASETS, dataset_stats, load_manifest


def register(subparsers: Any) -> None:
    data = subparsers.add_parser("data", help="prepare, summarise and fetch the datasets")
    sub = data.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")

    p = sub.add_parser(
        "prepare",
        help="raw files (or one regime-twohop/1 file of your own) -> canonical two-hop examples "
        "+ manifest",
    )
    add_file_option(p, "--data-dir", "raw data (REGIME_DATA_DIR)")
    p.add_argument(
        "--jsonl",
        type=path_value,
        default=None,
        metavar="FILE",
        help="read this regime-twohop/1 file (the book's page 'Your own data') instead of the "
        "raw datasets; needs --name",
    )
    p.add_argument(
        "--name",
        type=name_value,
        default=None,
        help="the dataset name the --jsonl file is prepared as (lower-case letters, digits, _ "
        "and -); every command then accepts it",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="with --jsonl: let --name be a built-in dataset, whose prepared examples the file's "
        "replace",
    )
    add_work_option(p)
    p.add_argument(
        "--dataset",
        action="append",
        choices=PREPARED_DATASETS,
        default=None,
        help="dataset to prepare (repeatable; default: all three)",
    )
    p.add_argument(
        "--split",
        action="append",
        default=[],
        metavar="PATH=SPLIT",
        help="split of a file the registry does not know (path relative to the data dir)",
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="exclude (and count) records with broken references instead of failing (with "
        "--jsonl: lines, listed with their line in the manifest)",
    )
    p.add_argument(
        "--fill-b-rel",
        action="store_true",
        help="with --jsonl: give a line without b_rel the built-in B_rel (the first bridge "
        "sentence naming the hop-2 entity, its target's title or an alias; counted in the "
        "manifest's filled); a line with b_rel, null included, keeps it",
    )
    p.add_argument(
        "--exclude-unreadable",
        action="store_true",
        help="leave out a data file that cannot be read (dangling link, FIFO, directory, no "
        "permission) and list it in the manifest's unreadable_files, instead of failing",
    )
    add_json_option(p, help="print the manifest as one JSON object")
    p.set_defaults(func=_prepare)

    s = sub.add_parser("stats", help="counts of a prepared dataset")
    add_dataset_argument(s)
    add_work_option(s)
    add_json_option(s)
    s.set_defaults(func=_stats)

    e = sub.add_parser(
        "export", help="write a prepared dataset (or the toy world) as a regime-twohop/1 file"
    )
    add_dataset_argument(e)
    e.add_argument(
        "--jsonl", type=path_value, required=True, metavar="FILE", help="the file to write"
    )
    add_work_option(e)
    add_json_option(e, help="print what was written as one JSON object")
    e.set_defaults(func=_export)

    f = sub.add_parser("fetch", help="download the official full files (needs internet)")
    f.add_argument("datasets", nargs="*", metavar="DATASET", help="default: all three")
    add_file_option(f, "--data-dir", "where to put them")
    f.add_argument(
        "--sha256",
        action="append",
        default=[],
        metavar="NAME=HEX",
        help="expected sha256 of an official file; overrides checksums.json",
    )
    add_json_option(f)
    f.set_defaults(func=_fetch)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    """``KEY=VALUE`` options as a dict; a malformed one, or a key given twice with two
    values, is an error (the last one would silently win)."""
    out: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip() or not val.strip():
            raise ValueError(f"{flag} expects KEY=VALUE, got {value!r}")
        if out.get(key, val) != val:
            raise ValueError(f"{flag} {key}: given twice, as {out[key]!r} and {val!r}")
        out[key] = val
    return out


def _prepare(args: argparse.Namespace) -> int:
    if args.jsonl is not None or args.name is not None or args.replace:
        return _prepare_jsonl(args)
    if args.fill_b_rel:
        raise ValueError(
            "--fill-b-rel: an option of --jsonl FILE --name NAME; the raw datasets' B_rel "
            "comes from their converters"
        )
    data_dir = paths.data_dir(args.data_dir)
    out_dir = paths.prepared_dir(args.work)
    started = time.perf_counter()
    manifest = prepare(
        data_dir,
        out_dir,
        tuple(args.dataset or PREPARED_DATASETS),
        splits=_pairs(args.split, "--split"),
        strict=not args.lenient,
        exclude_unreadable=args.exclude_unreadable,
    )
    seconds = time.perf_counter() - started

    def text() -> str:
        names = args.dataset or PREPARED_DATASETS
        tables = [_table(dataset_stats(manifest, name)) for name in names]
        left_out = [
            f"left out (cannot be read): {item['path']}: {item['reason']}"
            for item in manifest.get(UNREADABLE_KEY, [])
        ]
        head = f"prepared {data_dir} -> {out_dir} in {seconds:.1f} s"
        return "\n\n".join([head, *(["\n".join(left_out)] if left_out else []), *tables])

    print_result(args.json, manifest, text, sort_keys=True)
    return 0


def _prepare_jsonl(args: argparse.Namespace) -> int:
    if args.jsonl is None or args.name is None:
        missing = "--jsonl FILE" if args.jsonl is None else "--name NAME"
        raise ValueError(
            f"{missing} is missing: a file of your own is prepared with --jsonl FILE --name NAME"
        )
    others = [
        flag
        for flag, given in (
            ("--data-dir", args.data_dir is not None),
            ("--dataset", bool(args.dataset)),
            ("--split", bool(args.split)),
            ("--exclude-unreadable", args.exclude_unreadable),
        )
        if given
    ]
    if others:
        raise ValueError(
            f"{', '.join(others)}: options of the raw datasets, which --jsonl does not read; "
            "a regime-twohop/1 line states its own split"
        )
    out_dir = paths.prepared_dir(args.work)
    started = time.perf_counter()
    manifest = prepare_jsonl(
        args.jsonl,
        out_dir,
        args.name,
        replace=args.replace,
        strict=not args.lenient,
        fill_b_rel=args.fill_b_rel,
    )
    seconds = time.perf_counter() - started

    def text() -> str:
        entry = manifest["datasets"][args.name]
        head = f"prepared {args.jsonl} as {args.name} -> {out_dir} in {seconds:.1f} s"
        lines = [f"left out: line {e['line']}: {e['problem']}" for e in entry["excluded_lines"]]
        if entry["blank_lines"]:
            lines.append(f"blank lines skipped: {entry['blank_lines']}")
        lines += [f"filled: {key}: {n}" for key, n in entry["filled"].items() if n]
        table = _table(dataset_stats(manifest, args.name))
        return "\n\n".join([head, *(["\n".join(lines)] if lines else []), table])

    print_result(args.json, manifest, text, sort_keys=True)
    return 0


def _export(args: argparse.Namespace) -> int:
    result = export_jsonl(args.dataset, args.jsonl, work=args.work)
    counts = ", ".join(f"{n} {split}" for split, n in result["examples"].items())
    text = f"exported {args.dataset} ({counts}) -> {result['path']}  sha256 {result['sha256']}"
    print_result(args.json, result, text, sort_keys=True)
    return 0


def _stats(args: argparse.Namespace) -> int:
    # toyworld is generated, not prepared: its stats need no manifest
    manifest = {} if args.dataset == "toyworld" else load_manifest(args.work)
    stats = dataset_stats(manifest, args.dataset)
    print_result(args.json, stats, lambda: _table(stats), sort_keys=True)
    return 0


def _table(stats: dict[str, Any]) -> str:
    """A readable summary: one row per count, splits as columns."""
    splits = list(stats["questions"])
    rows = [
        (f"{stats['dataset']}", *splits),
        ("questions", *(str(stats["questions"][s]) for s in splits)),
        ("two-hop", *(str(stats["two_hop"][s]) for s in splits)),
    ]
    for reason in stats["excluded"]:
        per_split = stats.get("excluded_by_split", {})
        rows.append(
            (f"  excluded: {reason}", *(str(per_split.get(s, {}).get(reason, 0)) for s in splits))
        )
    width = max(len("parallel (comparison)"), *(len(r[0]) for r in rows)) + 2
    lines = [r[0].ljust(width) + "".join(c.rjust(8) for c in r[1:]) for r in rows]

    def counts(title: str, counter: dict[str, int]) -> str:
        body = ", ".join(f"{k} {v}" for k, v in counter.items()) or "-"
        return f"{title.ljust(width)}{body}"

    lines += [
        counts("two-hop by type", stats["by_type"]),
        counts("parallel (comparison)", {"all": stats["parallel"]}),
        counts("hop-order rules", stats.get("hop_order_rules", {})),
        counts("B_rel sources", stats.get("relation_sources", {})),
    ]
    if stats.get("type_rules"):
        lines.append(counts("IRCoT typing rules", stats["type_rules"]))
    if stats.get("title_match"):
        lines.append(counts("2Wiki title match", stats["title_match"]))
    if any(stats.get("filled", {}).values()):
        lines.append(counts("filled by the rules", stats["filled"]))
    lines.append(counts("corpus passages", {"distinct": stats["corpus_passages"]}))
    return "\n".join(lines)


def _fetch(args: argparse.Namespace) -> int:
    data_dir = paths.data_dir(args.data_dir)
    results = fetch_module.fetch(
        tuple(args.datasets or PREPARED_DATASETS),
        data_dir,
        sha256=_pairs(args.sha256, "--sha256"),
        registry=fetch_module.OFFICIAL_FILES,
    )
    payload = {"data_dir": str(data_dir), "files": [r.__dict__ for r in results]}
    text = "\n".join(f"{r.status:10s} {r.path}  sha256 {r.sha256}" for r in results)
    print_result(args.json, payload, text, sort_keys=True)
    return 0
