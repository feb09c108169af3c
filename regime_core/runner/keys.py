"""The reproduce key: what can change a run's numbers, hashed, so that nothing else reruns it.

A run's key is a SHA-256 over its *components*:

* ``notebook``: the sources of the notebook's code cells (markdown and outputs do not count);
* ``parameters`` and ``profile``: its resolved parameters;
* ``manifest``: the entries of the prepared-data manifest ``<work>/prepared/manifest.json`` for
  the datasets the run reads (:func:`datasets_read`; ``"absent"`` before preparation), so that
  preparing a dataset of one's own reruns only the runs that read it (:func:`manifest_digest`);
* ``modules``: one hash per ``regime_core`` module its computation imports (the rule below);
* ``data_files``: the package data those modules read (:data:`DATA_FILES`);
* ``upstream``: the keys of the runs it depends on (a change upstream reruns everything below).

**Which modules count.** The imports of the notebook's code cells are read statically with
``ast`` (IPython magics are translated first), and followed through every module they reach,
transitively: ``import a.b``, ``from a import b`` (``b`` a module or a name), relative imports, and
any string constant that names a package module (``importlib.import_module("regime_core.x")``);
imports inside functions count too, and so does each ``__init__`` of the packages on the way. The
walk never enters the presentation wing :data:`PRESENTATION` (``regime_core/book/``: figures,
tables, display names, the checks): those modules draw and format what the records hold, and no
number a notebook records passes through them (a record lists its figures by file name; its
numbers come from ``experiments/``, ``teaching/`` and the layers below). The CLI is never imported
by a notebook, so it does not count either. Editing a figure's code therefore redraws nothing by
itself: ``regime reproduce --force`` does.

**The registry.** Every notebook opens with ``from regime_core.registry import start``, which
imports the table of runs (:data:`regime_core.runner.runs.RUNS`, the module :data:`REGISTRY`).
Its entries (each ``Run(...)`` call, :data:`ENTRY`) name each run's config class and run
function by string (``"regime_core.experiments.t1_auc_margin:T1Config"``, imported when first
used): roots of that entry's run only, not imports of the table (:func:`registry_entries`). So
editing ``router/latency.py`` reruns ``routing_latency`` (and the runs downstream of it), nothing
else; editing the table's module (any entry included), what it and :mod:`regime_core.registry`
import, or a module every experiment imports reruns every run. Anywhere else a string naming a
package module stays a dynamic import.

**What counts in a module.** Its syntax tree without docstrings (every statement that is a bare
string: module, class, function and attribute docstrings), so comments, formatting and
docstrings never rerun anything; any other change, however small, does.

A run is also rerun when its stamp (:mod:`regime_core.runner.stamps`) no longer matches what is on
disk: outputs changed since they were written, a record whose ``inputs`` disagree with the
stamp's components, or an upstream record that changed. :func:`changed_components` names what
differs between two sets of components, for ``regime reproduce --plan``.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

from regime_core import paths
from regime_core.integrity import read_bytes
from regime_core.runner.declarations import Declarations, topological_order
from regime_core.runner.records import canonical_json, hash_file
from regime_core.strict_json import read_json_file

PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: the modules the walk never enters (they present numbers, they do not compute recorded ones)
PRESENTATION: tuple[str, ...] = ("book",)
#: package data read by a module (relative to the directory holding the package), whose bytes
#: the module's key covers too (``regime route train`` rewrites the packaged router)
DATA_FILES: Mapping[str, tuple[str, ...]] = {
    "paper": ("paper_claims.yml",),
    "router.model": ("regime_core/resources/default_router.json",),
    # the JavaScript router a latency run times, and its harness
    "router.latency": ("regime_core/resources/router.js", "regime_core/resources/router_timing.js"),
}
#: the module of the table of runs (dotted, in the package) and the call that registers one run in
#: it: the modules an entry names (its config's and its run function's, ``"module:attribute"``)
#: are roots of that run's key alone, not imports of the table (see the module docstring)
REGISTRY: str = "runner.runs"
ENTRY: str = "Run"
#: the components in the order :func:`changed_components` reports them
COMPONENTS: tuple[str, ...] = (
    "notebook",
    "parameters",
    "profile",
    "manifest",
    "modules",
    "data_files",
    "upstream",
)


# --- notebooks -----------------------------------------------------------------------------------


def _cell_source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _code_cells(notebook: Path) -> list[str]:
    try:
        body = read_json_file(notebook)
    except OSError as err:
        raise ValueError(f"{notebook}: cannot read the notebook ({err})") from err
    cells = body.get("cells", []) if isinstance(body, dict) else []
    return [_cell_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]


def notebook_code_hash(notebook: Path) -> str:
    """SHA-256 over the sources of the notebook's code cells (markdown and outputs ignored)."""
    return hashlib.sha256(canonical_json(_code_cells(notebook)).encode("utf-8")).hexdigest()


