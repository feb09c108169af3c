"""``regime-variants``: the page "Your variants", every notebook run by hand that the build's
work directory holds (``<work>/variants/<run>/<config hash>``,
:func:`regime_core.paths.variant_dir`), judged beside the default.

Each variant shows its run and config hash, the config fields that differ from the default
run's, and its run's claims with the default's verdict and numbers beside the variant's: the
report of ``regime verdicts --variant RUN/HASH``
(:func:`regime_core.runner.verdicts.variant_report`), so the page and the command cannot
disagree. A claim whose number the variant's record lacks (a run on one encoder has no number
of the other) is "not judged" in its row, with the missing key. A variant that cannot be judged
is a warning naming its file, so a strict build fails, and a line on the page saying why: never
skipped. Without any variant the page says what one is and how to make one
(:data:`VARIANT_COMMANDS`). The page is read again when the set of variant records changes
(:func:`outdated_variant_pages`) or a record it read changes content
(:class:`~regime_book.records.DependencyHashes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_book.claims import card_table, claim_cell, page_claims, verdict_entry
from regime_book.records import (
    RECORD_PROBLEMS,
    PerPageCollector,
    problem_text,
    record_file,
    warn,
    work_dir,
)
from regime_book.tables import code_spans, paragraph
from regime_core import paths
from regime_core.runner.dataset_set import set_report
from regime_core.runner.identity import read_identity
from regime_core.runner.records import RECORD_FILENAME

if TYPE_CHECKING:
    from regime_core.runner.verdicts import ClaimVerdict, VariantClaim, VariantVerdicts

#: The commands the page gives for making a variant, from the repository's top, each after the
#: comment the page shows above it: a notebook run by hand with parameters of one's own (``-p``
#: a number or a word, ``-y`` a list), or the same variant in one command (``regime reproduce
#: --set``, :mod:`regime_core.runner.variants`), then the book.
VARIANT_COMMANDS: tuple[tuple[str, str], ...] = (
    (
        "a notebook run by hand",
        ".venv/bin/papermill notebooks/04_t3_brel_knockout.ipynb _build/t3_alpha.ipynb "
        '-p alpha 0.5 -y "encoders: [minilm]"',
    ),
    (
        "or the same variant in one command",
        ".venv/bin/regime reproduce --set t3_brel_knockout.alpha=0.5 "
        '--set "t3_brel_knockout.encoders=[minilm]"',
    ),
    ("then the book, this page included", ".venv/bin/regime book"),
)
#: The columns of a variant set's table (``regime reproduce --dataset NAME``).
SET_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Claim", 3),
    ("Default: verdict", 2),
    ("Default: ours", 3),
    ("Your dataset: verdict", 2),
    ("Your dataset: ours", 3),
)
#: The columns of a variant's table, with their relative widths.
VARIANT_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Claim", 3),
    ("Default: verdict", 2),
    ("Default: ours", 3),
    ("Variant: verdict", 2),
    ("Variant: ours", 3),
)


@dataclass(frozen=True)
class HeldVariant:
    """One ``record.json`` under ``<work>/variants``: its ``variant_report`` (``lenient``: a
    run without claims, or a claim the record cannot give, is reported), or why it could not be
    judged."""

    file: Path
    report: VariantVerdicts | None = None
    #: why it could not be judged, naming the file (the build's warning)
    problem: str | None = None
    #: the same, the work directory written ``<work>`` (a page shows no local path)
    shown_problem: str | None = None

    @property
    def name(self) -> str:
        """``RUN/HASH``, as its folder names it (what ``regime verdicts --variant`` takes)."""
        return f"{self.file.parent.parent.name}/{self.file.parent.name}"


def variant_files(work: Path) -> list[Path]:
    """Every variant record the work directory holds, ``<work>/variants/*/*/record.json``,
    sorted by run and hash. A folder without its ``record.json`` holds no variant (yet): its
    notebook is running, or stopped before it wrote its record."""
    return sorted(paths.variants_dir(work).glob(f"*/*/{RECORD_FILENAME}"))


def _check_folder(file: Path, report: VariantVerdicts) -> None:
    """A variant's folder is ``<run>/<variant hash>`` of its own record (its identity's,
    :mod:`regime_core.runner.identity`; the config hash without one), or the page would label
    it by another run's name (``ValueError`` naming the file and the field)."""
    run, folder_hash = file.parent.parent.name, file.parent.name
    identity = read_identity(file.parent)
    expected = report.config_hash
    if identity is not None and identity.get("config_hash") == report.config_hash:
        expected = str(identity.get("variant_hash"))  # the config hash with what it reads
    checks = (("name", report.run, run), ("config_hash", expected, folder_hash))
    for field, held, folder in checks:
        if held != folder:
            raise ValueError(
                f"{file}: field {field!r}: {held!r}, but the record lies in the folder "
                f"variants/{run}/{folder_hash}; a notebook run by hand writes to "
                "variants/<run>/<variant hash> (regime_core.paths.variant_dir): move the folder "
                "there or remove it"
            )


