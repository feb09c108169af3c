"""Expected numbers: our own numbers of the ``quick`` profile, frozen, and checking a run.

``expected_numbers.yml`` (at the top of the repository) holds one number per (run, key) of the
``quick`` profile, each with an absolute tolerance (:data:`TOLERANCE_RULES`). It is generated,
never typed::

    regime reproduce --profile quick --work W
    regime expected freeze --work W

and ``regime expected check --work W`` (or ``tests/test_runner_expected.py``) lists every key
that drifted out of its tolerance.

What is frozen (:func:`freeze`): every number a claim of ``paper_claims.yml`` names
(:func:`claimed_keys`), and every number in a run's first :data:`FROZEN_LEVELS` levels (what it
ran with, its counts and its summaries); invariants check the deeper detail
(``tests/test_runner_expected.py``). Timings are never frozen (:func:`is_timing_key`): a
duration measured on this machine, and the description of the machine, change from one run to
the next on the same inputs, so no tolerance could tell drift from another machine or a busier
one.

The paper's numbers are not here: they are in ``paper_claims.yml`` (:mod:`regime_core.paper`),
judged by :mod:`regime_core.runner.judge`.

>>> tolerance_for("summary.cells_fitted", 12), tolerance_for("hit_q", 0.5)
(1e-06, 0.005)
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.inputs import check_value
from regime_core.inputs.expected_numbers import (
    EXPECTED_NUMBERS,
    EXPECTED_PROFILE,
    EXPECTED_SCHEMA,
    FROZEN_KEY,
    FROZEN_PAIR,
    FROZEN_VALUE,
)
from regime_core.paper import WHY_FIELD, Claim, load_claims
from regime_core.runner.declarations import load_declarations
from regime_core.runner.diagnosis import alternative_specs, node_keys
from regime_core.runner.records import (
    Record,
    Scalar,
    atomic_write_text,
    get_number,
    iter_number_keys,
    load_record,
)
from regime_core.strict_json import read_yaml_file

EXPECTED_NUMBERS_FILE = paths.source_root() / "expected_numbers.yml"  # the checkout's, or shipped


# --- expected numbers ----------------------------------------------------------------------------

#: How each frozen number's absolute tolerance is chosen (text and booleans must be equal).
#: The values absorb the noise of floating point across machines (summation order, BLAS builds,
#: the stopping point of iterative solvers: all far below 1e-3) but catch any real drift: every
#: rate of the quick profile is a mean over at least 40 items (120 when pooled), so one item
#: changing its outcome moves it by at least 1/120 > 0.005.
TOLERANCE_RULES: tuple[tuple[str, str, float, str], ...] = (
    ("int", "integers (counts)", 1e-6, "counts are exact: any change is drift"),
    (
        "real",
        "every other number (rates, differences, CI bounds, p-values, R², coefficients)",
        0.005,
        "below one item of the smallest sample, far above float noise",
    ),
)


FROZEN_LEVELS = 2
"""a run's numbers this many levels deep or less (a dotted key with at most one dot: ``split``,
``train.n``, ``summary.cells_fitted``) are frozen whether or not a claim names them"""

TIMING_LEVELS: frozenset[str] = frozenset({"timings", "machine"})
"""record levels whose numbers are timings or describe the machine (never frozen): the latency
run's ``timings.*`` and ``machine.*``"""
TIMING_SUFFIX = "seconds"
"""a key whose last level is this or ends in _ plus this is a duration (never frozen), e.g.
``worst_warm_p99_seconds``"""


def is_timing_key(key: str) -> bool:
    """Whether the dotted record key ``key`` is a timing of the machine (:data:`TIMING_LEVELS`,
    :data:`TIMING_SUFFIX`), never frozen or compared.

    >>> is_timing_key("timings.python.warm.n"), is_timing_key("worst_warm_p99_seconds")
    (True, True)
    >>> is_timing_key("machine.cores"), is_timing_key("seconds"), is_timing_key("n_total")
    (True, True, False)
    >>> is_timing_key("train.outcome.n"), is_timing_key("bootstrap_seconds_hint")
    (False, False)
    """
    levels = key.split(".")
    last = levels[-1]
    return (
        any(level in TIMING_LEVELS for level in levels)
        or last == TIMING_SUFFIX
        or last.endswith("_" + TIMING_SUFFIX)
    )


