"""The run declarations (``reproduce.yml``): which notebooks run, with which parameters per
profile, after which runs; parsed and validated before anything executes.

Its fields, what each means and holds: ``regime_core.inputs.run_declarations.RUN``.
Every notebook declares ``output_dir`` in its cell tagged ``parameters`` (the runner passes the
record directory there), and every parameter a run sets; the runs form a DAG
(:func:`topological_order`). The file is read strictly (no duplicate key, no alias:
:func:`regime_core.strict_json.parse_yaml`). Where the runs write is the work directory's
business alone (:mod:`regime_core.runner.execution`), so the file names no output location.
"""

from __future__ import annotations

import ast
import graphlib
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.inputs.run_declarations import DECLARATIONS, NOTEBOOK, PROFILES, RUN
from regime_core.strict_json import read_json_file, read_yaml_file

DEFAULT_PROFILE = "default"
#: the checkout's ``reproduce.yml``, or the installed package's copy (:func:`paths.source_root`)
#:
#: :meta hide-value:
DEFAULT_DECLARATIONS = paths.source_root() / "reproduce.yml"
#: the parameter the runner injects that every notebook must declare
OUTPUT_DIR_PARAMETER = "output_dir"


@dataclass(frozen=True)
class RunSpec:
    """One declared run: a notebook, its parameters per profile, the runs it needs first."""

    run_id: str
    notebook: Path
    parameters: Mapping[str, Any] = field(default_factory=dict)
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    description: str = ""
    #: whether the run executes with no other run beside it (``--jobs`` aside): a run that
    #: measures wall-clock time would otherwise time the machine's other notebook too
    alone: bool = False

    def parameters_for(self, profile: str) -> dict[str, Any]:
        """The common parameters overlaid with the overrides of ``profile`` (one of
        :data:`PROFILES`: :func:`check_profile`)."""
        return {**self.parameters, **self.profiles.get(profile, {})}


def check_profile(profile: str) -> None:
    """``ValueError`` unless ``profile`` is one of :data:`PROFILES` (``regime reproduce`` and
    its variants check it once, where they start)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")


@dataclass(frozen=True)
class Declarations:
    """The parsed ``reproduce.yml``: runs by id (in file order)."""

    path: Path
    runs: Mapping[str, RunSpec]

    @property
    def root(self) -> Path:
        return self.path.parent


def load_declarations(path: Path | str | None = None) -> Declarations:
    """Parse and validate ``reproduce.yml``: ``ValueError`` naming the file, the run and the
    field for what its declaration refuses, a notebook that is missing or declares no parameter
    a run sets, a dependency on no run, or a cycle."""
    file = Path(path) if path is not None else DEFAULT_DECLARATIONS
    try:
        raw = read_yaml_file(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"no run declarations at {file}") from None
    runs = {
        run_id: _run_spec(file, run_id, RUN.read(body, where=f"{file}: run {run_id!r}"))
        for run_id, body in DECLARATIONS.read(raw, where=str(file))["runs"].items()
    }
    topological_order({rid: spec.depends_on for rid, spec in runs.items()}, source=str(file))
    return Declarations(path=file.resolve(), runs=runs)


def _run_spec(file: Path, run_id: str, body: Mapping[str, Any]) -> RunSpec:
    """A run as read, with what the declaration cannot say: its notebook exists and declares
    ``output_dir`` and every parameter the run sets."""
    where = f"{file}: run {run_id!r}"
    notebook = (file.resolve().parent / body["notebook"]).resolve()
    if not notebook.exists():  # a FIFO or directory there is named by notebook_parameters
        raise ValueError(f"{where}: notebook {body['notebook']} does not exist (at {notebook})")
    declared = notebook_parameters(notebook)
    used = {OUTPUT_DIR_PARAMETER}.union(body["parameters"], *body["profiles"].values())
    undeclared = sorted(used - set(declared))
    if undeclared:
        raise ValueError(
            f"{where}: parameters {undeclared} are not declared in the parameters cell of "
            f"{body['notebook']} (it declares {sorted(declared)}; every notebook declares "
            f"{OUTPUT_DIR_PARAMETER!r}, where the runner passes the record directory)"
        )
    return RunSpec(run_id=run_id, **{**body, "notebook": notebook})


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned at the top level of the notebook's cell tagged ``parameters``, in order.

    Read with ``ast`` rather than papermill, so that a notebook opened in plain Jupyter (Binder
    installs no papermill) can find its own parameters; ``tests/test_runner_declarations.py``
    checks that papermill's parser reads the same names from every shipped notebook."""
    return list(dict.fromkeys(name for name, _ in _parameter_assignments(notebook)))


