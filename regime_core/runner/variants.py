"""``regime reproduce --set RUN.PARAM=VALUE``: a variant of a declared run in one command.

Each ``--set`` item names a run of ``reproduce.yml``, one parameter of its notebook and a value
written in YAML (``alpha=0.5``, ``encoders=[minilm]``, ``pool=corpus``). The items of one run
are merged over that run's parameters for the chosen profile, and that run alone executes
(none other, not even its upstream runs: those must already be current, :func:`check_upstream`),
writing its record, figures and executed notebook to ``<work>/variants/<run>/<variant hash>``
(:func:`regime_core.paths.variant_dir`): the folder a notebook run by hand with the same
parameters writes to, since both compute the hash alike (:mod:`regime_core.runner.identity`);
the record's config hash is checked after the run.

A variant never writes ``<work>/results``, ``<work>/runs`` (stamps, timings), ``<work>/executed``
nor ``book/executed``: the default records and the book stay those of ``regime reproduce``.
Everything is checked before anything runs; a bad item is a ``ValueError`` naming it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.integrity import fresh_directory
from regime_core.locks import directory_lock
from regime_core.runner.children import kill_children
from regime_core.runner.declarations import (
    DEFAULT_PROFILE,
    OUTPUT_DIR_PARAMETER,
    Declarations,
    check_profile,
    notebook_defaults,
    notebook_parameters,
    with_upstream,
)
from regime_core.runner.execution import (
    RunResult,
    clean_interrupted,
    existing_file,
    failure_message,
    relative_name,
    run_papermill,
)
from regime_core.runner.identity import input_differences, variant_hash, write_identity
from regime_core.runner.keys import run_keys
from regime_core.runner.records import canonical_json, load_record
from regime_core.runner.reproduce import KERNEL_NAME, stale_reasons, to_stderr, writing_lock
from regime_core.runner.runs import RUNS
from regime_core.strict_json import JSONProblem, parse_yaml

#: what a ``--set`` item looks like (every message about one repeats it)
SET_FORM = "RUN.PARAM=VALUE"
#: parameters a ``--set`` item may not name, and what to use instead
RESERVED: Mapping[str, str] = {
    OUTPUT_DIR_PARAMETER: "--set writes the variant to <work>/variants/<run>/<variant hash>",
    "work_dir": "name the work directory with --work",
    "profile": "choose the profile with --profile",
}


@dataclass(frozen=True)
class Setting:
    """One ``--set`` item: ``item`` as written, its run, its parameter and its value."""

    item: str
    run_id: str
    parameter: str
    value: Any


def parse_setting(item: str) -> Setting:
    """One ``RUN.PARAM=VALUE`` item, the value read as YAML (strictly: no alias, no duplicate
    key, finite numbers) and plain JSON data; ``ValueError`` naming the item.

    >>> parse_setting("t3_brel_knockout.encoders=[minilm, tfidf]").value
    ['minilm', 'tfidf']
    >>> parse_setting("t3_brel_knockout.alpha=0.5").value, parse_setting("x.pool=corpus").value
    (0.5, 'corpus')
    """
    where = f"--set {item!r}"
    target, equals, text = item.partition("=")
    run_id, dot, parameter = target.strip().partition(".")
    if not equals or not dot or not run_id or not parameter.isidentifier():
        raise ValueError(
            f"{where}: expected {SET_FORM} (a run of reproduce.yml, a parameter of its notebook, "
            "a YAML value), e.g. --set t3_brel_knockout.alpha=0.5"
        )
    if not text.strip():
        raise ValueError(
            f"{where}: no value after '='; write one (YAML: 0.5, corpus, [minilm], null for "
            "the notebook's default)"
        )
    try:
        value = parse_yaml(text, where)
        canonical_json(value)
    except (ValueError, TypeError) as err:
        problem = err.problem if isinstance(err, JSONProblem) else str(err)
        raise ValueError(
            f"{where}: the value {text!r} is not plain YAML data ({problem}); e.g. 0.5, "
            "corpus, [minilm, tfidf], null"
        ) from None
    return Setting(item, run_id, parameter, value)


def group_settings(items: Sequence[str]) -> dict[str, list[Setting]]:
    """The items by run, in the order given; a parameter set twice for one run is an error."""
    by_run: dict[str, list[Setting]] = {}
    for item in items:
        setting = parse_setting(item)
        same = [s for s in by_run.get(setting.run_id, []) if s.parameter == setting.parameter]
        if same:
            raise ValueError(
                f"--set {item!r}: {setting.run_id}.{setting.parameter} is already set by "
                f"--set {same[0].item!r}; give each parameter once"
            )
        by_run.setdefault(setting.run_id, []).append(setting)
    return by_run


@dataclass(frozen=True)
class Variant:
    """One run to execute as a variant: its ``--set`` items, every parameter papermill passes
    (the profile's, then the items'), its config hash and folder, and what to note about it."""

    run_id: str
    settings: tuple[Setting, ...]
    parameters: Mapping[str, Any]
    config_hash: str
    folder: Path
    has_claims: bool
    #: the folder's name: the config hash with every input (:mod:`regime_core.runner.identity`)
    variant_hash: str
    inputs: Mapping[str, Any]
    default_inputs: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``RUN/HASH``, what ``regime verdicts --variant`` takes."""
        return f"{self.run_id}/{self.variant_hash}"

    def differences(self) -> dict[str, dict[str, str]]:
        """The inputs besides the config that differ from the default run's, in words."""
        return input_differences(self.default_inputs, self.inputs)

    @property
    def executed(self) -> Path:
        """The executed notebook, in the variant's folder."""
        return self.folder / f"{self.run_id}.ipynb"

    def verdicts_command(self, work: Path | str | None) -> str | None:
        """The command judging the variant beside the default (None: its run has no claim)."""
        if not self.has_claims:
            return None
        return f"regime verdicts --variant {self.name}" + (
            "" if work is None else f" --work {work}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "variant": self.name,
            "config_hash": self.config_hash,
            "variant_hash": self.variant_hash,
            "folder": str(self.folder),
            "inputs_differ": self.differences(),
            "set": {s.parameter: s.value for s in self.settings},
            "parameters": dict(self.parameters),
            "notes": list(self.notes),
        }


