"""The verdict of every claim, from a run's records: the data behind ``regime verdicts``, the
book's paper-against-ours table and every sentence of the book that states a verdict, a
direction or a significance.

The verdict rules are :data:`regime_core.runner.judge.VERDICT_RULES`; the robustness of each
verdict (the share of plausible readings under which the claim holds) comes from the
``robustness`` run's record (:mod:`regime_core.experiments.robustness`). Everything here is a
function of records: nothing is typed, so no sentence can contradict its numbers. A record is
read only if it is the one its run's stamp recorded (:mod:`regime_core.runner.stamps`).

>>> comparison_phrase({"diff": 0.01, "ci_lo": -0.002, "ci_hi": 0.02, "p_value": 0.06})
'+1.0 pp (95% CI -0.2 pp to +2.0 pp, p = 0.060): not significantly different from zero'
>>> comparison_phrase({"diff": 0.066, "ci_lo": 0.045, "ci_hi": 0.091, "p_value": 1e-6})
'+6.6 pp (95% CI +4.5 pp to +9.1 pp, p < 0.001): significantly above zero'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from regime_core import config, paths
from regime_core.paper import Claim, Role, load_claims, load_roles
from regime_core.runner.claim_record import claim_values, fill_fields, judge_values, paper_text
from regime_core.runner.diagnosis import Diagnosis, diagnose
from regime_core.runner.identity import input_differences, read_identity
from regime_core.runner.judge import SIGNIFICANCE_LEVEL, Judgement, Power
from regime_core.runner.ours import Ours, Summary
from regime_core.runner.records import (
    RECORD_FILENAME,
    MissingNumberError,
    Record,
    load_record,
    record_path,
)
from regime_core.runner.roles import filled_datasets, role_view, unfilled_reason
from regime_core.runner.runs import RUNS
from regime_core.runner.stamps import load_stamped_record
from regime_core.runner.wording import format_number

#: The run whose record holds the robustness of every claim.
ROBUSTNESS_RUN = "robustness"


class NotJudgedError(ValueError):
    """A claim that cannot be judged on the records given: a role of its data its run left
    unfilled, or a number its run's record lacks (the message says which, and why)."""

    def __init__(self, claim_id: str, reason: str) -> None:
        super().__init__(f"claim {claim_id!r} is not judged: {reason}")
        self.claim_id, self.reason = claim_id, reason


@dataclass(frozen=True, slots=True)
class Robustness:
    """A claim's robustness across the plausible readings of the paper (the robustness run's
    record, :func:`robustness_of`): the readings judged, how many reproduce it, their share and
    the knob that moves its verdict most (``none``: no knob does)."""

    readings: int
    holding: int
    share: float
    most_sensitive_knob: str


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim judged on one run's records (see :func:`judge_claims`)."""

    claim: Claim
    values: Ours
    judgement: Judgement
    computed_on: str
    robustness: Robustness | None
    #: why a verdict other than "reproduced" came out (:mod:`regime_core.runner.diagnosis`)
    why: Diagnosis | None = None
    #: the dataset filling each role of the claim's data in its run's record
    #: (:mod:`regime_core.runner.roles`)
    roles: Mapping[str, str] | None = None

    @property
    def verdict(self) -> str:
        return self.judgement.verdict

    @property
    def ours(self) -> Summary:
        """Our side's :data:`~regime_core.runner.ours.OURS_FIELDS` (absent values None)."""
        return self.values.summary()

    def side(self) -> dict[str, Any]:
        """The verdict, our side and its data: one side of a claim judged on two sets of
        records (``regime verdicts --variant`` and ``--dataset``)."""
        return {
            "verdict": self.judgement.words,
            "flags": list(self.judgement.flags),
            "data": dict(self.roles or {}),
            "ours": self.ours,
            "ours_text": self.values.text(),
            "computed_on": self.computed_on,
        }

    def to_dict(self) -> dict[str, Any]:
        """The object ``regime verdicts --json`` prints for this claim."""
        return {
            "id": self.claim.id,
            "claim": self.claim.claim,
            "chapter": self.claim.chapter,
            "origin": self.claim.origin,  # paper, or ours: a statement the paper never makes
            "data": dict(self.roles or {}),  # role -> the dataset that fills it
            "paper": {"text": paper_text(self.claim), **dict(self.claim.paper)},
            "ours": self.ours,
            "ours_text": self.values.text(),
            "computed_on": self.computed_on,
            "verdict": self.judgement.words,
            "flags": list(self.judgement.flags),
            "reason": self.judgement.reason,
            "power": _power_dict(self.judgement.power),
            "parts": {
                label: {
                    "verdict": part.words,
                    "reason": part.reason,
                    "power": _power_dict(part.power),
                }
                for label, part in self.judgement.parts.items()
            },
            "robustness": None if self.robustness is None else asdict(self.robustness),
            "why": None if self.why is None else self.why.to_dict(),
        }