def _python_of_cell(source: str) -> str:
    """A code cell as Python: IPython's magics and shell escapes become calls."""
    if not any(line.lstrip().startswith(("%", "!", "?")) for line in source.splitlines()):
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    return str(TransformerManager().transform_cell(source))


# --- the package's modules -----------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    """One module of the package: its dotted name, file, hash and the modules it imports."""

    name: str
    file: Path
    digest: str
    imports: frozenset[str]
    #: the registry's entries, ``(run id, the modules it names)`` (empty for any other module)
    entries: tuple[tuple[str, frozenset[str]], ...] = ()


def _module_name(package_dir: Path, file: Path) -> str:
    parts = [package_dir.name, *file.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package by dotted name (``__pycache__`` left out)."""
    return {
        _module_name(package_dir, file): file
        for file in sorted(package_dir.rglob("*.py"))
        if "__pycache__" not in file.parts
    }


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _is_entry(node: ast.AST) -> TypeGuard[ast.Call]:
    """A call of :data:`ENTRY` (``Run(...)`` or ``registry.Run(...)``)."""
    if not isinstance(node, ast.Call):
        return False
    called = node.func
    return (isinstance(called, ast.Name) and called.id == ENTRY) or (
        isinstance(called, ast.Attribute) and called.attr == ENTRY
    )


def _entry(call: ast.Call, package: str, where: str) -> tuple[str, frozenset[str]]:
    """A registry entry's run id (its first argument or ``id=``) and the modules it names."""
    first = (
        call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "id"), None)
    )
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        raise ValueError(
            f"{where}: line {call.lineno}: a {ENTRY}(...) entry whose id is not a string "
            "constant; the reproduce key reads each entry's id and modules statically"
        )
    named = {
        node.value.partition(":")[0]
        for node in ast.walk(call)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith(f"{package}.")
    }
    return first.value, frozenset(named)


def _scan(
    tree: ast.AST,
    module: str,
    is_package: bool,
    package: str = "",
    entries: list[tuple[str, frozenset[str]]] | None = None,
    where: str = "<source>",
) -> set[str]:
    """One walk over ``tree``: remove its docstrings (every statement that is a bare string)
    and return the dotted names it may import, i.e. those of every import statement anywhere in
    it and every string constant left that starts with ``package`` (dynamic imports name their
    modules so). ``module`` is the module's dotted name (``""`` for a notebook), for relative
    imports. With ``entries`` (the registry), each :data:`ENTRY` call is appended there as
    ``(run id, the modules its strings name)`` instead: those are no imports of the module
    (``where``, its file, names it in errors)."""
    names: set[str] = set()
    parent = module if is_package else module.rpartition(".")[0]
    stack = [tree]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(_is_docstring(s) for s in body):
                body[:] = [s for s in body if not _is_docstring(s)]
        if entries is not None and _is_entry(node):
            entries.append(_entry(node, package, where))
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = parent.split(".") if parent else []
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(package)
        ):
            names.add(node.value.partition(":")[0])
        stack.extend(ast.iter_child_nodes(node))
    return names


@lru_cache(maxsize=4096)
def _module_info(
    name: str, where: str, source: bytes
) -> tuple[str, frozenset[str], tuple[tuple[str, frozenset[str]], ...]]:
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as err:
        raise ValueError(f"{where}: not valid Python ({err.msg}, line {err.lineno})") from err
    package = name.partition(".")[0]
    entries: list[tuple[str, frozenset[str]]] | None = (
        [] if name == f"{package}.{REGISTRY}" else None
    )
    imports = _scan(tree, name, where.endswith("__init__.py"), package, entries, where)
    digest = hashlib.sha256(ast.dump(tree, include_attributes=False).encode("utf-8")).hexdigest()
    return digest, frozenset(imports), tuple(entries or ())


def load_module(name: str, file: Path) -> Module:
    """A module's docstring-free hash and imports (parsed once per distinct content)."""
    try:
        source = read_bytes(file)
    except (OSError, ValueError) as err:  # the message names the file and what it is
        raise ValueError(f"{err} (module {name})") from err
    digest, imports, entries = _module_info(name, str(file), source)
    return Module(name, file, digest, imports, entries)


def _with_parents(name: str, package: str) -> Iterator[str]:
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        candidate = ".".join(parts[:end])
        if candidate == package or candidate.startswith(f"{package}."):
            yield candidate