def notebook_defaults(notebook: Path) -> dict[str, Any]:
    """The value each parameter of the notebook's ``parameters`` cell has when papermill passes
    none (its last assignment there), read as a Python literal: what a run of the notebook sees
    for a parameter nobody sets (``regime reproduce --set`` names a variant's folder from it).
    ``ValueError`` naming the notebook and the parameter when a value is not a literal."""
    values: dict[str, Any] = {}
    for name, node in _parameter_assignments(notebook):
        try:
            values[name] = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):
            raise ValueError(
                f"{notebook}: the 'parameters' cell sets {name!r} to an expression, not a "
                f"literal ({ast.unparse(node)}); write its value out"
            ) from None
    return values


def _parameter_assignments(notebook: Path) -> list[tuple[str, ast.expr]]:
    """(name, value) of each top-level assignment to a name in the ``parameters`` cell."""
    # ValueError naming the notebook when it is not JSON, or not a notebook
    cells = NOTEBOOK.read(read_json_file(notebook), where=str(notebook))["cells"]
    tagged = [cell for cell in cells if "parameters" in cell["metadata"]["tags"]]
    if not tagged:
        raise ValueError(f"{notebook}: no cell is tagged 'parameters' (papermill needs one)")
    source = "".join(tagged[0]["source"])
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise ValueError(
            f"{notebook}: the 'parameters' cell is not valid Python (line {err.lineno}: {err.msg})"
        ) from err
    found: list[tuple[str, ast.expr]] = []
    for statement in tree.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else []
        )
        value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
        for target in targets:
            if isinstance(target, ast.Name):
                found.append((target.id, value if value is not None else ast.Constant(None)))
    return found


# --- the DAG -------------------------------------------------------------------------------------


def topological_order(
    dependencies: Mapping[str, Sequence[str]], source: str = "reproduce.yml"
) -> list[str]:
    """Order run ids so that every run follows the runs it depends on (``graphlib``); of the
    runs whose dependencies are done, the first declared comes first.

    Raises ``ValueError`` for a dependency on an undeclared run or for a cycle (naming it).

    >>> topological_order({"b": ["a"], "a": [], "c": ["a", "b"]})
    ['a', 'b', 'c']
    """
    for run_id, deps in dependencies.items():
        for dep in deps:
            if dep not in dependencies:
                raise ValueError(
                    f"{source}: run {run_id!r} depends on {dep!r}, which is not declared "
                    f"(declared: {', '.join(dependencies) or 'none'})"
                )
    sorter = graphlib.TopologicalSorter(dependencies)
    try:
        sorter.prepare()
    except graphlib.CycleError as err:
        cycle = list(reversed(err.args[1]))  # graphlib lists it against the arrows
        raise ValueError(f"{source}: dependency cycle {' -> '.join(cycle)}") from err
    position = {run_id: index for index, run_id in enumerate(dependencies)}
    ready = [(position[r], r) for r in sorter.get_ready()]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:  # the first declared of the runs whose dependencies are done, one at a time
        _, run_id = heapq.heappop(ready)
        order.append(run_id)
        sorter.done(run_id)
        for now_ready in sorter.get_ready():
            heapq.heappush(ready, (position[now_ready], now_ready))
    return order


def with_upstream(dependencies: Mapping[str, Sequence[str]], selected: Sequence[str]) -> set[str]:
    """The selected runs and every run they depend on, transitively."""
    keep: set[str] = set()
    stack = list(selected)
    while stack:
        run_id = stack.pop()
        if run_id not in keep:
            keep.add(run_id)
            stack.extend(dependencies[run_id])
    return keep
