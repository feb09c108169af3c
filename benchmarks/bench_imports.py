"""Import circles between the modules of regime_core.

    python benchmarks/bench_imports.py [--json]

Every ``import`` and ``from ... import`` of every module is read with ``ast``, those inside
functions too (a lazy import dodges a circle at import time, not in the design), and each that
names a module of the package is an edge of the module graph (``from package import name`` names
the submodule when there is one, else the package). The strongly connected components of more
than one module are the circles. A package's own loop (its ``__init__`` re-exporting the
submodules that import it back, as ``book/figures`` and ``book/tables`` do) is listed apart:
issue 47 allows those.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "regime_core"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name``'s statements import, anywhere in it."""
    found: set[str] = set()
    here = name if is_package else name.rpartition(".")[0]  # what a relative import starts from
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in known else source)
    return found & known - {name}


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: the modules of the package it imports}``."""
    files = {module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    known = set(files)
    return {
        name: imported(
            ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known
        )
        for name, path in files.items()
    }


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def is_package_loop(component: Sequence[str]) -> bool:
    """A package and only its own submodules (the loop a re-exporting ``__init__`` makes)."""
    return any(all(m == p or m.startswith(f"{p}.") for m in component) for p in component)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    found = circles(module_graph())
    report = {
        "circles": [c for c in found if not is_package_loop(c)],
        "package_loops": [c for c in found if is_package_loop(c)],
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for kind, components in report.items():
        print(f"{kind}: {len(components)}")
        for component in components:
            print(f"  {len(component)} modules: {', '.join(component)}")


if __name__ == "__main__":
    main()