def tolerance_for(key: str, value: Scalar) -> float:
    """The absolute tolerance of a frozen number by :data:`TOLERANCE_RULES` (0 for text/bools;
    ``key``: the hook for a per-key rule).

    >>> tolerance_for("summary.cells_fitted", 12), tolerance_for("hit_q", 0.5)
    (1e-06, 0.005)
    >>> tolerance_for("verdict.holds", True)
    0.0
    """
    if isinstance(value, bool | str):
        return 0.0
    if isinstance(value, int):
        return TOLERANCE_RULES[0][2]
    return TOLERANCE_RULES[1][2]


@dataclass(frozen=True)
class Expected:
    """One frozen number: run, dotted key, value and absolute tolerance."""

    run: str
    key: str
    value: Scalar
    tolerance: float


@dataclass(frozen=True)
class Drift:
    """A frozen number the new run does not reproduce (``found`` is ``None`` when missing)."""

    expected: Expected
    found: Scalar | None
    problem: str

    def describe(self) -> str:
        e = self.expected
        return f"{e.run}:{e.key}: expected {e.value!r} ± {e.tolerance:g}, {self.problem}"


def within(expected: Scalar, found: Scalar, tolerance: float) -> bool:
    """Equal for text and booleans; ``|found − expected| <= tolerance`` for numbers.

    >>> within(0.5, 0.503, 0.005), within(0.5, 0.51, 0.005), within(True, 1, 0.0)
    (True, False, False)
    """
    if isinstance(expected, bool | str) or isinstance(found, bool | str):
        return type(expected) is type(found) and expected == found
    return math.isfinite(float(found)) and abs(float(found) - float(expected)) <= tolerance + 1e-12


def compare(expected: Sequence[Expected], records: Mapping[str, Mapping[str, Any]]) -> list[Drift]:
    """Every expected number that is missing from ``records`` (by run id) or out of tolerance.
    No timing (:func:`is_timing_key`) is among ``expected``: :func:`freeze` never freezes one
    and :func:`load_expected` refuses one."""
    drifts: list[Drift] = []
    for item in expected:
        record = records.get(item.run)
        if record is None:
            drifts.append(Drift(item, None, "the run produced no record"))
            continue
        try:
            found = get_number(record, item.key)
        except KeyError:
            drifts.append(Drift(item, None, "the key is missing from the record"))
            continue
        if not within(item.value, found, item.tolerance):
            if isinstance(found, bool | str) or isinstance(item.value, bool | str):
                problem = f"found {found!r}"
            else:
                problem = f"found {found!r} (off by {abs(float(found) - float(item.value)):.3g})"
            drifts.append(Drift(item, found, problem))
    return drifts


def _record_keys(node: Any) -> Iterator[str]:
    """The record keys a claim's ``ours`` (or a diagnosis alternative's) names: its text leaves
    at any depth but ``run``."""
    if isinstance(node, Mapping):
        for field, value in node.items():
            if field != "run":
                yield from _record_keys(value)
    else:
        yield str(node)


def _numbers_named(text: str, run: str) -> Iterator[tuple[str, str]]:
    """``(run, key)`` of each ``{[RUN:]numbers.KEY}`` field of ``text`` (``run`` by default)."""
    for m in WHY_FIELD.finditer(text):
        if m.group("source") == "numbers":
            yield m.group("run") or run, m.group("key")