def _power_dict(power: Power | None) -> dict[str, Any] | None:
    return None if power is None else power.to_dict()


def load_run_records(runs: Sequence[str], work: Path | str | None = None) -> dict[str, Record]:
    """The records of ``runs`` under ``<work>/results``, each checked against its run's stamp
    (:func:`~regime_core.runner.stamps.verify_record`); a missing one is an error naming the
    run, the file and the command that produces it."""
    results = paths.results_dir(work)
    records = {}
    for run in dict.fromkeys(runs):
        file = record_path(results / run)
        if not file.is_file():
            advice = (
                f"produce it with `regime reproduce{'' if work is None else f' --work {work}'}`"
                if run in RUNS
                else f"no registered run has that name (the runs: {', '.join(RUNS)})"
            )
            raise FileNotFoundError(f"no record for run {run!r} ({file}); {advice}")
        records[run] = load_stamped_record(paths.work_dir(work), run)
    return records


def robustness_of(claim_id: str, robustness_record: Record | None) -> Robustness | None:
    """The robustness of a claim in the robustness record, if it has one; ``ValueError``
    naming the record, the claim and the field when its summary lacks one."""
    if robustness_record is None:
        return None
    try:
        found = robustness_record.node(f"claims.{claim_id}")
    except KeyError:
        return None
    names = [f.name for f in fields(Robustness)]
    missing = [name for name in names if name not in found]
    if missing:
        where = robustness_record.file or f"record {robustness_record.name!r}"
        raise ValueError(f"{where}: claims.{claim_id} lacks the field(s) {missing}")
    return Robustness(**{name: found[name] for name in names})


def judge_claims(
    records: Mapping[str, Record],
    claims: Sequence[Claim] | None = None,
    robustness_record: Record | None = None,
    display: Callable[[str, Any], str] | None = None,
    roles: Mapping[str, Role] | None = None,
) -> list[ClaimVerdict]:
    """Every claim judged on ``records`` (run id -> record), each read through its ``roles``
    (:func:`~regime_core.runner.roles.role_view`; by default the repository's); pure.
    ``display`` names config values in the "computed_on" text and the why. ``KeyError`` naming
    the claim and the run when ``records`` lacks a run a claim reads (a strict book build fails
    rather than print a partial diagnosis); :class:`NotJudgedError` when its run's record
    leaves a role of its data unfilled or lacks a number it reads."""
    claims = load_claims() if claims is None else claims
    roles = load_roles() if roles is None else roles
    for claim in claims:
        missing = [run for run in claim.runs() if run not in records]
        if missing:
            raise KeyError(f"claim {claim.id!r}: no record for run {missing[0]!r}")
    viewed = {run: role_view(roles, record) for run, record in records.items()}
    judged = []
    for claim in claims:
        record = viewed[claim.run]
        reason = unfilled_reason(roles, claim.data, record)
        if reason is not None:
            raise NotJudgedError(claim.id, reason)
        try:
            values = claim_values(claim, record)
        except MissingNumberError as err:
            raise NotJudgedError(claim.id, str(err)) from None
        judgement = with_cutoff_flag(judge_values(claim, values), record)
        computed_on = fill_fields(claim.computed_on, record, display, roles)
        judged.append(
            ClaimVerdict(
                claim=claim,
                values=values,
                judgement=judgement,
                computed_on=computed_on,
                robustness=robustness_of(claim.id, robustness_record),
                why=diagnose(claim, judgement, viewed, display),
                roles=filled_datasets(roles, claim.data, record),
            )
        )
    return judged


