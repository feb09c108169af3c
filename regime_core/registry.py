"""Every run of the book, registered once: its config, its run function, its notebook, its
record, its chapter and the tables and figures its pages show.

A run is one notebook executed by ``regime reproduce`` (its parameters, profiles and
dependencies are declared in ``reproduce.yml`` under the same id), writing one results record
named after it, read by one chapter of the book; the claims of the paper judged on that record
are the entries of ``paper_claims.yml`` whose ``ours.run`` is the run's id (:meth:`Run.claims`).
The tests iterate :data:`RUNS` instead of listing runs, notebooks or configs themselves.

An entry names its config class and run function as ``"module:attribute"`` strings, imported
when first read: importing the registry (every notebook does) imports no run's own module, and the
reproduce key of a run counts the modules of its own entry, not those of every run in the table
(:mod:`regime_core.runner.keys` reads the entries statically).

A run's notebook opens with :func:`start`, which replaces the boilerplate every notebook would
repeat: it builds the run's config from the notebook's papermill parameters, resolves the work
and output directories, and writes and reads back the record (:meth:`NotebookRun.record`)::

    run = start("t3_brel_knockout", globals())        # the parameters cell's names
    result, outcomes = run_t3(run.config, run.context)
    record = run.record(result.to_numbers(), inputs=outcomes.input_hashes(), figures=[...])

How to add a run, a claim, an encoder or a figure: ``CONTRIBUTING.md``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.book import figures as _F
from regime_core.book import tables as _T
from regime_core.book.figures import Figure
from regime_core.book.figures import show as show_figure
from regime_core.book.tables import Borrowed, Table, settings_table
from regime_core.config import ConfigMixin
from regime_core.experiments.context import Context
from regime_core.paper import Claim, load_claims
from regime_core.runner.declarations import (
    DEFAULT_PROFILE,
    RunSpec,
    load_declarations,
    notebook_defaults,
    notebook_parameters,
)
from regime_core.runner.identity import describe_inputs, variant_hash, write_identity
from regime_core.runner.records import Record, load_record, write_record


@dataclass(frozen=True)
class Run:
    """One registered run (see the module docstring). ``config_ref`` names its config class and
    ``run_ref`` the function its notebook calls with ``(config, context)`` (None: a teaching
    notebook that calls several), each as an object reference ``"module:attribute"``; they are
    imported when first read (:attr:`config`, :attr:`run`), so importing the registry imports no
    run's own module, and the reproduce key of a run counts the modules of its own entry alone
    (:mod:`regime_core.runner.keys`). ``chapter`` is the book page of its prose; ``tables`` and
    ``figures`` the functions of :mod:`regime_core.book.tables` and
    :mod:`regime_core.book.figures` its notebook shows; ``generates_its_data``: a teaching run
    whose world is generated, so it may start in a work directory that does not exist yet (every
    other run reads what ``regime data prepare`` wrote there). ``files``: the notebook
    parameters outside the config that name a file, each with the function resolving its value
    to that file (``"module:attribute"``, called with ``(value, work)``), so that a variant's
    identity hashes the file's content (:mod:`regime_core.runner.identity`)."""

    id: str
    config_ref: str
    run_ref: str | None
    chapter: str
    tables: tuple[Callable[..., Any], ...] = ()
    figures: tuple[Callable[..., Any], ...] = ()
    generates_its_data: bool = False
    files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, target in [
            ("config_ref", self.config_ref),
            ("run_ref", self.run_ref),
            *((f"files[{p!r}]", t) for p, t in self.files.items()),
        ]:
            module, colon, attribute = (target or "").partition(":")
            if target is not None and not (colon and module and attribute.isidentifier()):
                raise ValueError(
                    f"{__file__}: run {self.id!r}: {name} must name its object as "
                    f'"module:attribute" (e.g. "regime_core.experiments.t1_auc_margin:T1Config"), '
                    f"not {target!r}"
                )

    @property
    def config(self) -> type[ConfigMixin]:
        """The run's config class (imported on first use)."""
        found = _resolve(self.config_ref, f"run {self.id!r}: config_ref")
        if not (isinstance(found, type) and issubclass(found, ConfigMixin)):
            raise ValueError(
                f"{__file__}: run {self.id!r}: config_ref {self.config_ref!r} is not a config "
                "class (a subclass of regime_core.config.ConfigMixin)"
            )
        return found

    @property
    def run(self) -> Callable[..., Any] | None:
        """The function the run's notebook calls, imported on first use (None for a teaching run
        whose notebook calls several)."""
        if self.run_ref is None:
            return None
        found = _resolve(self.run_ref, f"run {self.id!r}: run_ref")
        if not callable(found):
            raise ValueError(
                f"{__file__}: run {self.id!r}: run_ref {self.run_ref!r} is not callable"
            )
        return found

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules the entry names (its config's and its run function's), sorted."""
        named = (self.config_ref, *([self.run_ref] if self.run_ref else []))
        return tuple(sorted({target.partition(":")[0] for target in named}))

    @property
    def spec(self) -> RunSpec:
        """The run's declaration in ``reproduce.yml`` (parameters, profiles, dependencies)."""
        return _declared()[self.id]

    @property
    def notebook(self) -> Path:
        return self.spec.notebook

    def inputs(
        self, parameters: Mapping[str, Any], work: Path, upstream: Sequence[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """What an execution with the notebook's ``parameters`` reads besides its config (its
        other parameters, the files they name, the records of the runs ``upstream``, by
        default those ``reproduce.yml`` declares):
        :func:`regime_core.runner.identity.describe_inputs`."""
        fields = {f.name for f in dataclasses.fields(self.config)}  # type: ignore[arg-type]
        resolvers = {
            p: _resolve(t, f"run {self.id!r}: files[{p!r}]") for p, t in self.files.items()
        }
        return describe_inputs(
            parameters,
            config_fields=fields,
            files=resolvers,
            upstream=self.spec.depends_on if upstream is None else upstream,
            work=work,
        )

    def claims(self, claims: Sequence[Claim] | None = None) -> list[Claim]:
        """The claims of ``paper_claims.yml`` (or of ``claims``) judged on this run's record."""
        return [c for c in (load_claims() if claims is None else claims) if c.run == self.id]


@functools.cache
def _declared() -> Mapping[str, RunSpec]:
    return load_declarations().runs


@functools.cache
def _resolve(target: str, where: str) -> Any:
    """The object ``"module:attribute"`` names (imported once)."""
    module, _, attribute = target.partition(":")
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or not module.startswith(err.name):
            raise  # a module it imports is missing, not the one named here
        raise ValueError(f"{__file__}: {where}: no module {module!r} ({target!r})") from err
    if not hasattr(found, attribute):
        raise ValueError(f"{__file__}: {where}: module {module!r} has no {attribute!r}")
    return getattr(found, attribute)


#: Every run, by id (the order of the book).
RUNS: dict[str, Run] = {
    run.id: run
    for run in (
        Run(
            "toyworld",
            "regime_core.teaching.lesson:LessonConfig",
            "regime_core.teaching.demo:run_demo",
            "book/start/toyworld",
            tables=(_T.demo_table, _T.hit_table),
            figures=(_F.sweep, _F.knockout_bars, _F.regime_arms),
            generates_its_data=True,
        ),
        Run(
            "exercises",
            "regime_core.teaching.lesson:LessonConfig",
            None,
            "book/start/exercises",
            tables=(_T.hit_table, _T.table),
            figures=(_F.sweep,),
            generates_its_data=True,
        ),
        Run(
            "data_regimes",
            "regime_core.experiments.data_regimes:OverviewConfig",
            "regime_core.experiments.data_regimes:run_overview",
            "book/claims/data_regimes",
            tables=(
                _T.prepared_table,
                _T.exclusions_table,
                _T.nested_counts,
                _T.predicates_table,
                _T.regimes_table,
                _T.worked_example_markdown,
            ),
            figures=(_F.regime_shares,),
        ),
        Run(
            "t1_auc_margin",
            "regime_core.experiments.t1_auc_margin:T1Config",
            "regime_core.experiments.t1_auc_margin:run_t1",
            "book/claims/t1_auc_margin",
            tables=(_T.t1_table,),
            figures=(_F.t1_scatter, _F.t1_r2),
        ),
        Run(
            "t2_regime_decomposition",
            "regime_core.experiments.t2_regime_decomposition:T2Config",
            "regime_core.experiments.t2_regime_decomposition:run_t2",
            "book/claims/t2_regime_decomposition",
            tables=(_T.t2_table,),
            figures=(_F.regime_deltas, _F.key_union_vs_q, _F.t2_hits, _F.t2_deltas, _F.forest),
        ),
        Run(
            "t3_brel_knockout",
            "regime_core.experiments.t3_brel_knockout:T3Config",
            "regime_core.experiments.t3_brel_knockout:run_t3",
            "book/claims/t3_brel_knockout",
            tables=(_T.t3_table, _T.t3_hits_table, _T.t3_audit_table),
            figures=(_F.t3_drops,),
        ),
        Run(
            "router_train",
            "regime_core.experiments.router_train:RouterConfig",
            "regime_core.experiments.router_train:train_router",
            "book/claims/router_train",
            tables=(
                _T.routing_data_table,
                _T.selector_table,
                _T.selector_cost_table,
                _T.labels_table,
                _T.breakdown_table,
                _T.router_summary,
                _T.selection_table,
                _T.selection_routed_table,
            ),
            figures=(_F.selector_agreement, _F.router_training, _F.router_coefficients),
        ),
        Run(
            "routing_latency",
            "regime_core.experiments.routing_latency:LatencyConfig",
            "regime_core.experiments.routing_latency:run_latency",
            "book/claims/router_train",
            tables=(_T.latency_table,),
            figures=(_F.routing_latency,),
        ),
        Run(
            "zero_shot_transfer",
            "regime_core.experiments.zero_shot_transfer:TransferConfig",
            "regime_core.experiments.zero_shot_transfer:transfer_router",
            "book/claims/zero_shot_transfer",
            files={
                "router_file": "regime_core.experiments.zero_shot_transfer:router_file_path",
                "train_record": "regime_core.experiments.zero_shot_transfer:train_record_path",
            },
            tables=(
                _T.transfer_table,
                _T.transfer_comparison_table,
                _T.headline_table,
                _T.selection_routed_table,
            ),
            figures=(_F.zero_shot_hits,),
        ),
        Run(
            "ablations",
            "regime_core.experiments.ablations:AblationConfig",
            "regime_core.experiments.ablations:run_ablations",
            "book/claims/ablations",
            tables=(
                _T.routing_table,
                _T.soft_table,
                _T.oracle_gap_table,
                _T.alpha_rule_table,
                _T.pool_invariance_table,
                _T.ablation_summary,
            ),
            figures=(_F.alpha_sweep, _F.leave_one_feature_out),
        ),
        # issue 26: a statement of ours (origin: ours in paper_claims.yml), its own block
        Run(
            "alpha_transfer",
            "regime_core.experiments.alpha_transfer:AlphaTransferConfig",
            "regime_core.experiments.alpha_transfer:run_alpha_transfer",
            "book/claims/alpha_transfer",
            figures=(_F.alpha_transfer,),
        ),
        Run(
            "robustness",
            "regime_core.experiments.robustness_grid:RobustnessConfig",
            "regime_core.experiments.robustness:run_robustness",
            "book/claims/robustness",
            tables=(_T.robustness_table,),
            figures=(_F.specification_curve, _F.specification_curves),
        ),
    )
}


# --- the notebook's side -------------------------------------------------------------------------


@dataclass
class NotebookRun:
    """One execution of a run's notebook: its config, where it reads and writes, and the
    figures it has saved so far (they go into its record)."""

    run: Run
    config: Any
    parameters: Mapping[str, Any]
    output_dir: Path
    work: Path
    context: Context
    saved: list[Path] = field(default_factory=list)
    borrowed: list[Borrowed] = field(default_factory=list)

    def save(self, figure: Figure) -> Figure:
        """Save ``figure`` into the record's directory (it joins the record's figures)."""
        self.saved.append(figure.save(self.output_dir))
        return figure

    def show(self, figure: Figure) -> None:
        """Save ``figure`` (:meth:`save`), then show it with its caption."""
        show_figure(self.save(figure))

    def manifest_hash(self) -> str | None:
        """The digest of the prepared data's manifest over the datasets this run reads
        (:func:`regime_core.runner.keys.manifest_digest`, the component of its reproduce key;
        None: no data prepared here)."""
        from regime_core.runner.keys import datasets_read, manifest_digest

        if not (paths.prepared_dir(self.work) / "manifest.json").is_file():
            return None
        return manifest_digest(self.work, datasets_read(self.parameters))

    def record(
        self,
        numbers: Mapping[str, Any],
        *,
        inputs: Mapping[str, str] | None = None,
        figures: Sequence[Figure] = (),
    ) -> Record:
        """Write the run's record (its config, ``numbers``, the manifest's hash with
        ``inputs``, the figures saved so far and ``figures``) and return it as read back, so
        that everything shown after it comes from the record."""
        for figure in figures:
            self.save(figure)
        manifest = self.manifest_hash()
        written = write_record(
            self.output_dir,
            name=self.run.id,
            config=self.config,
            numbers=numbers,
            inputs={**({"manifest": manifest} if manifest else {}), **dict(inputs or {})},
            figures=self.saved,
        )
        return load_record(written)

    def claims(self) -> str:
        """The claims of the paper judged on this run's record, as Markdown, in the words of
        ``paper_claims.yml`` (where each claim is described once; the book reads it there too)."""
        found = self.run.claims()
        if not found:
            return ""
        if len(found) == 1:
            return f"**The claim** (`{found[0].id}`). {found[0].claim}."
        return "**The claims** judged here:\n\n" + "\n".join(
            f"- {c.claim} (`{c.id}`)" for c in found
        )

    def borrow(self, run_id: str, path: Path | str | None = None, *, what: str) -> Record | None:
        """Read the record of run ``run_id`` whose numbers this notebook repeats (``what``: which,
        in a reader's words), from ``path`` (None: ``<work>/results/<run_id>/record.json``), and
        remember it: :meth:`settings` names that run and its record's encoder under the table,
        and says so when it is not this run's. None (also remembered, and said): no record there.
        """
        registered(run_id, "borrow")
        if path is None:
            path = paths.results_dir(self.work) / run_id / "record.json"
        path = Path(path)
        record = load_record(path) if path.is_file() else None
        if record is not None and record.get("name") != run_id:
            raise ValueError(
                f"borrow: {path} is the record of run {record.get('name')!r}, not of "
                f"{run_id!r}; pass the record that run {run_id!r} wrote"
            )
        try:
            shown = path.resolve().relative_to(self.work.resolve())
        except ValueError:  # a record outside the work directory: its full path
            shown = path
        config = None if record is None else record["config"]
        self.borrowed.append(Borrowed(run_id, what, str(shown), config))
        return record

    def settings(self, keys: Sequence[str]) -> Table:
        """The settings table of the run's config: the fields ``keys`` and every field that
        differs from the run's default config (marked, with its default), and a note naming
        each record :meth:`borrow` read (its run and encoder)."""
        return settings_table(
            self.config, keys, caption="Settings of this run", borrowed=self.borrowed
        )


def registered(run_id: str, where: str) -> Run:
    """The run ``run_id`` of :data:`RUNS`; ``ValueError`` naming ``where`` and the runs known."""
    if run_id not in RUNS:
        raise ValueError(f"{where}: {run_id!r} is no registered run; known: {sorted(RUNS)}")
    return RUNS[run_id]


#: how papermill's Python translator opens the cell it injects (``# Parameters`` then one
#: assignment a line); a notebook's own parameters cell opens otherwise
INJECTED_HEADER = "# Parameters\n"


def injected_parameters(namespace: Mapping[str, Any]) -> list[str]:
    """The names papermill's injected cell assigned, read from IPython's input history
    (``In`` in a notebook's ``globals()``); ``[]`` outside a kernel or without such a cell.

    >>> injected_parameters({"In": ["", "# Parameters\\nitem_set = 'strict'\\nk = 5\\n"]})
    ['item_set', 'k']
    """
    history = namespace.get("In")
    if not isinstance(history, list):
        return []
    for source in reversed(history):
        if isinstance(source, str) and source.startswith(INJECTED_HEADER):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return []
            return [
                target.id
                for node in tree.body
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name)
            ]
    return []


def start(run_id: str, namespace: Mapping[str, Any]) -> NotebookRun:
    """Open run ``run_id`` in its notebook: ``namespace`` holds the notebook's parameters (pass
    ``globals()``: only the names its parameters cell declares are read). The config is built
    by ``config.from_parameters`` (None: the default), ``work_dir`` (None: ``REGIME_WORK_DIR``,
    else the default: :func:`regime_core.paths.work_dir`) gives the work directory of the whole
    kernel and the :class:`Context`, and ``output_dir`` is created: the folder ``regime
    reproduce`` passes, or for a notebook run by hand (``output_dir`` None, the notebooks'
    default) the variant's own folder ``<work>/variants/<run>/<variant hash>``
    (:func:`regime_core.paths.variant_dir`): the config hash, with what the run reads besides
    its config (:mod:`regime_core.runner.identity`), which it writes there too."""
    run = registered(run_id, "start")
    declared = notebook_parameters(run.notebook)
    unknown = [name for name in injected_parameters(namespace) if name not in declared]
    if unknown:  # papermill only warns and injects it; the run would ignore it
        raise ValueError(
            f"{run.notebook.name} (run {run_id}) has no parameter "
            f"{', '.join(map(repr, unknown))}, which papermill passed; its parameters are "
            f"{', '.join(declared)}"
        )
    parameters = {name: namespace[name] for name in declared if name in namespace}
    # the one rule of regime_core.paths.work_dir: work_dir, else REGIME_WORK_DIR, else the
    # default; named for the whole kernel, so a config checking a dataset of one's own finds it
    work = paths.choose_work_dir(parameters.get("work_dir"))
    # a work directory named explicitly must exist when the run reads prepared data there (a
    # typo would otherwise surface as a missing manifest); a generated world's run creates it
    named = parameters.get("work_dir") is not None or "REGIME_WORK_DIR" in os.environ
    if named and not run.generates_its_data and not work.is_dir():
        raise FileNotFoundError(
            f"work_dir: the directory {work} does not exist. Pass the work directory that "
            "`regime data prepare --work DIR` filled, as the notebook's work_dir parameter or "
            "REGIME_WORK_DIR"
        )
    config = run.config.from_parameters(**parameters)
    chosen = parameters.get("output_dir")
    if chosen is None:  # run by hand: the variant's own folder, named by all it reads
        # with the notebook's defaults under what was passed, as `regime reproduce --set` does:
        # the same parameters name the same folder whether or not a default was spelled out
        inputs = run.inputs({**notebook_defaults(run.notebook), **parameters}, work)
        output_dir = paths.variant_dir(run.id, variant_hash(config.config_hash(), inputs), work)
        output_dir.mkdir(parents=True, exist_ok=True)
        default = {**notebook_defaults(run.notebook), **run.spec.parameters_for(DEFAULT_PROFILE)}
        write_identity(
            output_dir,
            run_id=run.id,
            config_hash=config.config_hash(),
            inputs=inputs,
            default_inputs=run.inputs(default, work),
        )
    else:
        output_dir = paths.explicit_path(chosen, "output_dir")
    output_dir.mkdir(parents=True, exist_ok=True)
    return NotebookRun(run, config, parameters, output_dir, work, Context(work=work))