def computation_modules(
    roots: Iterable[str],
    package_dir: Path = PACKAGE_DIR,
    loaded: dict[str, Module] | None = None,
) -> dict[str, Module]:
    """The transitive closure of the package modules ``roots`` import, presentation left out
    (see the module docstring); by name, sorted. ``loaded`` keeps the modules read so far, for
    several calls on an unchanged package (one :func:`run_keys`)."""
    package = package_dir.name
    # with the dot: the wing itself and its modules (f"{name}."), not a module named like it
    presentation = tuple(f"{package}.{prefix}." for prefix in PRESENTATION)
    files = module_files(package_dir)
    seen = {} if loaded is None else loaded
    found: dict[str, Module] = {}
    stack = [n for root in roots for n in _with_parents(root, package)]
    while stack:
        name = stack.pop()
        if name in found or name not in files or f"{name}.".startswith(presentation):
            continue
        if name not in seen:
            seen[name] = load_module(name, files[name])
        module = found[name] = seen[name]
        stack.extend(n for imported in module.imports for n in _with_parents(imported, package))
    return dict(sorted(found.items()))


def notebook_imports(notebook: Path, package: str = PACKAGE_DIR.name) -> set[str]:
    """The dotted names of ``package`` the notebook's code cells may import (read statically)."""
    names: set[str] = set()
    for index, source in enumerate(_code_cells(notebook)):
        code = _python_of_cell(source)
        try:
            tree = ast.parse(code, filename=f"{notebook} (code cell {index})")
        except SyntaxError as err:
            raise ValueError(
                f"{notebook}: code cell {index} is not valid Python ({err.msg}, line "
                f"{err.lineno}); the runner reads its imports to key the run"
            ) from err
        names |= _scan(tree, "", False, package)
    return names


def registry_entries(
    package_dir: Path = PACKAGE_DIR, loaded: dict[str, Module] | None = None
) -> dict[str, frozenset[str]]:
    """``{run id: the modules its registry entry names}`` (its config's and its run
    function's), read statically from the registry module (:data:`REGISTRY`; none: ``{}``)."""
    name = f"{package_dir.name}.{REGISTRY}"
    file = module_files(package_dir).get(name)
    if file is None:
        return {}
    seen = {} if loaded is None else loaded
    if name not in seen:
        seen[name] = load_module(name, file)
    entries: dict[str, frozenset[str]] = {}
    for run_id, modules in seen[name].entries:
        if run_id in entries:
            raise ValueError(f"{file}: run {run_id!r} is registered twice; keep one {ENTRY}(...)")
        entries[run_id] = modules
    return entries


def module_hashes(
    notebook: Path,
    package_dir: Path = PACKAGE_DIR,
    loaded: dict[str, Module] | None = None,
    entry: Iterable[str] = (),
) -> dict[str, str]:
    """``{module: hash}`` of every module the notebook's computation imports: the closure of
    the notebook's imports and of ``entry`` (the modules its run's registry entry names)."""
    roots = notebook_imports(notebook, package_dir.name) | set(entry)
    closure = computation_modules(roots, package_dir, loaded)
    return {name: module.digest for name, module in closure.items()}


