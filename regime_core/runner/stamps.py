"""Stamps: what ``regime reproduce`` writes after a run succeeds, and the check every reader of a
record makes against it.

``<work>/runs/<run_id>/stamp.json`` holds the run's key and its components
(:mod:`regime_core.runner.keys`), the sha256 of the outputs it left (the executed notebook and
the record), and the ``record_hash`` of each upstream record it read. A run is current only while
all of these still hold; :func:`stamp_problems` says which do not.

A record is a run's record only with its stamp (:func:`verify_record`): ``regime verdicts`` and
``regime book`` check it before reading a number, so a record changed behind the runner's back
(even re-sealed with a valid ``record_hash``) cannot flip a verdict or reach a page.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.runner.records import Record, atomic_write_text, hash_file, load_record
from regime_core.strict_json import read_json_file

STAMP_FILENAME = "stamp.json"
#: record ``inputs`` entries that must equal the stamp's component of the same name
CHECKED_INPUTS: tuple[str, ...] = ("manifest",)


class RecordStampError(ValueError):
    """A record that does not match its run's stamp; the message names both files."""


def stamp_path(work: Path, run_id: str) -> Path:
    return Path(work) / "runs" / run_id / STAMP_FILENAME


def record_file(work: Path, run_id: str) -> Path:
    return paths.results_dir(work) / run_id / "record.json"


def executed_path(work: Path, run_id: str) -> Path:
    return Path(work) / "executed" / f"{run_id}.ipynb"


def read_stamp(work: Path, run_id: str) -> dict[str, Any] | None:
    """The stamp of a run, or None when there is none or it cannot be read (a damaged stamp
    means: run again)."""
    file = stamp_path(work, run_id)
    try:
        stamp = read_json_file(file)
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def output_hashes(work: Path, run_id: str) -> dict[str, str | None]:
    """sha256 of the executed notebook and the record (None when absent), for the stamp."""
    executed, record = executed_path(work, run_id), record_file(work, run_id)
    return {
        "executed": hash_file(executed) if executed.is_file() else None,
        "record": hash_file(record) if record.is_file() else None,
    }


def _record_field(file: Path, name: str) -> Any:
    """A top-level field of a record file, or None when it is absent or unreadable."""
    try:
        body = read_json_file(file)
    except (OSError, ValueError):
        return None
    return body.get(name) if isinstance(body, dict) else None


def record_identity(file: Path) -> str | None:
    """A record's ``record_hash`` (its content without the time it was written), or None
    when it is absent or unreadable; what a downstream stamp remembers of its upstream."""
    value = _record_field(file, "record_hash")
    return value if isinstance(value, str) else None


def input_mismatches(inputs: Any, components: Any) -> list[str]:
    """The record ``inputs`` of :data:`CHECKED_INPUTS` that differ from the stamp's components.

    >>> input_mismatches({"manifest": "a"}, {"manifest": "b"})
    ['manifest']
    >>> input_mismatches({}, {"manifest": "b"}), input_mismatches({"manifest": "a"}, {})
    ([], ['manifest'])
    """
    inputs = inputs if isinstance(inputs, Mapping) else {}
    components = components if isinstance(components, Mapping) else {}
    return [
        name
        for name in CHECKED_INPUTS
        if name in inputs and inputs[name] != components.get(name, "absent")
    ]


def stamp_problems(work: Path, run_id: str, stamp: Mapping[str, Any]) -> list[str]:
    """Why a stamped run's outputs cannot be trusted any more (empty: they can)."""
    problems: list[str] = []
    recorded = stamp.get("outputs")
    if not isinstance(recorded, Mapping):
        return ["its stamp records no outputs (an older format)"]
    current = output_hashes(work, run_id)
    if current["executed"] is None:
        problems.append("its executed notebook is missing")
    changed = [n for n, digest in current.items() if digest and recorded.get(n) != digest]
    if changed:
        problems.append(f"its {' and '.join(changed)} changed since it was written")
    if stamp.get("record") and current["record"] is None:
        problems.append("its record is missing")
    if current["record"] is not None:
        mismatched = input_mismatches(
            _record_field(record_file(work, run_id), "inputs"), stamp.get("components")
        )
        problems += [f"its record's inputs.{name} differs from its stamp's" for name in mismatched]
    upstream = stamp.get("upstream_records")
    if isinstance(upstream, Mapping):
        for dep, identity in sorted(upstream.items()):
            if record_identity(record_file(work, dep)) != identity:
                problems.append(f"the record of upstream run {dep} changed since it ran")
    return problems


def write_stamp(
    work: Path,
    run_id: str,
    key_info: Mapping[str, Any],
    *,
    seconds: float,
    upstream: tuple[str, ...] = (),
) -> Path:
    """Stamp a finished run: its key and components, its outputs' hashes, its upstream records."""
    record = record_file(work, run_id)
    stamp = {
        "run_id": run_id,
        "key": key_info["key"],
        "components": key_info["components"],
        "record": record.is_file(),
        "outputs": output_hashes(work, run_id),
        "upstream_records": {dep: record_identity(record_file(work, dep)) for dep in upstream},
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    target = stamp_path(work, run_id)
    atomic_write_text(target, json.dumps(stamp, indent=2) + "\n")
    return target


def verify_record(work: Path | str, run_id: str, record: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`RecordStampError` naming the record and its stamp unless the record file of
    ``run_id`` has a stamp, is the one it recorded and has its ``inputs`` (:data:`CHECKED_INPUTS`;
    ``record``: the parsed record, for its inputs)."""
    work_path = Path(work)
    file, stamp_file = record_file(work_path, run_id), stamp_path(work_path, run_id)
    rerun = f"rerun it with `regime reproduce --only {run_id} --force`"
    stamp = read_stamp(work_path, run_id)
    if stamp is None:
        why = "it is missing or unreadable" if stamp_file.exists() else "there is no stamp"
        raise RecordStampError(
            f"{file} has no valid stamp of its run at {stamp_file} ({why}): it was not written "
            f"by a finished `regime reproduce`; {rerun}"
        )
    outputs = stamp.get("outputs")
    stamped = outputs.get("record") if isinstance(outputs, Mapping) else None
    if stamped is None or hash_file(file) != stamped:
        raise RecordStampError(
            f"{file} does not match its run's stamp {stamp_file} (its sha256 is not the one "
            f"the run recorded: the record was edited or replaced after the run); {rerun}"
        )
    inputs = record.get("inputs") if record is not None else _record_field(file, "inputs")
    mismatched = input_mismatches(inputs, stamp.get("components"))
    if mismatched:
        raise RecordStampError(
            f"{file} does not match its run's stamp {stamp_file}: the record's inputs."
            f"{mismatched[0]} is not the stamp's (the data changed while it ran); {rerun}"
        )


def load_stamped_record(work: Path | str, run_id: str) -> Record:
    """The record of ``run_id`` under ``work``, read (:func:`load_record`) and checked against
    its run's stamp (:func:`verify_record`)."""
    record = load_record(record_file(Path(work), run_id))
    verify_record(work, run_id, record)
    return record