def cutoff_flag(record: Record) -> str | None:
    """The flag of a verdict judged at a cutoff other than the paper's R@5 (the record's
    ``config.k``; None when it is the paper's, or the run has none).

    >>> cutoff_flag(Record({"config": {"k": 3}, "numbers": {}}))
    "cutoff k = 3, not the paper's R@5"
    """
    k = (record.get("config") or {}).get("k")
    if isinstance(k, bool) or not isinstance(k, int) or k == config.HEADLINE_K:
        return None
    return f"cutoff k = {k}, not the paper's R@{config.HEADLINE_K}"


def with_cutoff_flag(judgement: Judgement, record: Record) -> Judgement:
    """``judgement`` with :func:`cutoff_flag` among its flags when the record has one."""
    flag = cutoff_flag(record)
    return judgement if flag is None else replace(judgement, flags=(*judgement.flags, flag))


def verdicts_report(
    work: Path | str | None = None, claims_file: Path | str | None = None
) -> dict[str, Any]:
    """``{"claims": [...]}`` for a work directory (the ``regime verdicts --json`` object)."""
    claims = load_claims(claims_file)
    records = load_run_records([run for c in claims for run in c.runs()], work)
    robustness_file = record_path(paths.results_dir(work) / ROBUSTNESS_RUN)
    robustness = (
        load_stamped_record(paths.work_dir(work), ROBUSTNESS_RUN)
        if robustness_file.is_file()
        else None
    )
    roles = load_roles(claims_file)
    judged = judge_claims(records, claims, robustness, roles=roles)
    return {
        "claims": with_ledger([v.to_dict() for v in judged], judged, records),
        "rules": "regime_core.runner.judge.VERDICT_RULES",
        "robustness_run": ROBUSTNESS_RUN if robustness is not None else None,
        "ledger": "regime_core.runner.ledger.ledger_holm",
    }


def with_ledger(
    rows: list[dict[str, Any]], judged: Sequence[ClaimVerdict], records: Mapping[str, Record]
) -> list[dict[str, Any]]:
    """Each claim's row with the ledger-wide Holm correction (:mod:`regime_core.runner.ledger`):
    ``ledger`` ("survives", "does not survive", or None outside the family) and ``ledger_holm``
    (its p, Holm-adjusted p, level and the verdict at that level); and ``verdict_by_interval``,
    its verdict under each interval the book has used (None: not judged on counts)."""
    from regime_core.runner.ledger import ledger_holm, verdicts_by_method

    by_method = {
        m.claim_id: m.verdicts for m in verdicts_by_method([v.claim for v in judged], records)
    }
    entries = {
        e.claim_id: e
        for e in ledger_holm(
            [v.claim for v in judged],
            records,
            {v.claim.id: v.judgement.plain_words for v in judged},
        )
    }
    for row in rows:
        entry = entries.get(row["id"])
        row["ledger"] = None if entry is None else entry.survives
        row["ledger_holm"] = None if entry is None else entry.to_dict()
        row["verdict_by_interval"] = by_method.get(row["id"])
    return rows


def find_variant(variant: str | Path, work: Path | str | None = None) -> Path:
    """The record file of a notebook run by hand, ``variant`` naming its folder (or its
    ``record.json``) as a path, as ``RUN/HASH`` under ``<work>/variants``, or as ``RUN`` when
    the work directory holds one variant of it; else an error listing the variants held."""
    text = str(variant)
    root = paths.variants_dir(work)
    for candidate in (Path(text), root / text):
        file = record_path(candidate)
        if file.is_file():
            return file
    held = sorted(
        f"{f.parent.parent.name}/{f.parent.name}" for f in root.glob(f"*/*/{RECORD_FILENAME}")
    )
    of_run = [name for name in held if name.split("/")[0] == text]
    if len(of_run) == 1:
        return record_path(root / of_run[0])
    raise FileNotFoundError(
        f"--variant {text!r}: no record there, nor under {root}"
        + (f" ({len(of_run)} variants of that run: name one)" if of_run else "")
        + "; "
        + (
            f"the variants held are: {', '.join(held)}"
            if held
            else "none is held (run a notebook by hand with papermill and no -p output_dir)"
        )
    )


