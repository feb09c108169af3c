"""The annotation activity: students label P1 and P2 by hand, then compare with each other and with
the automatic predicates of :mod:`regime_core.data.regimes` (Cohen's kappa).

**The sheet** (:func:`write_sheet`, ``regime annotate sample``) is a UTF-8 CSV with one row per
question; its columns, what each means and the labels ``p1``/``p2`` allow (case and surrounding
spaces ignored) are declared once, by :data:`regime_core.inputs.annotation_sheet.ROW`.

**The check** (:func:`kappa_report`, ``regime annotate kappa``) reads one or more sheets of the
same sample, recomputes P1 and P2 from the prepared data by id (``auto``), and reports Cohen's
kappa (:func:`regime_core.agreement.cohens_kappa`) for each predicate between each pair of
annotators and between each annotator and ``auto``, with every disagreement listed. Malformed
sheets (missing columns, unknown or missing ids, bad values, sheets of different samples) raise
``ValueError`` naming the file, the row and the column (as a field).

No human label is ever shipped or generated here: the labels come from the sheets you pass.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from regime_core import config
from regime_core.agreement import cohens_kappa
from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules, hop2_names, p1, p2
from regime_core.experiments.sampling import ids_hash, sample_ids
from regime_core.inputs import InputError, check_value
from regime_core.inputs.annotation_sheet import FALSE_VALUES as FALSE_VALUES  # the CLI says them
from regime_core.inputs.annotation_sheet import ROW, SAMPLE_ID, TRUE_VALUES
from regime_core.inputs.configs import integer
from regime_core.integrity import read_text
from regime_core.schema import Example

#: The paper's inter-annotator check used 50 questions.
SHEET_SIZE: int = 50
PREDICATES: tuple[str, ...] = ("p1", "p2")
AUTO: str = "auto"  # the name of the automatic annotator (regimes.p1 / regimes.p2)
SHEET_COLUMNS: tuple[str, ...] = tuple(field.name for field in ROW.fields)
NAME_SEPARATOR = " | "
_STREAM = "annotate"  # the sampling stream: independent of the experiments' samples


# --- sampling and writing --------------------------------------------------------------------


@dataclass(frozen=True)
class SampleSpec:
    """Which questions a sheet holds: ``n`` ids of ``dataset``/``split`` drawn with ``seed``;
    ``id_hash`` pins the drawn ids (it changes if the prepared data does)."""

    dataset: str
    split: str
    seed: int
    n: int
    id_hash: str

    @property
    def sample_id(self) -> str:
        return f"{self.dataset}-{self.split}-seed{self.seed}-n{self.n}-{self.id_hash}"


def draw_sample(
    examples: Sequence[Example], n: int = SHEET_SIZE, *, seed: int = config.SEED
) -> tuple[SampleSpec, list[Example]]:
    """A seeded sample of ``n`` examples (sorted by id) and its spec; pure.

    The examples are of one dataset and split (as :func:`load_split` and :func:`kappa_report`
    give them), the spec's. ``n`` larger than the examples takes all.
    """
    check_value(integer(1), n, where="draw_sample", field="n")  # `regime annotate sample --n`
    dataset, split = examples[0].dataset, examples[0].split
    chosen = sample_ids([ex.id for ex in examples], n, seed=seed, stream=_STREAM)
    by_id = {ex.id: ex for ex in examples}
    picked = [by_id[i] for i in chosen]
    spec = SampleSpec(dataset, split, seed, n, ids_hash(chosen)[:10])
    return spec, picked


def sheet_rows(
    spec: SampleSpec, examples: Sequence[Example], rules: RegimeRules = DEFAULT_REGIME_RULES
) -> list[dict[str, str]]:
    """The sheet's rows, ``p1``/``p2``/``annotator`` left empty; pure."""
    rows = []
    for ex in examples:
        others = [name for name in hop2_names(ex, rules) if name != ex.hop2_entity]
        rows.append(
            {
                "id": ex.id,
                "question": ex.question,
                "hop2_entity": ex.hop2_entity,
                "hop2_other_names": NAME_SEPARATOR.join(others),
                "bridge_title": ex.bridge.title,
                "bridge_text": ex.bridge.text,
                "p1": "",
                "p2": "",
                "annotator": "",
                "sample": spec.sample_id,
            }
        )
    return rows


def write_sheet(path: Path | str, rows: Sequence[Mapping[str, str]]) -> Path:
    """Write the rows as CSV (all fields quoted, so spreadsheets keep long texts intact)."""
    from regime_core.integrity import atomic_write_bytes

    path = Path(path)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(SHEET_COLUMNS), quoting=csv.QUOTE_ALL)
    writer.writeheader()
    writer.writerows(rows)
    # atomic: an interrupted write never leaves half a sheet in place of a filled-in one
    atomic_write_bytes(path, buffer.getvalue().encode("utf-8"))
    return path


def load_split(dataset: str, split: str, work: Path | str | None = None) -> list[Example]:
    """The examples a sheet is drawn from (``toyworld`` is generated, the rest prepared)."""
    from regime_core.data import load_examples

    examples = load_examples(dataset, split=split, work=None if work is None else Path(work))
    if not examples:
        raise ValueError(f"no {split} examples of {dataset}; run `regime data prepare` first")
    return examples


