"""Datasets of one's own: a ``regime-twohop/1`` file in, any prepared dataset out.

- :func:`prepare_jsonl` (``regime data prepare --jsonl FILE --name NAME``) reads a file in the
  format of :mod:`regime_core.data.twohop` and writes ``NAME.jsonl`` into the prepared store,
  beside the known datasets, with a manifest entry as theirs: the file's name, sha256 and size,
  the counts ``regime data stats`` shows, and every exclusion by reason (each excluded line
  listed). Afterwards every command and experiment accepts ``NAME``
  (:func:`regime_core.data.known_datasets`).
- :func:`export_jsonl` (``regime data export DATASET --jsonl FILE``) writes a prepared dataset,
  built-in or one's own, the toy world included, in that format, atomically.

The two are inverse: exporting a dataset and preparing the file under another name gives the
same canonical examples, field by field (their ``dataset`` aside, and ``source_files``, which
names the file read), so every number computed from them is the same.

``NAME`` must be a :data:`regime_core.inputs.configs.DATASET_NAME`; it may not be ``toyworld``
(it is generated, never prepared), and it replaces one of the three built-in
datasets' prepared examples only with ``replace`` (``--replace``). A name of one's own may be
prepared again, from the same file or another: the entry is then that file's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.data import twohop
from regime_core.data.prepared import (
    MANIFEST_NAME,
    PREPARED_DATASETS,
    TOYWORLD,
    example_counts,
    examples_jsonl,
    load_examples,
    new_manifest,
    per_split,
    read_manifest_if_compatible,
    write_manifest,
)
from regime_core.inputs import check_value
from regime_core.inputs.configs import DATASET_NAME
from regime_core.integrity import (
    atomic_write_bytes,
    output_target,
    read_bytes,
    remove_stale_temporaries,
    sha256_hex,
    write_if_changed,
)
from regime_core.locks import directory_lock
from regime_core.schema import SPLITS, Example


def check_name(name: str, *, replace: bool = False) -> str:
    """``name`` if a file of one's own may be prepared under it, else ``ValueError`` saying
    why (the module docstring's rules).

    >>> check_name("my-data")
    'my-data'
    """
    if name == TOYWORLD:
        raise ValueError(
            "--name toyworld: the toy world is generated, never prepared; choose another name"
        )
    check_value(DATASET_NAME, name, where="--name", field="")
    if name in PREPARED_DATASETS and not replace:
        raise ValueError(
            f"--name {name}: {name} is a built-in dataset; choose another name, or pass "
            f"--replace to replace its prepared examples with this file's (`regime data "
            f"prepare --dataset {name}` prepares it from the raw files again)"
        )
    return name


def prepare_jsonl(
    path: Path | str,
    out_dir: Path | str,
    name: str,
    *,
    replace: bool = False,
    strict: bool = True,
    fill_b_rel: bool = False,
) -> dict[str, Any]:
    """Read the ``regime-twohop/1`` file ``path`` into ``out_dir`` (the prepared store) as the
    dataset ``name``; returns the manifest.

    The file is read and checked before anything is written (a bad line is a ``ValueError``
    naming the file, line and field; ``strict=False`` excludes the lines with broken references
    instead, counting them). ``fill_b_rel``: a line without ``b_rel`` gets the built-in one
    (:func:`regime_core.data.twohop.fill_relation`); the entry's ``filled`` counts it, and
    every passage given as ``text`` (split by the built-in splitter). The other entries of the
    manifest are kept. Deterministic: a rerun writes byte-identical files.
    """
    check_name(name, replace=replace)
    path, out_dir = Path(path), Path(out_dir)
    read = twohop.read_twohop(
        read_bytes(path), path.name, name, strict=strict, fill_b_rel=fill_b_rel
    )
    entry = summarise_read(read, path=path.name, source=str(path), strict=strict)
    payload = examples_jsonl(read.examples)
    entry["examples_file"] = {"path": f"{name}.jsonl", "sha256": sha256_hex(payload)}
    with directory_lock(out_dir, what="regime data prepare --jsonl"):
        remove_stale_temporaries(out_dir)
        manifest_path = out_dir / MANIFEST_NAME
        manifest = read_manifest_if_compatible(manifest_path) or new_manifest()
        write_if_changed(out_dir / f"{name}.jsonl", payload)
        manifest["datasets"] = dict(sorted({**manifest["datasets"], name: entry}.items()))
        return write_manifest(manifest_path, manifest)


def export_jsonl(
    dataset: str, path: Path | str, *, work: Path | str | None = None
) -> dict[str, Any]:
    """Write every example of ``dataset`` (both splits, in the prepared order) to ``path`` in the
    ``regime-twohop/1`` format, atomically; returns what was written (dataset, path, format,
    examples per split, bytes, sha256).

    ``path`` may not lie in the prepared store itself (it would replace a prepared file with
    bytes the manifest does not record); a directory, FIFO or device there is refused
    (:func:`regime_core.integrity.output_target`).
    """
    path = Path(path)
    target = output_target(path)
    store = paths.prepared_dir(work)
    if os.path.realpath(target).startswith(os.path.join(os.path.realpath(store), "")):
        raise ValueError(
            f"--jsonl {path}: that is inside the prepared store {store}; write the export "
            "somewhere else (the store holds only what `regime data prepare` writes)"
        )
    examples = load_examples(dataset, work=None if work is None else Path(work))
    if not examples:
        raise ValueError(f"{dataset} has no prepared example to export")
    payload = twohop_jsonl(examples)
    atomic_write_bytes(path, payload)
    splits = {s: sum(ex.split == s for ex in examples) for s in SPLITS}
    return {
        "dataset": dataset,
        "path": str(path),
        "format": twohop.FORMAT,
        "examples": splits,
        "bytes": len(payload),
        "sha256": sha256_hex(payload),
    }


# --- the regime-twohop/1 form of examples (export) -----------------------------------------------


def example_line(example: Example) -> dict[str, Any]:
    """The ``regime-twohop/1`` object of a canonical example, every field written (pure).

    >>> from regime_core.data import toyworld
    >>> line = example_line(toyworld.generate(toyworld.ToyWorldConfig(n_questions=1))[0])
    >>> list(line) == list(twohop.FIELDS), line["format"]
    (True, 'regime-twohop/1')
    """
    b_rel = (
        None
        if example.relation_sentence is None
        else {"sentence": example.relation_sentence, "source": example.relation_source}
    )
    return {
        "format": twohop.FORMAT,
        "id": example.id,
        "split": example.split,
        "native_type": example.native_type,
        "question": example.question,
        "answer": example.answer,
        "answer_aliases": list(example.answer_aliases),
        "pool": [
            {"id": p.pid, "title": p.title, "sentences": list(p.sentences)} for p in example.pool
        ],
        "bridge_id": example.bridge_pid,
        "target_id": example.target_pid,
        "gold_ids": list(example.gold_pids),
        "parallel": example.parallel,
        "hop_order_rule": example.hop_order_rule,
        "hop2_entity": example.hop2_entity,
        "hop2_aliases": list(example.hop2_aliases),
        "b_rel": b_rel,
    }


def twohop_jsonl(examples: Iterable[Example]) -> bytes:
    """The bytes of a ``regime-twohop/1`` file of ``examples``, in their order (pure)."""
    lines = [
        json.dumps(example_line(ex), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        for ex in examples
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


# --- the manifest entry of a read file -----------------------------------------------------------


def summarise_read(
    read: twohop.TwoHopRead, *, path: str, source: str, strict: bool
) -> dict[str, Any]:
    """The manifest entry of a dataset read from one ``regime-twohop/1`` file (pure): the keys
    ``regime data stats`` shows for the known datasets, plus the format, the file (``path``:
    its name; ``source``: where it was read), the blank lines and every excluded line."""
    examples, excluded = read.examples, read.excluded
    return {
        "origin": "jsonl",
        "format": twohop.FORMAT,
        "strict": strict,
        "questions": per_split([*(ex.split for ex in examples), *(e.split for e in excluded)]),
        **example_counts(examples, [(e.split, e.reason) for e in excluded]),
        "excluded_lines": [
            {"line": e.line, "id": e.id, "split": e.split, "reason": e.reason, "problem": e.problem}
            for e in excluded
        ],
        "type_rules": {},
        "title_match": {},
        "records_read": read.records,
        "filled": dict(read.filled),
        "blank_lines": read.blank_lines,
        "files": [
            {
                "path": path,
                "format": twohop.FORMAT,
                "splits": sorted({ex.split for ex in examples}),
                "sha256": read.sha256,
                "bytes": read.bytes,
                "records": read.records,
                "source": source,
            }
        ],
    }