def judge_variant(file: Path, work: Path, claims_file: Path) -> HeldVariant:
    """The variant at ``file`` judged beside the default records of ``work``, by
    :func:`~regime_core.runner.verdicts.variant_report`; a problem (a damaged record, a folder
    that is not its record's, a default record missing) is kept as its message, naming the
    file, never raised."""
    from regime_core.runner.verdicts import variant_report

    try:
        report = variant_report(file, work, claims_file, lenient=True)
        _check_folder(file, report)
    except RECORD_PROBLEMS as err:
        why = problem_text(err)
        problem = why if str(file) in why else f"{file}: {why}"
        shown = problem.replace(str(work), "<work>")
        return HeldVariant(file, problem=problem, shown_problem=shown)
    return HeldVariant(file, report=report)


def default_runs(file: Path, claims: Sequence[Any]) -> list[str]:
    """The runs whose default records a variant's report reads: its own (named by its folder)
    and every run its run's claims read."""
    run = file.parent.parent.name
    return list(dict.fromkeys([run, *(r for c in claims if run in c.runs() for r in c.runs())]))


# --- what the page shows -------------------------------------------------------------------------


def _value_text(field: str, value: Any) -> str:
    from regime_core.book.tables import _setting_value  # what the settings tables show

    return "none" if value is None else _setting_value(field, value)


def differences_text(differs: Mapping[str, Mapping[str, Any]]) -> str:
    """The config fields a variant changes, as the page says them.

    >>> differences_text({"alpha": {"default": 0.25, "variant": 0.5}})
    'alpha 0.25 → 0.5'
    """
    return "; ".join(
        f"{field} {_value_text(field, change['default'])} → {_value_text(field, change['variant'])}"
        for field, change in differs.items()
    )


def no_variant_nodes() -> list[nodes.Node]:
    """What the page says when the work directory holds no variant: what one is, and the
    commands that make one (:data:`VARIANT_COMMANDS`)."""
    what = code_spans(
        "A variant is a notebook you ran yourself with parameters of your own: it writes its "
        "record to `variants/<run>/<config hash>` in the work directory, beside the default "
        "record this book is built from, which it never overwrites. The work directory of this "
        "build holds none. To make one, run a notebook with papermill from the repository's top "
        '(`-p NAME VALUE` for a number or a word, `-y "NAME: [a, b]"` for a list; or name the '
        "same parameters to `regime reproduce --set RUN.PARAM=VALUE`), then build the book "
        "again (`make book` does too); this page then shows each claim of that notebook under "
        "the default and under your parameters:"
    )
    text = "\n".join(f"# {comment}\n{command}" for comment, command in VARIANT_COMMANDS)
    commands = nodes.literal_block(text, text, language="bash")
    return [nodes.paragraph("", "", *what, classes=["regime-no-variants"]), commands]