def config_differences(
    default: Mapping[str, Any], variant: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The config fields whose values differ between two records' configs (a field only one
    of them has counts as differing, its absent side None); pure.

    >>> config_differences({"alpha": 0.25, "k": 5}, {"alpha": 0.5, "k": 5})
    {'alpha': {'default': 0.25, 'variant': 0.5}}
    """
    return {
        key: {"default": default.get(key), "variant": variant.get(key)}
        for key in sorted(set(default) | set(variant))
        if default.get(key) != variant.get(key)
    }


def identity_differences(folder: Path) -> dict[str, dict[str, str]]:
    """What a variant reads besides its config (a router file, an upstream record, a notebook
    parameter) that differs from the default run's, from the identity written beside its record
    (:mod:`regime_core.runner.identity`; none written: nothing known to differ)."""
    identity = read_identity(folder)
    if identity is None:
        return {}
    return input_differences(identity["default_inputs"], identity["inputs"])


@dataclass(frozen=True)
class VariantClaim:
    """A claim of a variant's run judged on the default records and on the variant's
    (``variant`` None when its record cannot give the claim, ``not_judged`` saying why)."""

    default: ClaimVerdict
    variant: ClaimVerdict | None
    not_judged: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The claim's object in ``regime verdicts --variant --json``."""
        claim = self.default.claim
        entry: dict[str, Any] = {
            "id": claim.id,
            "claim": claim.claim,
            "default": self.default.side(),
        }
        if self.variant is None:
            entry.update(variant=None, not_judged=self.not_judged)
        else:
            entry["variant"] = self.variant.side()
        return entry


