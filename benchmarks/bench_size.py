"""Lines of regime_core by wing, and each wing's largest modules.

    python benchmarks/bench_size.py [--top N] [--json]

A line is counted once as blank, as docstring or comment, or as code (Python's tokenizer decides,
so a string that is a statement of its own is a docstring). Issue 32 asks for the package sized by
wing; this script is how the closing note measures it.
"""

from __future__ import annotations

import argparse
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
        code, prose, blank = count_lines(path.read_text(encoding="utf-8"))
        wings[wing_of(path)].append(FileLines(str(path.relative_to(PACKAGE)), code, prose, blank))
    if args.json:
        print(json.dumps({w: [asdict(f) for f in files] for w, files in wings.items()}, indent=1))
        return
    print(f"{'wing':<20}{'total':>8}{'code':>8}{'prose':>8}{'blank':>8}  largest modules")
    totals = [0, 0, 0, 0]
    for wing, files in sorted(wings.items(), key=lambda kv: -sum(f.total for f in kv[1])):
        row = [sum(f.total for f in files), sum(f.code for f in files)]
        row += [sum(f.prose for f in files), sum(f.blank for f in files)]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        largest = sorted(files, key=lambda f: -f.total)[: args.top]
        named = ", ".join(f"{Path(f.path).name} {f.total}" for f in largest)
        print(f"{wing:<20}" + "".join(f"{n:>8}" for n in row) + f"  {named}")
    print(f"{'regime_core':<20}" + "".join(f"{n:>8}" for n in totals))


if __name__ == "__main__":
    main()
