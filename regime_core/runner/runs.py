"""Every run of the book, registered once: its config, its run function, its notebook, its
record, its chapter and the tables and figures its pages show.

A run is one notebook executed by ``regime reproduce`` (its parameters, profiles and
dependencies are declared in ``reproduce.yml`` under the same id), writing one results record
named after it, read by one chapter of the book; the claims of the paper judged on that record
are the entries of ``paper_claims.yml`` whose ``ours.run`` is the run's id (:meth:`Run.claims`).

An entry names its config class and run function as ``"module:attribute"`` strings, imported
when first read, and its tables and figures by their names in :mod:`regime_core.book.tables` and
:mod:`regime_core.book.figures`: importing the table (every notebook does, through
:mod:`regime_core.registry`) imports no run's own module and nothing of the book, and a run's
reproduce key counts the modules of its own entry alone (:mod:`regime_core.runner.keys`).

How to add a run, a claim, an encoder or a figure: ``CONTRIBUTING.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core.config import ConfigMixin
from regime_core.paper import Claim, load_claims
from regime_core.runner.declarations import RunSpec, load_declarations
from regime_core.runner.identity import describe_inputs


@dataclass(frozen=True)
class Run:
    """One registered run (see the module docstring). ``config_ref`` names its config class and
    ``run_ref`` the function its notebook calls with ``(config, context)`` (None: a teaching
    notebook that calls several), each as an object reference ``"module:attribute"`` imported
    when first read (:attr:`config`, :attr:`run`). ``chapter`` is the book page of its prose;
    ``tables`` and ``figures`` name the functions of :mod:`regime_core.book.tables` and
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
    tables: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    generates_its_data: bool = False
    files: Mapping[str, str] = field(default_factory=dict)

    @property
    def config(self) -> type[ConfigMixin]:
        """The run's config class (imported on first use)."""
        found: type[ConfigMixin] = _resolve(self.config_ref)
        return found

    @property
    def run(self) -> Callable[..., Any] | None:
        """The function the run's notebook calls, imported on first use (None for a teaching run
        whose notebook calls several)."""
        return None if self.run_ref is None else _resolve(self.run_ref)

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
        resolvers = {p: _resolve(t) for p, t in self.files.items()}
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
def _resolve(target: str) -> Any:
    """The object ``"module:attribute"`` names (imported once). The entries are the package's
    own, each imported by ``tests/test_registry.py``: a wrong one fails there, in Python's own
    words naming the module or the attribute."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


#: Every run, by id (the order of the book).
RUNS: dict[str, Run] = {
    run.id: run
    for run in (
        Run(
            "toyworld",
            "regime_core.teaching.lesson:LessonConfig",
            "regime_core.teaching.demo:run_demo",
            "book/start/toyworld",
            tables=("demo_table", "hit_table"),
            figures=("sweep", "knockout_bars", "regime_arms"),
            generates_its_data=True,
        ),
        Run(
            "exercises",
            "regime_core.teaching.lesson:LessonConfig",
            None,
            "book/start/exercises",
            tables=("hit_table", "table"),
            figures=("sweep",),
            generates_its_data=True,
        ),
        Run(
            "data_regimes",
            "regime_core.experiments.data_regimes:OverviewConfig",
            "regime_core.experiments.data_regimes:run_overview",
            "book/claims/data_regimes",
            tables=(
                "prepared_table",
                "exclusions_table",
                "nested_counts",
                "predicates_table",
                "regimes_table",
                "worked_example_markdown",
            ),
            figures=("regime_shares",),
        ),
        Run(
            "t1_auc_margin",
            "regime_core.experiments.t1_auc_margin:T1Config",
            "regime_core.experiments.t1_auc_margin:run_t1",
            "book/claims/t1_auc_margin",
            tables=("t1_table",),
            figures=("t1_scatter", "t1_r2"),
        ),
        Run(
            "t2_regime_decomposition",
            "regime_core.experiments.t2_regime_decomposition:T2Config",
            "regime_core.experiments.t2_regime_decomposition:run_t2",
            "book/claims/t2_regime_decomposition",
            tables=("t2_table",),
            figures=("regime_deltas", "key_union_vs_q", "t2_hits", "t2_deltas", "forest"),
        ),
        Run(
            "t3_brel_knockout",
            "regime_core.experiments.t3_brel_knockout:T3Config",
            "regime_core.experiments.t3_brel_knockout:run_t3",
            "book/claims/t3_brel_knockout",
            tables=("t3_table", "t3_hits_table", "t3_audit_table"),
            figures=("t3_drops",),
        ),
        Run(
            "router_train",
            "regime_core.experiments.router_train:RouterConfig",
            "regime_core.experiments.router_train:train_router",
            "book/claims/router_train",
            tables=(
                "routing_data_table",
                "selector_table",
                "selector_cost_table",
                "labels_table",
                "breakdown_table",
                "router_summary",
                "selection_table",
                "selection_routed_table",
            ),
            figures=("selector_agreement", "router_training", "router_coefficients"),
        ),
        Run(
            "routing_latency",
            "regime_core.experiments.routing_latency:LatencyConfig",
            "regime_core.experiments.routing_latency:run_latency",
            "book/claims/router_train",
            tables=("latency_table",),
            figures=("routing_latency",),
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
                "transfer_table",
                "transfer_comparison_table",
                "headline_table",
                "selection_routed_table",
            ),
            figures=("zero_shot_hits",),
        ),
        Run(
            "ablations",
            "regime_core.experiments.ablations:AblationConfig",
            "regime_core.experiments.ablations:run_ablations",
            "book/claims/ablations",
            tables=(
                "routing_table",
                "soft_table",
                "oracle_gap_table",
                "alpha_rule_table",
                "pool_invariance_table",
                "ablation_summary",
            ),
            figures=("alpha_sweep", "leave_one_feature_out"),
        ),
        # issue 26: a statement of ours (origin: ours in paper_claims.yml), its own block
        Run(
            "alpha_transfer",
            "regime_core.experiments.alpha_transfer:AlphaTransferConfig",
            "regime_core.experiments.alpha_transfer:run_alpha_transfer",
            "book/claims/alpha_transfer",
            figures=("alpha_transfer",),
        ),
        Run(
            "robustness",
            "regime_core.experiments.robustness_grid:RobustnessConfig",
            "regime_core.experiments.robustness:run_robustness",
            "book/claims/robustness",
            tables=("robustness_table",),
            figures=("specification_curve", "specification_curves"),
        ),
    )
}