def _items(settings: Sequence[Setting]) -> str:
    return ", ".join(f"--set {s.item!r}" for s in settings)


def _concerned(settings: Sequence[Setting], message: str) -> list[Setting]:
    """The items a config's message names by their parameter (all, when it names none)."""
    named = [s for s in settings if f"'{s.parameter}'" in message or f"{s.parameter}=" in message]
    return named or list(settings)


def resolve_variant(
    decl: Declarations, run_id: str, settings: Sequence[Setting], profile: str, work: Path
) -> Variant:
    """The variant the items ``settings`` of run ``run_id`` make: every parameter checked
    against the notebook, the config built as the notebook builds it, its folder named."""
    first = settings[0].item
    if run_id not in decl.runs:
        raise ValueError(
            f"--set {first!r}: {decl.path.name} declares no run {run_id!r}; it declares "
            f"{', '.join(decl.runs) or 'none'}"
        )
    if run_id not in RUNS:
        raise ValueError(
            f"--set {first!r}: run {run_id!r} is not registered in regime_core.runner.runs.RUNS, "
            "so its config, which names the variant's folder, is unknown"
        )
    spec = decl.runs[run_id]
    declared = notebook_parameters(spec.notebook)
    notebook = relative_name(spec.notebook, decl.root)
    for s in settings:
        if s.parameter in RESERVED:
            raise ValueError(
                f"--set {s.item!r}: {s.parameter} is not set here; {RESERVED[s.parameter]}"
            )
        if s.parameter not in declared:
            choices = [p for p in declared if p not in RESERVED]
            raise ValueError(
                f"--set {s.item!r}: {notebook} (run {run_id}) has no parameter "
                f"{s.parameter!r}; its parameters are {', '.join(choices)}"
            )
    profiled = spec.parameters_for(profile)
    chosen = {s.parameter: s.value for s in settings}
    parameters = {**profiled, **chosen}
    config_class = RUNS[run_id].config
    defaults = notebook_defaults(spec.notebook)
    with paths.use_work_dir(work):  # a config checking a dataset of one's own looks there
        try:
            config = config_class.from_parameters(**{**defaults, **parameters})
        except (ValueError, TypeError) as err:
            raise ValueError(
                f"{_items(_concerned(settings, str(err)))} (run {run_id}, profile {profile}): {err}"
            ) from None
        default_hash = config_class.from_parameters(**{**defaults, **profiled}).config_hash()
    upstream = spec.depends_on
    inputs = RUNS[run_id].inputs({**defaults, **parameters}, work, upstream)
    default_inputs = RUNS[run_id].inputs({**defaults, **profiled}, work, upstream)
    identity = variant_hash(config.config_hash(), inputs)
    notes = []
    if identity == variant_hash(default_hash, default_inputs):
        notes.append(
            f"the config and every input equal the default run's under profile {profile} "
            f"(hash {identity}): the variant repeats the default"
        )
    return Variant(
        run_id=run_id,
        settings=tuple(settings),
        parameters=parameters,
        config_hash=config.config_hash(),
        folder=paths.variant_dir(run_id, identity, work),
        has_claims=bool(RUNS[run_id].claims()),
        notes=tuple(notes),
        variant_hash=identity,
        inputs=inputs,
        default_inputs=default_inputs,
    )


