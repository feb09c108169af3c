"""regime citation [--bibtex] [--check | --sync] [--json]: how to cite the paper and this companion.

Prints both citations from CITATION.cff (the one citation source): the paper (its
preferred-citation) and the companion, with its repository when [project.urls] Repository of
pyproject.toml is set. --bibtex prints them as BibTeX instead.

--check lists the files that are not in step with CITATION.cff and the repository setting
(CITATION.cff's repository-code and version, the README's repository line, book/references.bib)
and exits 1 when there is any; --sync rewrites them. With --json one JSON object is printed:

    {"citations": [{"key", "text", "bibtex"}], "repository": URL or null,
     "out_of_step": [file, ...], "written": [file, ...]}
"""

from __future__ import annotations

import argparse
from typing import Any

from regime_core import paths
from regime_core.cli._common import add_subcommand, print_result


def register(subparsers: Any) -> None:
    parser = add_subcommand(
        subparsers,
        "citation",
        run,
        description=__doc__,
        work=None,
        help="print how to cite the paper and the companion; keep the files that follow it in step",
    )
    parser.add_argument("--bibtex", action="store_true", help="print BibTeX entries")
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--check", action="store_true", help="exit 1 when a file is not in step with its source"
    )
    action.add_argument(
        "--sync", action="store_true", help="rewrite the files that are not in step"
    )


def run(args: argparse.Namespace) -> int:
    from regime_core.book import citation

    repository = paths.repository_url()
    written = [str(f.relative_to(paths.REPO_ROOT)) for f in citation.sync()] if args.sync else []
    out_of_step = [str(f.relative_to(paths.REPO_ROOT)) for f in citation.drift()]
    cites = citation.citation_blocks(repository=repository)
    payload = {
        "citations": [{"key": c.key, "text": c.text(), "bibtex": c.bibtex()} for c in cites],
        "repository": repository,
        "out_of_step": out_of_step,
        "written": written,
    }
    lines = [c.bibtex() if args.bibtex else c.text() for c in cites]
    if written:
        lines.append("written: " + ", ".join(written))
    if out_of_step:
        lines.append("not in step (run `regime citation --sync`): " + ", ".join(out_of_step))
    print_result(args.json, payload, "\n".join(lines), ensure_ascii=False)
    return 1 if args.check and out_of_step else 0