def _not_judged(why: str) -> list[Any]:
    """A side's cells when its record cannot give the claim: "not judged", and why."""
    cell = nodes.entry(classes=["regime-variant-not-judged"])
    cell += paragraph("not judged")
    return [cell, why]


def _box(title: str, lead: str) -> nodes.container:
    """A variant's (or a variant set's) box on the page: its title and a sentence about it."""
    box = nodes.container(classes=["regime-variant"])
    box += nodes.rubric(text=title)
    box += nodes.paragraph("", "", *code_spans(lead))
    return box


def _side_cells(judged: ClaimVerdict) -> list[Any]:
    """One side's verdict, coloured by the verdict, and its numbers."""
    return [verdict_entry(judged.verdict, judged.judgement.words), judged.values.text()]


def _variant_cells(claim: VariantClaim) -> list[Any]:
    """The variant's verdict and numbers of one claim, or "not judged" and why (a number its
    record lacks: its parameters left it out)."""
    if claim.variant is None:
        return _not_judged(f"Its record cannot give this claim: {claim.not_judged}.")
    return _side_cells(claim.variant)


def variant_nodes(variant: HeldVariant, docname: str) -> list[nodes.Node]:
    """One variant on the page: its run and hash, what differs from the default, and its
    claims' table (:data:`VARIANT_COLUMNS`); or why it could not be judged."""
    box = _box(
        f"Variant {variant.name}",
        f"Its record: `variants/{variant.name}/{RECORD_FILENAME}` in the work directory.",
    )
    if variant.report is None:
        box += nodes.paragraph(
            text=f"It could not be judged: {variant.shown_problem}",
            classes=["regime-variant-problem"],
        )
        return [box]
    report = variant.report
    run = report.run
    differs = differences_text(report.differs)
    box += nodes.paragraph(
        text="Its parameters differ from the default's: " + differs + "."
        if differs
        else "Its parameters are the default's (nothing differs).",
        classes=["regime-variant-differs"],
    )
    if not report.claims:
        box += nodes.paragraph(
            text=f"No claim of the paper is judged on run {run}: its numbers are in its record."
        )
        return [box]
    rows = [
        [
            claim_cell(c.default.claim, docname),
            *_side_cells(c.default),
            *_variant_cells(c),
        ]
        for c in report.claims
    ]
    caption = f"The claims of run {run} under the default and under variant {variant.name}"
    # a table on a wide screen, a card per claim on a phone, as the paper-against-ours table
    box += card_table(VARIANT_COLUMNS, rows, ["regime-variant-table"], caption, always=False)
    return [box]


def listed_files(work: Path) -> list[Path]:
    """The records the page lists: every variant's and every run's of every variant set
    (``<work>/sets/<NAME>/results``, :mod:`regime_core.runner.dataset_set`)."""
    from regime_core.runner.dataset_set import sets_dir

    sets = sorted(sets_dir(work).glob(f"*/results/*/{RECORD_FILENAME}"))
    return [*variant_files(work), *sets]


def set_names(work: Path) -> list[str]:
    """The variant sets of a work directory, by dataset name."""
    from regime_core.runner.dataset_set import sets_dir

    return sorted(p.name for p in sets_dir(work).glob("*") if (p / "results").is_dir())


def _set_side(side: Mapping[str, Any] | None, reason: str | None) -> list[Any]:
    if side is None:
        return _not_judged(f"Not judged: {reason}.")
    words = side["verdict"] + "".join(f" ({flag})" for flag in side["flags"])
    return [verdict_entry(side["state"], words), side["ours_text"]]