def resolve_variants(
    decl: Declarations, items: Sequence[str], profile: str, work: Path
) -> list[Variant]:
    """The variants ``items`` make, one per run named, in the order first named (none for no
    item: ``regime reproduce`` takes this path only when ``--set`` is given)."""
    grouped = group_settings(items)
    variants = [resolve_variant(decl, r, s, profile, work) for r, s in grouped.items()]
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    for variant in variants:
        upstream = with_upstream(deps, [variant.run_id]) - {variant.run_id}
        also_set = sorted(upstream & set(grouped))
        if also_set:
            raise ValueError(
                f"{_items(variant.settings)}: run {variant.run_id} reads the default record of "
                f"{also_set[0]} (<work>/results/{also_set[0]}), never a variant of it, and "
                f"{_items(grouped[also_set[0]])} sets {also_set[0]} too; set them in separate "
                "commands"
            )
    return variants


def check_upstream(
    decl: Declarations,
    variants: Sequence[Variant],
    profile: str,
    work: Path,
    *,
    work_flag: Path | str | None = None,
) -> None:
    """Every run upstream of a variant (transitively) must be current in ``work`` under
    ``profile``: a variant reads its default record, and ``--set`` never runs a default run
    (that would write ``<work>/results``). ``ValueError`` naming the run and the command that
    makes it current (``work_flag``: the ``--work`` to repeat in it)."""
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    needed = {v.run_id: with_upstream(deps, [v.run_id]) - {v.run_id} for v in variants}
    if not any(needed.values()):
        return
    keys = run_keys(decl, profile, work)
    for variant in variants:
        for upstream in [r for r in keys if r in needed[variant.run_id]]:
            reasons = stale_reasons(upstream, keys[upstream], work)
            if reasons:
                flags = ("" if profile == DEFAULT_PROFILE else f" --profile {profile}") + (
                    "" if work_flag is None else f" --work {work_flag}"
                )
                raise ValueError(
                    f"{_items(variant.settings)}: run {variant.run_id} reads the record of "
                    f"upstream run {upstream}, which is not current in {work} under profile "
                    f"{profile} ({reasons[0]}); --set runs no default run, so make it current "
                    f"first: regime reproduce --only {upstream}{flags}"
                )


# --- running -------------------------------------------------------------------------------------


