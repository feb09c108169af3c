"""Lines of regime_core by wing, its raises and guard lines, and each wing's largest modules.

    python benchmarks/bench_size.py [--top N] [--json]

A line is counted once as blank, as docstring or comment, or as code (Python's tokenizer decides,
so a string that is a statement of its own is a docstring). Issue 32 asks for the package sized by
wing; this script is how the closing note measures it. Issue 47 asks for defensive density: a
*raise* is a ``raise`` statement (``ast.Raise``), reported per 1,000 lines of the wing; a *guard*
is an ``if`` with no ``else`` whose body only raises, and its guard lines are the lines it spans
(test, message and all).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import tokenize
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "regime_core"


@dataclass(frozen=True)
class FileLines:
    path: str
    code: int
    prose: int
    blank: int
    raises: int = 0
    guard_lines: int = 0

    @property
    def total(self) -> int:
        return self.code + self.prose + self.blank


def count_lines(source: str) -> tuple[int, int, int]:
    """(code, docstrings and comments, blank) lines of one Python source."""
    layout = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    prose: set[int] = set()
    code: set[int] = set()
    statement_start = True
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        rows = range(token.start[0], token.end[0] + 1)
        if token.type == tokenize.COMMENT:
            prose.update(rows)
        elif token.type == tokenize.STRING and statement_start:
            prose.update(rows)  # a string that starts a statement: a docstring
        elif token.type not in layout:
            code.update(rows)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            statement_start = token.type in layout
    lines = source.splitlines()
    blank = {i for i, line in enumerate(lines, start=1) if not line.strip()}
    return len(code - blank), len(prose - code - blank), len(blank)


def count_defences(source: str) -> tuple[int, int]:
    """(``raise`` statements, guard lines) of one Python source (the module docstring)."""
    tree = ast.parse(source)
    raises = sum(isinstance(node, ast.Raise) for node in ast.walk(tree))
    guards = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and not node.orelse
        and all(isinstance(statement, ast.Raise) for statement in node.body)
    ]
    lines = {n for g in guards for n in range(g.lineno, (g.end_lineno or g.lineno) + 1)}
    return raises, len(lines)


def wing_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else "top-level modules"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=3, help="largest modules named per wing")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    wings: dict[str, list[FileLines]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        code, prose, blank = count_lines(source)
        raises, guard_lines = count_defences(source)
        name = str(path.relative_to(PACKAGE))
        wings[wing_of(path)].append(FileLines(name, code, prose, blank, raises, guard_lines))
    if args.json:
        print(json.dumps({w: [asdict(f) for f in files] for w, files in wings.items()}, indent=1))
        return
    columns = ("total", "code", "prose", "blank", "raises", "/1000", "guards")
    print(f"{'wing':<20}" + "".join(f"{c:>8}" for c in columns) + "  largest modules")
    totals = [0, 0, 0, 0, 0, 0]
    for wing, files in sorted(wings.items(), key=lambda kv: -sum(f.total for f in kv[1])):
        row = [sum(getattr(f, c) for f in files) for c in ("total", "code", "prose", "blank")]
        row += [sum(f.raises for f in files), sum(f.guard_lines for f in files)]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        largest = sorted(files, key=lambda f: -f.total)[: args.top]
        named = ", ".join(f"{Path(f.path).name} {f.total}" for f in largest)
        print(f"{wing:<20}" + _row(row) + f"  {named}")
    print(f"{'regime_core':<20}" + _row(totals))


def _row(row: list[int]) -> str:
    """total, code, prose, blank, raises, raises per 1,000 lines, guard lines."""
    total, code, prose, blank, raises, guards = row
    per_1000 = f"{1000 * raises / total:.1f}" if total else "-"
    return "".join(f"{n:>8}" for n in (total, code, prose, blank, raises)) + (
        f"{per_1000:>8}{guards:>8}"
    )


if __name__ == "__main__":
    main()
