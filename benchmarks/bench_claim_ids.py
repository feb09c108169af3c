"""Where a claim id of paper_claims.yml is written in regime_core's code (.py and .js).

    python benchmarks/bench_claim_ids.py [CHECKOUT]

Issue 47 asks for none: code finds a claim by what the claims file says of it (its run, its
comparison, the roles of its data), never by its id. Every whole-word occurrence is printed as
file:line, then the total. Some ids are also the name of something else (a run of reproduce.yml,
or a function, field, parameter or module of the package: ``alpha_rule``, ``oracle_gap``): their
lines are not counted; those that also say "claim" are listed apart, to be read by eye.
CHECKOUT (default: this one) measures another checkout's package and claims file.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
PACKAGE = ROOT / "regime_core"


def package_names() -> set[str]:
    """Every name the package defines or reads: functions, classes, parameters, fields,
    attributes, modules, and the runs of reproduce.yml."""
    names = set(yaml.safe_load((ROOT / "reproduce.yml").read_text())["runs"])
    for file in PACKAGE.rglob("*.py"):
        names.add(file.stem)
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return names


def main() -> None:
    claims = yaml.safe_load((ROOT / "paper_claims.yml").read_text())["claims"]
    ids = [c["id"] for c in claims]
    homonyms = sorted(set(ids) & package_names())
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, ids)) + r")(?![\w])")
    hits, beside = 0, []
    for file in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]):
        if "_shipped" in file.parts:
            continue
        for number, line in enumerate(file.read_text().splitlines(), start=1):
            found = {m.group(1) for m in pattern.finditer(line)}
            at = f"{file.relative_to(ROOT)}:{number}: {line.strip()}"
            if found - set(homonyms):
                hits += 1
                print(at)
            elif found and "claim" in line.lower():
                beside.append(at)
    print(f"homonyms, not counted: {', '.join(homonyms) or 'none'}; on a line saying 'claim':")
    print("\n".join(f"  {at}" for at in beside) or "  none")
    print(f"claim ids in regime_core: {hits} lines")


if __name__ == "__main__":
    main()