def set_nodes(
    report: Mapping[str, Any], claims: Mapping[str, Any], docname: str
) -> list[nodes.Node]:
    """One variant set on the page: what it is, then every claim on the default records beside
    the set's (the report of ``regime verdicts --dataset NAME``), a claim not judged on a side
    saying why."""
    name = report["set"]["dataset"]
    box = _box(
        f"Variant set {name}",
        f"Every notebook that takes a dataset, run on `{name}` by `regime reproduce "
        f"--dataset {name}` (its records in `sets/{name}` of the work directory): "
        f"{report['judged']} claims judged on it, {report['not_judged']} not judged.",
    )
    rows = [
        [
            claim_cell(claims[c["id"]], docname),
            *_set_side(c["default"], c.get("default_not_judged")),
            *_set_side(c["variant"], c.get("not_judged")),
        ]
        for c in report["claims"]
    ]
    caption = f"Every claim under the default and on the dataset {name}"
    box += card_table(SET_COLUMNS, rows, ["regime-variant-table"], caption, always=False)
    return [box]


def variants_nodes(
    held: Sequence[HeldVariant], docname: str, sets: Sequence[nodes.Node] = ()
) -> list[nodes.Node]:
    """The page's content: every held variant (:func:`variant_nodes`) and variant set
    (``sets``, :func:`set_nodes`), or, without any, what a variant is and how to make one
    (:func:`no_variant_nodes`)."""
    if not held and not sets:
        return no_variant_nodes()
    if not held:
        return list(sets)
    count = "1 variant," if len(held) == 1 else f"{len(held)} variants, each"
    lead = code_spans(
        f"The work directory of this build holds {count} judged as `regime verdicts --variant "
        "RUN/HASH` judges it: the claims of its run on its record, beside the same claims on "
        "the default records."
    )
    variants = (n for variant in held for n in variant_nodes(variant, docname))
    return [nodes.paragraph("", "", *lead), *variants, *sets]


# --- the directive, and the page read again when the variants change ----------------------------


class VariantsDirective(SphinxDirective):
    """Every variant of the build's work directory judged beside the default
    (:func:`variants_nodes`), each problem a warning naming its file; ``:file:`` names the
    claims file (default: :func:`~regime_book.claims.claims_file`)."""

    option_spec: ClassVar[dict[str, Any]] = {"file": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        env, location = self.env, self.get_location()
        work = work_dir(env.app)
        files = variant_files(work)
        VariantListings.of(env)[env.docname] = [str(f) for f in listed_files(work)]
        try:
            file, claims = page_claims(env, self.options.get("file"))
        except (FileNotFoundError, ValueError) as err:
            warn(env, str(err), location)
            return []
        held = []
        for variant_file in files:
            env.note_dependency(str(variant_file))
            for run in default_runs(variant_file, claims):
                env.note_dependency(str(record_file(env.app, run)))
            variant = judge_variant(variant_file, work, file)
            if variant.problem is not None:
                warn(env, f"variant {variant.name}: {variant.problem}", location, "variant")
            held.append(variant)
        sets: list[nodes.Node] = []
        by_id = {c.id: c for c in claims}
        for name in set_names(work):
            for record in sorted(work.glob(f"sets/{name}/results/*/{RECORD_FILENAME}")):
                env.note_dependency(str(record))
            sets += set_nodes(set_report(name, work, file), by_id, env.docname)
        return variants_nodes(held, env.docname, sets)


class VariantListings(PerPageCollector):
    """Keeps, per page, the variant records it listed when it was read, across parallel reads."""

    attribute = "regime_variant_listing"

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing: the directive notes its listing while the page is read."""


def outdated_variant_pages(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """The pages that listed variants to read again because the work directory's variant
    records are no longer the ones they listed (one added or removed); a listed record whose
    content changed is a noted dependency, read again by content."""
    listings = VariantListings.of(env)
    if not listings:
        return []
    current = [str(f) for f in listed_files(work_dir(app))]
    skip = added | changed | removed
    return [
        docname
        for docname, listed in sorted(listings.items())
        if docname not in skip and docname in env.all_docs and listed != current
    ]


def setup_variants(app: Sphinx) -> None:
    """Register ``regime-variants``, :class:`VariantListings` and
    :func:`outdated_variant_pages`."""
    app.add_directive("regime-variants", VariantsDirective)
    app.add_env_collector(VariantListings)
    app.connect("env-get-outdated", outdated_variant_pages)