def claimed_keys(
    claims: Sequence[Claim], records: Mapping[str, Mapping[str, Any]]
) -> set[tuple[str, str]]:
    """Every ``(run, dotted key)`` a claim names, as the claims file writes it: the keys of its
    ``ours``, the ``{numbers.KEY}`` of its ``computed_on``, the keys of each ``diagnosis``
    alternative (its ``ours``, or the comparison fields of its ``node`` in ``records``:
    :func:`~regime_core.runner.diagnosis.node_keys`) and every ``{[RUN:]numbers.KEY}`` field and
    ``when`` key of its ``why``, ``{value}`` filled by each of ``each``. A node its run's record
    lacks (a setting the profile does not run) names nothing."""
    keys: set[tuple[str, str]] = set()
    for claim in claims:
        keys.update((claim.run, key) for key in _record_keys(claim.ours))
        keys.update(_numbers_named(claim.computed_on, claim.run))
        for entry in claim.diagnosis:
            run, body = str(entry["run"]), records.get(str(entry["run"]))
            for _, node, ours in alternative_specs(entry):
                if ours is not None:
                    keys.update((run, key) for key in _record_keys(ours))
                elif body is not None:
                    record = body if isinstance(body, Record) else Record(body)
                    with contextlib.suppress(KeyError):  # a setting the profile did not run
                        keys.update((run, key) for key in node_keys(record, str(node)).values())
        for entry in claim.why:
            run = str(entry.get("run", claim.run))
            for value in (entry.get("each") or {"": ""}).values():
                texts = [str(entry.get(f, "")) for f in ("text", "lead", "none")]
                for text in (t.replace("{value}", str(value)) for t in texts):
                    keys.update(_numbers_named(text, run))
                for key in (
                    str(k).replace("{value}", str(value)) for k in (entry.get("when") or [])[::2]
                ):
                    key_run, _, name = key.rpartition(":")  # RUN:KEY, KEY or paper.KEY
                    if key_run or not key.startswith("paper."):
                        keys.add((key_run or run, name))
    return keys


def freeze(
    records: Mapping[str, Mapping[str, Any]], claims: Sequence[Claim] = ()
) -> list[Expected]:
    """The golden numbers of ``records`` with their tolerances, runs and keys in record order.

    The rule: a number is frozen when a claim of ``claims`` names it (:func:`claimed_keys`) or
    it lies in its run's first :data:`FROZEN_LEVELS` levels (the run's settings, counts and
    summaries), and it is no timing (:func:`is_timing_key`). It reads the claims and the
    records' shape, never their values; invariants check the numbers left out."""
    named = claimed_keys(claims, records)
    frozen: list[Expected] = []
    for run, record in records.items():
        for key in iter_number_keys(record["numbers"]):
            if is_timing_key(key):
                continue
            if key.count(".") >= FROZEN_LEVELS and (run, key) not in named:
                continue
            value = get_number(record, key)
            frozen.append(Expected(run, key, value, tolerance_for(key, value)))
    return frozen


_HEADER = """\
# Our own numbers from the `{profile}` profile, frozen with their absolute tolerances.
# GENERATED; do not edit by hand. Regenerate after an intended change:
#   regime data prepare --work W && regime reproduce --profile {profile} --work W
#   regime expected freeze --work W
# Frozen (regime_core.runner.expected.freeze): every number a claim of paper_claims.yml names,
# and each run's numbers at most {frozen} levels deep; invariants check the rest.
# tests/test_runner_expected.py reruns the profile and lists every number out of tolerance.
# Absolute tolerances (regime_core.runner.expected.TOLERANCE_RULES; text, booleans: equal):
{rules}
# Never frozen: timings and the machine (regime_core.runner.expected.is_timing_key), the keys
# with a level {levels} or a last level `{suffix}` or `*_{suffix}`.
"""


def dump_expected(expected: Sequence[Expected], profile: str = EXPECTED_PROFILE) -> str:
    """The text of ``expected_numbers.yml``: per run, ``key: value`` where the tolerance is the
    one :func:`tolerance_for` gives, else ``key: [value, tolerance]``."""
    rules = "\n".join(
        f"#   {name:<5} {tol:<7g} {what}\n#                 why: {why}"
        for name, what, tol, why in TOLERANCE_RULES
    )
    # one `"key": value` per line (JSON is YAML) keeps diffs readable
    lines = [f"schema: {EXPECTED_SCHEMA}", f"profile: {profile}", "runs:"]
    run = None
    for item in expected:
        if item.run != run:
            run = item.run
            lines.append(f" {json.dumps(run)}:")  # one space a level: the file stays small
        # the tolerance its rule gives is not written again (it follows from the value's type)
        entry = _yaml_scalar(item.value)
        if item.tolerance != tolerance_for(item.key, item.value):
            entry = f"[{entry}, {_yaml_scalar(item.tolerance)}]"
        lines.append(f"  {json.dumps(item.key, ensure_ascii=False)}: {entry}")
    levels = " or ".join(f"`{level}`" for level in sorted(TIMING_LEVELS))
    header = _HEADER.format(
        profile=profile,
        rules=rules,
        levels=levels,
        suffix=TIMING_SUFFIX,
        frozen=FROZEN_LEVELS,
    )
    return header + "\n".join(lines) + "\n"


