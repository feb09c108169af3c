"""A run's notebook side: every notebook opens its run of :data:`RUNS` (the table of runs,
:mod:`regime_core.runner.runs`) with :func:`start`, which replaces the boilerplate every notebook
would repeat, and shows its figures and settings with the book's helpers (the table of runs
imports nothing of the book). :func:`start` builds the run's config from the notebook's papermill
parameters, resolves the work and output directories, and writes and reads back the record
(:meth:`~regime_core.registry.NotebookRun.record`)::

    run = start("t3_brel_knockout", globals())        # the parameters cell's names
    result, outcomes = run_t3(run.config, run.context)
    record = run.record(result.to_numbers(), inputs=outcomes.input_hashes(), figures=[...])
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.book.figures import Figure
from regime_core.book.figures import show as show_figure
from regime_core.book.tables import Borrowed, Table, settings_table
from regime_core.experiments.context import Context
from regime_core.runner.declarations import DEFAULT_PROFILE, notebook_defaults, notebook_parameters
from regime_core.runner.identity import variant_hash, write_identity
from regime_core.runner.records import Record, load_record, write_record
from regime_core.runner.runs import RUNS, Run


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
            inputs={
                **({"manifest": manifest} if manifest else {}),
                **dict(inputs or {}),
            },
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