@dataclass
class VariantReport:
    """What ``regime reproduce --set`` did (or, ``planned``, would do): one result per variant."""

    profile: str
    work: Path
    work_flag: Path | str | None
    variants: list[Variant]
    results: list[RunResult]
    planned: bool = False

    @property
    def ok(self) -> bool:
        return all(r.status == "ran" for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        runs = []
        for index, variant in enumerate(self.variants):
            entry = {**variant.to_dict(), "verdicts": variant.verdicts_command(self.work_flag)}
            if not self.planned:
                entry.update(self.results[index].to_dict())
            runs.append(entry)
        return {
            "profile": self.profile,
            "work": str(self.work),
            "planned": self.planned,
            "ok": self.planned or self.ok,
            "variants": runs,
        }

    def table(self) -> str:
        """Per variant: its status, what was set, where it went and the command judging it."""
        lines: list[str] = []
        for index, variant in enumerate(self.variants):
            result = None if self.planned else self.results[index]
            status = "would run" if result is None else f"{result.status} in {result.seconds:.1f} s"
            sets = ", ".join(f"{s.parameter}={canonical_json(s.value)}" for s in variant.settings)
            lines.append(f"variant {variant.name} ({status}; profile {self.profile}; {sets})")
            lines += [
                f"  input {name}: {change['default']} -> {change['variant']}"
                for name, change in variant.differences().items()
            ]
            if result is not None and result.error:
                lines.append(f"  error: {result.error}")
            held = "would be written to" if result is None else "written to"
            if result is None or result.status == "ran":
                lines.append(f"  record, figures and executed notebook {held} {variant.folder}")
                command = variant.verdicts_command(self.work_flag)
                lines.append(
                    f"  judge it beside the default: {command}"
                    if command
                    else f"  run {variant.run_id} has no claim, so `regime verdicts --variant` "
                    f"has nothing to judge; read {variant.folder / 'record.json'}"
                )
            lines += [f"  note: {note}" for note in variant.notes]
        return "\n".join(lines)


def prepare_variants(
    decl: Declarations,
    items: Sequence[str],
    *,
    profile: str,
    work: Path,
    work_flag: Path | str | None,
) -> list[Variant]:
    """Resolve and check every variant (:func:`resolve_variants`, :func:`check_upstream`)."""
    check_profile(profile)
    variants = resolve_variants(decl, items, profile, work)
    check_upstream(decl, variants, profile, work, work_flag=work_flag)
    return variants


def plan_variants(
    decl: Declarations, items: Sequence[str], *, profile: str, work: Path | str | None = None
) -> VariantReport:
    """What :func:`reproduce_variants` would run and where it would write; runs nothing."""
    work_root = paths.work_dir(work).resolve()
    with directory_lock(work_root, what="regime reproduce --set --plan", shared=True):
        variants = prepare_variants(decl, items, profile=profile, work=work_root, work_flag=work)
    return VariantReport(profile, work_root, work, variants, [], planned=True)


def reproduce_variants(
    decl: Declarations,
    items: Sequence[str],
    *,
    profile: str = DEFAULT_PROFILE,
    work: Path | str | None = None,
    kernel_name: str = KERNEL_NAME,
    progress: Callable[[str], None] | None = to_stderr,
) -> VariantReport:
    """Execute the variants ``items`` make, one after another (see the module docstring).

    Every item is checked before anything runs. An interrupt kills the running notebook and
    propagates; a variant that failed keeps what it wrote (its executed notebook shows where)."""
    work_root = paths.work_dir(work).resolve()
    say = progress or (lambda _message: None)
    with writing_lock(work_root, "regime reproduce --set", say):
        variants = prepare_variants(decl, items, profile=profile, work=work_root, work_flag=work)
        clean_interrupted(decl, work_root, say)
        results = []
        try:
            for number, variant in enumerate(variants, start=1):
                notebook = relative_name(decl.runs[variant.run_id].notebook, decl.root)
                say(f"[{number}/{len(variants)}] {variant.name}: running {notebook}")
                result = execute_variant(decl, variant, work_root, kernel_name)
                say(result.line(variant.name))
                results.append(result)
        except BaseException:
            kill_children()  # Ctrl-C or SIGTERM: the running notebook ends now
            raise
    return VariantReport(profile, work_root, work, variants, results)


def execute_variant(
    decl: Declarations, variant: Variant, work: Path, kernel_name: str
) -> RunResult:
    """Run one variant's notebook into its folder (emptied first: the same parameters, the same
    folder) and check that its record is the variant's."""
    spec = decl.runs[variant.run_id]
    started = time.perf_counter()
    fresh_directory(variant.folder, inside=work)
    declared = set(notebook_parameters(spec.notebook))
    parameters = {**variant.parameters, OUTPUT_DIR_PARAMETER: str(variant.folder)}
    if "work_dir" in declared:
        parameters["work_dir"] = str(work)
    returncode, stderr = run_papermill(
        spec.notebook,
        variant.executed,
        parameters,
        work=work,
        kernel_name=kernel_name,
        pid_file=variant.folder / "child.pid",
    )
    seconds = time.perf_counter() - started
    executed = existing_file(variant.executed)

    def result(status: str, error: str | None = None, record: Path | None = None) -> RunResult:
        return RunResult(
            variant.run_id, status, seconds, key=variant.config_hash, executed=executed,
            record=record, error=error,
        )  # fmt: skip

    notebook = relative_name(spec.notebook, decl.root)
    if returncode != 0:
        return result("failed", failure_message(variant.executed, notebook, returncode, stderr))
    record_file = variant.folder / "record.json"
    if not record_file.is_file():
        return result("failed", f"notebook {notebook} wrote no record to {variant.folder}")
    try:
        record = load_record(record_file)
    except ValueError as err:
        return result("failed", f"bad record: {err}")
    if record.get("name") != variant.run_id or record.get("config_hash") != variant.config_hash:
        return result(
            "failed",
            f"{record_file}: the record is of run {record.get('name')!r} with config hash "
            f"{record.get('config_hash')!r}, not of {variant.name} as --set computed; the "
            "notebook builds its config otherwise than regime_core.registry.start (report it)",
            record_file,
        )
    write_identity(
        variant.folder,
        run_id=variant.run_id,
        config_hash=variant.config_hash,
        inputs=variant.inputs,
        default_inputs=variant.default_inputs,
    )
    return result("ran", record=record_file)