def make_sheet(
    dataset: str,
    out: Path | str,
    *,
    n: int = SHEET_SIZE,
    seed: int = config.SEED,
    split: str = config.SPLIT,
    work: Path | str | None = None,
) -> tuple[Path, SampleSpec]:
    """``regime annotate sample``: draw and write a sheet; return its path and sample spec."""
    spec, picked = draw_sample(load_split(dataset, split, work), n, seed=seed)
    return write_sheet(out, sheet_rows(spec, picked)), spec


# --- reading and validating sheets -----------------------------------------------------------


@dataclass(frozen=True)
class Sheet:
    """One annotator's validated labels: ``labels[predicate][id]``."""

    path: str
    annotator: str
    spec: SampleSpec
    ids: tuple[str, ...]
    labels: Mapping[str, Mapping[str, bool]]


def read_sheet(path: Path | str) -> Sheet:
    """Read and validate one filled sheet: every row through :data:`ROW` (ids, labels, the
    sample id), then what a row cannot say (ids unique, one sample, one annotator).

    Row numbers in messages are the spreadsheet's (the header is row 1).
    """
    path = Path(path)
    # read without blocking: a FIFO or device named as the sheet is refused, never waited on
    with io.StringIO(read_text(path).removeprefix("\ufeff"), newline="") as f:
        reader = csv.DictReader(f, restval="")
        reader.fieldnames = [h.strip() for h in (reader.fieldnames or [])]
        records = list(reader)
    if not records:
        raise ValueError(f"{path}: the sheet has no rows")
    rows: dict[str, dict[str, Any]] = {}  # id -> its row, read
    first_row: dict[str, int] = {}
    names: dict[str, int] = {}
    for row_number, record in enumerate(records, start=2):
        where = f"{path}, row {row_number}"
        if None in record:  # more cells than header columns: the labels may have shifted
            raise ValueError(f"{where}: more cells than columns; check quoting of long texts")
        cells = {key: cell.strip() for key, cell in record.items()}
        cells.update({p: cells[p].lower() for p in PREDICATES if p in cells})  # case ignored
        row = ROW.read(cells, where=where)
        if row["id"] in rows:
            raise InputError(where, "id", f"{row['id']!r} repeats row {first_row[row['id']]}")
        first = next(iter(rows.values()), row)
        if row["sample"] != first["sample"]:
            raise InputError(
                where, "sample", f"{row['sample']!r} differs from {first['sample']!r} (row 2): "
                "rows of different samples were mixed",
            )  # fmt: skip
        rows[row["id"]], first_row[row["id"]] = row, row_number
        if row["annotator"]:
            names.setdefault(row["annotator"], row_number)
    if len(names) > 1:
        shown = ", ".join(f"{n!r} (row {r})" for n, r in names.items())
        raise InputError(str(path), "annotator", f"names {shown}: one sheet per annotator")
    annotator = next(iter(names)) if names else path.stem
    if annotator == AUTO:
        raise InputError(str(path), "annotator", f"{AUTO!r} is reserved for the predicates")
    sample = cast(re.Match[str], re.fullmatch(SAMPLE_ID, first["sample"]))  # ROW checked it
    dataset, split, seed, n, id_hash = sample.groups()
    spec = SampleSpec(dataset, split, int(seed), int(n), id_hash)
    labels = {p: {qid: row[p] in TRUE_VALUES for qid, row in rows.items()} for p in PREDICATES}
    return Sheet(str(path), annotator, spec, tuple(rows), labels)


def check_sheets(sheets: Sequence[Sheet], sample_ids_: Sequence[str]) -> None:
    """Every sheet holds exactly the sample's ids and all sheets are of one sample."""
    first = sheets[0]
    expected = set(sample_ids_)
    annotators: dict[str, str] = {}
    for sheet in sheets:
        if sheet.spec != first.spec:
            raise InputError(
                f"{sheet.path}, row 2", "sample",
                f"{sheet.spec.sample_id!r} is not the sample of {first.path} "
                f"({first.spec.sample_id!r}); compare sheets of one sample",
            )  # fmt: skip
        if sheet.annotator in annotators:
            raise InputError(
                sheet.path, "annotator",
                f"{sheet.annotator!r} also annotated {annotators[sheet.annotator]}; give each "
                "sheet its annotator's name",
            )  # fmt: skip
        annotators[sheet.annotator] = sheet.path
        for row_number, qid in enumerate(sheet.ids, start=2):
            if qid not in expected:
                raise InputError(
                    f"{sheet.path}, row {row_number}", "id",
                    f"{qid!r} is not a question of sample {sheet.spec.sample_id}",
                )  # fmt: skip
        absent = sorted(expected - set(sheet.ids))
        if absent:
            raise InputError(
                sheet.path, "id",
                f"misses {len(absent)} question(s) of the sample (e.g. {absent[:3]}); keep "
                "every row of the sheet",
            )  # fmt: skip