def data_file_hashes(modules: Iterable[str], package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """``{file: sha256 or "absent"}`` of the package data (:data:`DATA_FILES`) those modules
    read; file names relative to the directory holding the package."""
    root, package = package_dir.parent, package_dir.name
    shipped = package_dir / paths.SHIPPED_DIR.name  # an installed package's copies
    out: dict[str, str] = {}
    for module in modules:
        for relative in DATA_FILES.get(module.removeprefix(f"{package}."), ()):
            file = root / relative
            if not file.is_file() and (shipped / relative).is_file():
                file = shipped / relative
            out[relative] = hash_file(file) if file.is_file() else "absent"
    return dict(sorted(out.items()))


# --- keys ----------------------------------------------------------------------------------------


#: the fields of the manifest that concern every dataset (its format), hashed into every digest
_MANIFEST_FORMAT_FIELDS: tuple[str, ...] = ("schema", "version", "strict")


def datasets_read(parameters: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The datasets a run with these parameters (the notebook's defaults overlaid with the
    declared ones) reads: every value of a parameter whose name holds ``dataset``; None (every
    dataset) when one of them is None, the notebook's "the default datasets".

    >>> datasets_read({"datasets": ["musique"], "real_dataset": "hotpotqa", "k": 5})
    ('hotpotqa', 'musique')
    >>> datasets_read({"datasets": None}) is None
    True
    """
    found: set[str] = set()
    for name, value in parameters.items():
        if "dataset" not in name:
            continue
        if value is None:
            return None
        found.update([value] if isinstance(value, str) else (str(v) for v in value))
    return tuple(sorted(found))


def manifest_digest(work: Path, datasets: Iterable[str] | None) -> str:
    """SHA-256 of the manifest's format and of the entries of ``datasets`` (None: all of
    them; a dataset it does not hold, the toy world's included, counts as ``"absent"``), or
    ``"absent"`` before data preparation. Preparing another dataset leaves it unchanged."""
    manifest = work / "prepared" / "manifest.json"
    if not manifest.is_file():
        return "absent"
    body = read_json_file(manifest)
    entries = body.get("datasets") if isinstance(body, Mapping) else None
    entries = entries if isinstance(entries, Mapping) else {}
    chosen = sorted(entries) if datasets is None else sorted(set(datasets))
    digest = {
        "format": {f: body.get(f) for f in _MANIFEST_FORMAT_FIELDS},
        "datasets": {name: entries.get(name, "absent") for name in chosen},
    }
    return hashlib.sha256(canonical_json(digest).encode("utf-8")).hexdigest()


def run_keys(
    decl: Declarations,
    profile: str,
    work: Path,
    package_dir: Path = PACKAGE_DIR,
) -> dict[str, dict[str, Any]]:
    """Each run's key and the components it was computed from, in dependency order."""
    from regime_core.runner.declarations import notebook_defaults

    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    keys: dict[str, dict[str, Any]] = {}
    loaded: dict[str, Module] = {}
    entries = registry_entries(package_dir, loaded)
    for run_id in topological_order(deps, source=str(decl.path)):
        spec = decl.runs[run_id]
        modules = module_hashes(spec.notebook, package_dir, loaded, entries.get(run_id, ()))
        parameters = spec.parameters_for(profile)
        read = datasets_read({**notebook_defaults(spec.notebook), **parameters})
        components = {
            "notebook": notebook_code_hash(spec.notebook),
            "parameters": parameters,
            "profile": profile,
            "manifest": manifest_digest(work, read),
            "modules": modules,
            "data_files": data_file_hashes(modules, package_dir),
            "upstream": {dep: keys[dep]["key"] for dep in sorted(spec.depends_on)},
        }
        key = hashlib.sha256(canonical_json(components).encode("utf-8")).hexdigest()
        keys[run_id] = {"key": key, "components": components}
    return keys


#: how :func:`changed_components` names a changed entry of a component, or a whole component
_EACH_CHANGED = {"modules": "module", "data_files": "data file", "upstream": "upstream run"}
_CHANGED_WORDS = {"manifest": "prepared data (manifest)", "notebook": "notebook code cells"}


def _changed_entries(now: Any, before: Any) -> list[str]:
    if not isinstance(now, Mapping) or not isinstance(before, Mapping):
        return []
    return sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))


def changed_components(now: Mapping[str, Any], before: Mapping[str, Any]) -> list[str]:
    """What differs between the components of a key and those of a stamp, in words:
    ``"module regime_core.stats"``, ``"parameters (alpha)"``, ``"prepared data (manifest)"``.

    >>> changed_components({"profile": "quick", "modules": {"m": "1"}},
    ...                    {"profile": "default", "modules": {"m": "2"}})
    ['profile', 'module m']
    """
    reasons: list[str] = []
    for name in COMPONENTS:
        if now.get(name) == before.get(name):
            continue
        entries = _changed_entries(now.get(name), before.get(name))
        if name in _EACH_CHANGED and entries:
            reasons += [f"{_EACH_CHANGED[name]} {entry}" for entry in entries]
        elif name == "parameters" and entries:
            reasons.append(f"parameters ({', '.join(entries)})")
        else:
            reasons.append(_CHANGED_WORDS.get(name, name))
    unknown = sorted(set(now) ^ set(before))
    reasons += [f"key format ({name})" for name in unknown if name not in COMPONENTS]
    return reasons


def summarise_changes(changed: Sequence[str], most: int = 3) -> list[str]:
    """:func:`changed_components` with more than ``most`` changed modules folded into one entry,
    so that a line of ``regime reproduce`` stays readable after a change to a core module.

    >>> summarise_changes(["profile", "module a", "module b", "module c", "module d"], most=2)
    ['profile', '4 modules (a, b and 2 more)']
    >>> summarise_changes(["module a", "data file x"], most=2)
    ['module a', 'data file x']
    """
    modules = [c.removeprefix("module ") for c in changed if c.startswith("module ")]
    if len(modules) <= most:
        return list(changed)
    folded = f"{len(modules)} modules ({', '.join(modules[:most])} and {len(modules) - most} more)"
    first = next(i for i, c in enumerate(changed) if c.startswith("module "))
    rest = [c for c in changed if not c.startswith("module ")]
    return [*rest[:first], folded, *rest[first:]]