def _yaml_scalar(value: Scalar) -> str:
    """A record's scalar (finite: :func:`load_record` refuses any other) as YAML 1.1 reads it
    back exactly (PyYAML wants a '.' in every float).

    >>> _yaml_scalar(1e-06), _yaml_scalar(0.1282051282051282), _yaml_scalar("P1-P2+")
    ('1.0e-06', '0.1282051282051282', '"P1-P2+"')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:
            text = f"{mantissa}.0{e}{exponent}"
        return text
    return json.dumps(value, ensure_ascii=False)


def load_expected(path: Path | str | None = None) -> list[Expected]:
    """Parse ``expected_numbers.yml`` (declared: :data:`EXPECTED_NUMBERS`); ``ValueError`` names
    the file, run and key."""
    file = Path(path) if path is not None else EXPECTED_NUMBERS_FILE
    # a non-finite number is refused by the declaration, naming its key
    runs = EXPECTED_NUMBERS.read(read_yaml_file(file, finite=False), where=str(file))["runs"]
    out: list[Expected] = []
    for run, numbers in runs.items():
        for key, frozen in numbers.items():
            where = f"{file}: run {run!r}, key {key!r}"
            check_value(FROZEN_KEY, key, where=where, field="key")
            if is_timing_key(key):
                raise ValueError(
                    f"{where}: the key is a timing of the machine (is_timing_key), which is "
                    "never frozen; refreeze with `regime expected freeze`"
                )
            if isinstance(frozen, list):
                value, tolerance = check_value(FROZEN_PAIR, frozen, where=where, field="entry")
            else:  # a bare value: the tolerance of its rule
                value = check_value(FROZEN_VALUE, frozen, where=where, field="entry")
                tolerance = tolerance_for(key, value)
            out.append(Expected(run, key, value, tolerance))
    return out


# --- a run's work directory against the file -----------------------------------------------------


def declared_records(
    work: Path | str | None = None, declarations: Path | str | None = None
) -> tuple[list[str], dict[str, Record]]:
    """The run ids of ``reproduce.yml`` (``declarations``) and the records of those that have one
    under ``<work>/results``."""
    run_ids = list(load_declarations(declarations).runs)
    results = paths.results_dir(work)
    held = [run for run in run_ids if (results / run / "record.json").is_file()]
    return run_ids, {run: load_record(results / run) for run in held}


def freeze_work(
    work: Path | str | None = None,
    file: Path | str = EXPECTED_NUMBERS_FILE,
    declarations: Path | str | None = None,
) -> tuple[list[Expected], int]:
    """Freeze the numbers :func:`freeze` selects from every declared run's record under ``work``
    into ``file``: the frozen numbers and the count of runs. ``FileNotFoundError`` names the
    runs without a record."""
    run_ids, records = declared_records(work, declarations)
    missing = [r for r in run_ids if r not in records]
    if missing:
        raise FileNotFoundError(
            f"no record for runs {missing}; run `regime reproduce --profile {EXPECTED_PROFILE}"
            + ("" if work is None else f" --work {work}")
            + "` first"
        )
    frozen = freeze(records, load_claims())
    atomic_write_text(Path(file), dump_expected(frozen))
    return frozen, len(records)


def check_work(
    work: Path | str | None = None,
    file: Path | str = EXPECTED_NUMBERS_FILE,
    declarations: Path | str | None = None,
) -> list[Drift]:
    """Every number of ``file`` that the declared runs' records under ``work`` do not reproduce."""
    _, records = declared_records(work, declarations)
    return compare(load_expected(file), records)