# --- kappa -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairAgreement:
    predicate: str
    a: str
    b: str
    n: int
    kappa: float  # NaN when both raters use one and the same label throughout
    agreement: float  # observed share of equal labels


@dataclass(frozen=True)
class Disagreement:
    predicate: str
    id: str
    question: str
    labels: Mapping[str, bool]  # rater -> label, for every rater (AUTO included)


@dataclass(frozen=True)
class KappaReport:
    sample_id: str
    raters: tuple[str, ...]  # the annotators, then AUTO
    pairs: tuple[PairAgreement, ...]
    disagreements: tuple[Disagreement, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``regime annotate kappa --json`` prints (an undefined kappa, NaN, as
        null: :func:`regime_core.cli._common.json_text`)."""
        return {
            "sample": self.sample_id,
            "raters": list(self.raters),
            "pairs": [asdict(p) for p in self.pairs],
            "disagreements": [
                {**asdict(d), "labels": {k: int(v) for k, v in d.labels.items()}}
                for d in self.disagreements
            ],
        }

    def to_text(self) -> str:
        lines = [f"sample {self.sample_id}: raters {', '.join(self.raters)}", ""]
        lines.append(
            f"{'predicate':10}{'rater a':>16}{'rater b':>16}{'n':>6}{'kappa':>8}{'agree':>8}"
        )
        for p in self.pairs:
            kappa = "undef" if math.isnan(p.kappa) else f"{p.kappa:.2f}"
            lines.append(f"{p.predicate:10}{p.a:>16}{p.b:>16}{p.n:>6}{kappa:>8}{p.agreement:>8.0%}")
        if any(math.isnan(p.kappa) for p in self.pairs):
            lines.append("(undef: both raters gave one and the same label to every question)")
        lines.append("")
        if not self.disagreements:
            lines.append("no disagreements")
        for d in self.disagreements:
            said = ", ".join(f"{k}={int(v)}" for k, v in d.labels.items())
            lines.append(f"{d.predicate} {d.id}: {said}  | {d.question}")
        return "\n".join(lines)


def auto_labels(
    examples: Sequence[Example], rules: RegimeRules = DEFAULT_REGIME_RULES
) -> dict[str, dict[str, bool]]:
    """``{predicate: {id: label}}`` from :func:`regime_core.data.regimes.p1`/``p2``; pure."""
    return {
        "p1": {ex.id: p1(ex, rules) for ex in examples},
        "p2": {ex.id: p2(ex, rules) for ex in examples},
    }


def agreement_report(
    raters: Mapping[str, Mapping[str, Mapping[str, bool]]],
    ids: Sequence[str],
    questions: Mapping[str, str],
    sample_id: str = "",
) -> KappaReport:
    """Kappa for each predicate between every pair of raters, and the disagreements; pure.

    ``raters[name][predicate][id]`` is a label; every rater labels every id in ``ids``.
    """
    names = tuple(raters)
    pairs = []
    for predicate in PREDICATES:
        for a, b in itertools.combinations(names, 2):
            left = [raters[a][predicate][i] for i in ids]
            right = [raters[b][predicate][i] for i in ids]
            agreement = sum(x == y for x, y in zip(left, right, strict=True)) / len(ids)
            pairs.append(
                PairAgreement(predicate, a, b, len(ids), cohens_kappa(left, right), agreement)
            )
    disagreements = []
    for predicate in PREDICATES:
        for i in ids:
            said = {name: raters[name][predicate][i] for name in names}
            if len(set(said.values())) > 1:
                disagreements.append(Disagreement(predicate, i, questions.get(i, ""), said))
    return KappaReport(sample_id, names, tuple(pairs), tuple(disagreements))


def kappa_report(
    paths_: Sequence[Path | str],
    *,
    work: Path | str | None = None,
    examples: Sequence[Example] | None = None,
    rules: RegimeRules = DEFAULT_REGIME_RULES,
) -> KappaReport:
    """``regime annotate kappa``: read and check the sheets, recompute P1/P2 from the prepared
    data (or from ``examples``), and compare every pair of raters. ``paths_`` names one sheet
    or more (the command takes at least one)."""
    sheets = [read_sheet(p) for p in paths_]
    spec = sheets[0].spec
    source = list(examples) if examples is not None else load_split(spec.dataset, spec.split, work)
    source = [ex for ex in source if ex.dataset == spec.dataset and ex.split == spec.split]
    redrawn, picked = draw_sample(source, spec.n, seed=spec.seed) if source else (None, [])
    if redrawn is None or redrawn.id_hash != spec.id_hash:
        raise ValueError(
            f"{sheets[0].path}, row 2, column 'sample': the {spec.dataset} {spec.split} data here "
            f"does not give sample {spec.sample_id} (the prepared data changed since the sheet "
            "was made); make the sheet again or use the data it was made from"
        )
    ids = [ex.id for ex in picked]
    check_sheets(sheets, ids)
    raters: dict[str, Mapping[str, Mapping[str, bool]]] = {s.annotator: s.labels for s in sheets}
    raters[AUTO] = auto_labels(picked, rules)
    questions = {ex.id: ex.question for ex in picked}
    return agreement_report(raters, ids, questions, spec.sample_id)