@dataclass(frozen=True)
class VariantVerdicts:
    """A variant's run, config hash and folder, the config fields that differ from the default
    run's (what labels it), the default run's config hash and its run's claims judged on both
    (:func:`variant_report`)."""

    run: str
    config_hash: str
    folder: Path
    differs: dict[str, dict[str, Any]]
    default_config_hash: str
    claims: tuple[VariantClaim, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``regime verdicts --variant --json`` object."""
        return {
            "variant": {
                "run": self.run,
                "config_hash": self.config_hash,
                "path": str(self.folder),
                "differs": self.differs,
            },
            "default_config_hash": self.default_config_hash,
            "claims": [c.to_dict() for c in self.claims],
        }


def variant_report(
    variant: str | Path,
    work: Path | str | None = None,
    claims_file: Path | str | None = None,
    *,
    lenient: bool = False,
) -> VariantVerdicts:
    """The claims of a variant's run judged on the variant's record beside the default records
    (``regime verdicts --variant``); the other runs a claim reads are the default's, and
    robustness, the default run's alone, is left out. A claim the variant's record cannot give
    (a role left unfilled, a number its parameters left out) has no variant side and says why
    (``not_judged``). A run with no claim is an error, unless ``lenient`` (the book's page of
    variants): its report then holds what differs and no claim."""
    file = find_variant(variant, work)
    record = load_record(file)
    run = record["name"]
    claims = load_claims(claims_file)
    concerned = [c for c in claims if run in c.runs()]
    if not concerned and not lenient:
        raise ValueError(
            f"{file}: field 'name': run {run!r} has no claim in the claims file, so there is "
            "nothing to judge on this variant"
        )
    defaults = load_run_records([run, *(r for c in concerned for r in c.runs())], work)
    if defaults[run]["config_kind"] != record["config_kind"]:
        raise ValueError(
            f"{file}: field 'config_kind': {record['config_kind']!r}, but the default record of "
            f"run {run!r} holds a {defaults[run]['config_kind']!r}; the variant is of another run"
        )
    judged = []
    roles = load_roles(claims_file)
    for default in judge_claims(defaults, concerned, roles=roles):
        try:
            (judged_variant,) = judge_claims(
                {**defaults, run: record}, [default.claim], roles=roles
            )
        except NotJudgedError as err:  # a role its run left unfilled, a number it lacks
            judged.append(VariantClaim(default, None, err.reason))
        else:
            judged.append(VariantClaim(default, judged_variant))
    return VariantVerdicts(
        run=run,
        config_hash=record["config_hash"],
        folder=file.parent,
        differs={
            **config_differences(defaults[run]["config"], record["config"]),
            **identity_differences(file.parent),
        },
        default_config_hash=defaults[run]["config_hash"],
        claims=tuple(judged),
    )


# --- sentences -----------------------------------------------------------------------------------


def significance_word(diff: float, ci_lo: float, ci_hi: float, p: float) -> str:
    """What a paired comparison says about its direction, from its numbers alone; pure.

    Significant (p below :data:`~regime_core.runner.judge.SIGNIFICANCE_LEVEL`) *and* an interval
    on one side of zero gives "significantly above/below zero"; anything else "not significantly
    different from zero" (a significant test whose interval touches zero is not called a
    direction).

    >>> significance_word(-0.452, -0.52, -0.38, 1e-9)
    'significantly below zero'
    """
    level = SIGNIFICANCE_LEVEL
    if p < level and ci_lo > 0 and diff > 0:
        return "significantly above zero"
    if p < level and ci_hi < 0 and diff < 0:
        return "significantly below zero"
    return "not significantly different from zero"


def comparison_phrase(c: Mapping[str, Any], *, p_key: str | None = None) -> str:
    """A paired comparison (a record node with ``diff`` (or T3's ``drop``), ``ci_lo``,
    ``ci_hi`` and a p-value under ``p_key``, else ``p_holm``, ``p_value`` or ``p``) as a phrase
    with its direction."""
    key = p_key or next((k for k in ("p_holm", "p_value", "p") if k in c), None)
    if key is None:
        raise KeyError("the comparison has no p-value (p_holm, p_value or p)")
    effect = "diff" if "diff" in c else "drop"
    diff, lo, hi, p = (float(c[k]) for k in (effect, "ci_lo", "ci_hi", key))
    level = round(100 * config.CONFIDENCE)
    holm = " Holm" if key == "p_holm" else ""
    return (
        f"{format_number(diff, 'pp')} ({level}% CI {format_number(lo, 'pp')} to "
        f"{format_number(hi, 'pp')}, {format_number(p, 'p')}{holm}): "
        f"{significance_word(diff, lo, hi, p)}"
    )


def robustness_absence(claim: Claim) -> str:
    """Why ``claim`` has no readings of the multiverse: its rule (nothing to vary), the
    reason the claims file gives (``multiverse.outside``), or a robustness run that did not
    compute it."""
    if claim.rule in ("untestable", "bound"):
        return "no reading changes it"
    return str(claim.multiverse.get("outside", "not computed in this run"))


def robustness_phrase(robustness: Robustness | None) -> str:
    """ "reproduced under 3 of 24 readings (13%); the tie rule moves it most" or the absence."""
    if robustness is None:
        return "its robustness was not computed in this run"
    readings, knob = robustness.readings, robustness.most_sensitive_knob
    if readings == 0:
        return "no reading of it could be judged"
    share = format_number(robustness.share, "pct")
    text = f"reproduced under {robustness.holding} of {readings} readings ({share})"
    if knob == "none":
        return text + "; no knob changes its verdict"
    return text + f"; the knob that changes its verdict most is {knob.replace('_', ' ')}"


def claim_sentence(v: ClaimVerdict) -> str:
    """A claim's verdict in a few sentences: the verdict (with its flags) and the reason its rule
    gives, the diagnosis when it did not reproduce, and its robustness across readings.

    >>> from types import SimpleNamespace as S
    >>> claim_sentence(S(judgement=S(label="reproduced", reason="our interval holds +5.6 pp"),
    ...                  why=None, robustness=None))
    'Reproduced: our interval holds +5.6 pp. Its robustness was not computed in this run.'
    """
    label = v.judgement.label
    text = f"{label[:1].upper()}{label[1:]}: {v.judgement.reason}."
    if v.why is not None and v.why.sentence:
        text += f" {v.why.sentence}"
    robustness = robustness_phrase(v.robustness)
    if v.robustness is not None and v.robustness.readings:
        robustness = "Across the plausible readings of the paper it is " + robustness
    return f"{text} {robustness[:1].upper()}{robustness[1:]}."
