"""How to cite the paper and this companion, from ``CITATION.cff``, the one citation source.

``CITATION.cff`` holds both citations: the paper (``preferred-citation``) and the companion
(the file's own fields). Their authors are fields there and nowhere else: the paper's are not
known to us offline, so they read "authors as listed at arXiv:2604.09019" until someone who can
see the paper writes them in. Everything else follows from it:

- the book's "How to cite" page (:func:`citation_blocks`, the ``regime-citation`` directive)
  and its bibliography file ``book/references.bib`` (:func:`bibtex`, the paper's entry);
- the repository address, the one setting :func:`repository_url`
  (``[project.urls] Repository`` of ``pyproject.toml``): ``CITATION.cff``'s
  ``repository-code`` and the README's repository line are written from it, and both are
  absent while it is unset.

The files that follow a source are kept in step by ``make citation`` (this file run as a
script with ``--sync``: :func:`sync`), and ``tests/test_book_citation.py`` fails while
:func:`drift` lists any. Run as a script without options, it prints both citations
(``--bibtex``: as BibTeX); ``--check`` exits 1 while a file is not in step. It is the
repository's tool, not the package's: ``CITATION.cff`` and the files it writes are not shipped.
"""

from __future__ import annotations

import os
import re
import textwrap
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from regime_core import paths
from regime_core.integrity import read_text

CITATION_FILE = "CITATION.cff"
PYPROJECT = paths.REPO_ROOT / "pyproject.toml"
BIB_FILE = "book/references.bib"
README_FILE = "README.md"
#: The key of the paper's entry in ``book/references.bib`` (the landing page cites it).
PAPER_KEY = "regime2026"
README_START = "<!-- repository: written by `make citation` from pyproject.toml -->"
README_END = "<!-- /repository -->"
BIB_HEADER = (
    "% Written by `make citation` from CITATION.cff (preferred-citation): edit that file, not "
    "this one.\n"
)


def repository_url(pyproject: str | os.PathLike[str] = PYPROJECT) -> str | None:
    """The companion's public repository (``[project.urls] Repository`` of ``pyproject.toml``),
    or None while it is unset (the companion is not published yet).

    The book shows its repository, issue and launch buttons only when it is set, and
    ``make citation`` writes it into ``CITATION.cff`` and the README. Raises ``ValueError``
    naming the file and the field when the value is not an ``https://`` address.
    """
    file = Path(pyproject)
    if not file.is_file():
        raise FileNotFoundError(f"{file} does not exist; it should hold [project.urls]")
    project = tomllib.loads(read_text(file)).get("project", {})
    url = (project.get("urls") or {}).get("Repository")
    if url is None:
        return None
    parts = urlsplit(str(url))
    if not isinstance(url, str) or parts.scheme != "https" or not parts.netloc:
        raise ValueError(
            f"{file}: [project.urls] Repository = {url!r} is not an https:// address; fix or "
            "remove it"
        )
    return url.rstrip("/")


@dataclass(frozen=True)
class Citation:
    """One work to cite: its authors as written, title, year, identifiers and address."""

    key: str
    kind: str
    title: str
    authors: tuple[str, ...]
    bibtex_authors: tuple[str, ...]
    year: int | None = None
    version: str | None = None
    eprint: str | None = None
    url: str | None = None
    note: str | None = None

    def parts(self) -> tuple[str, str, str]:
        """The reference in three parts: authors and year, the title (shown in italics), and
        what follows it, its punctuation included (kind, identifier, address)."""
        lead = _join_names(self.authors) + (f" ({self.year})." if self.year else ".")
        title = self.title + (f" (version {self.version})" if self.version else "")
        rest = [" [software]." if self.kind == "software" else "."]
        if self.eprint:
            rest.append(f" arXiv:{self.eprint}.")
        if self.url or self.note:
            rest.append(f" {self.url or self.note}")
        return lead, title, "".join(rest)

    def text(self) -> str:
        """A plain reference: authors (year). Title. Identifier. Address."""
        lead, title, rest = self.parts()
        return f"{lead} {title}{rest}"

    def bibtex(self) -> str:
        """The entry as BibTeX (``@misc``, which every bibliography style knows)."""
        fields: list[tuple[str, str]] = [
            ("author", " and ".join(self.bibtex_authors)),
            ("title", _protect_capitals(self.title)),
        ]
        if self.year:
            fields.append(("year", str(self.year)))
        if self.version:
            fields.append(("version", self.version))
        if self.eprint:
            fields += [
                ("eprint", self.eprint),
                ("archiveprefix", "arXiv"),
                ("howpublished", f"arXiv:{self.eprint}"),
            ]
        if self.url:
            fields.append(("url", self.url))
        elif self.note:
            fields.append(("note", self.note))
        width = max(len(name) for name, _ in fields)
        body = ",\n".join(f"  {name:<{width}} = {{{value}}}" for name, value in fields)
        return f"@misc{{{self.key},\n{body}\n}}\n"


def load_cff(root: Path | str = paths.REPO_ROOT) -> dict[str, Any]:
    """``CITATION.cff`` of the repository at ``root``, parsed; ``ValueError`` names the field a
    citation needs when it is missing."""
    file = Path(root) / CITATION_FILE
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{file}: not a CFF mapping")
    for field, where in (("title", data), ("authors", data)):
        if not where.get(field):
            raise ValueError(f"{file}: the field {field!r} is missing or empty")
    paper = data.get("preferred-citation")
    if not isinstance(paper, dict) or not paper.get("title") or not paper.get("authors"):
        raise ValueError(f"{file}: 'preferred-citation' (the paper) needs a title and authors")
    return data


def _names(authors: Sequence[Mapping[str, Any]], file: str) -> tuple[list[str], list[str]]:
    """Each author as written and as BibTeX writes it (a person ``Family, Given``; an entity
    in braces, so that BibTeX keeps it whole)."""
    shown, bib = [], []
    for i, author in enumerate(authors):
        if author.get("family-names"):
            given = str(author.get("given-names", "")).strip()
            family = str(author["family-names"]).strip()
            shown.append(f"{given} {family}".strip())
            bib.append(f"{family}, {given}" if given else family)
        elif author.get("name"):
            shown.append(str(author["name"]).strip())
            bib.append("{" + str(author["name"]).strip() + "}")
        else:
            raise ValueError(f"{file}: author {i + 1} has neither 'family-names' nor 'name'")
    return shown, bib


def _eprint(entry: Mapping[str, Any]) -> str | None:
    for identifier in entry.get("identifiers") or []:
        value = str(identifier.get("value", ""))
        if value.lower().startswith("arxiv:"):
            return value.split(":", 1)[1]
    return None


def paper_citation(cff: Mapping[str, Any]) -> Citation:
    """The paper (``preferred-citation``)."""
    paper = cff["preferred-citation"]
    shown, bib = _names(paper["authors"], CITATION_FILE)
    return Citation(
        key=PAPER_KEY,
        kind=str(paper.get("type", "article")),
        title=str(paper["title"]),
        authors=tuple(shown),
        bibtex_authors=tuple(bib),
        year=paper.get("year"),
        eprint=_eprint(paper),
        url=paper.get("url"),
    )


def companion_citation(cff: Mapping[str, Any], repository: str | None) -> Citation:
    """This companion (the file's own fields), at ``repository`` when it is published."""
    shown, bib = _names(cff["authors"], CITATION_FILE)
    return Citation(
        key="regime_companion",
        kind=str(cff.get("type", "software")),
        title=str(cff["title"]),
        authors=tuple(shown),
        bibtex_authors=tuple(bib),
        version=str(cff["version"]) if cff.get("version") else None,
        url=repository,
        note=None if repository else "Not yet published.",
    )


def _join_names(names: Sequence[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


def _protect_capitals(title: str) -> str:
    """Brace the words BibTeX styles would lower-case although they are acronyms (``QA``)."""
    return re.sub(r"\b([A-Z][A-Z0-9]+)\b", r"{\1}", title)


def citation_blocks(
    root: Path | str = paths.REPO_ROOT, repository: str | None = None
) -> list[Citation]:
    """The paper, then the companion, as the "How to cite" page shows them."""
    cff = load_cff(root)
    return [paper_citation(cff), companion_citation(cff, repository)]


def bibtex(root: Path | str = paths.REPO_ROOT) -> str:
    """``book/references.bib`` as it should read: the paper's entry from ``CITATION.cff``."""
    return BIB_HEADER + "\n" + paper_citation(load_cff(root)).bibtex()


# --- the files that follow CITATION.cff and pyproject.toml ---------------------------------------


def _package_version(root: Path) -> str:
    import tomllib

    with (root / "pyproject.toml").open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def cff_text(text: str, *, repository: str | None, version: str) -> str:
    """``CITATION.cff``'s text with ``repository-code`` set to ``repository`` (removed when
    None) and ``version`` set; comments and every other line are kept."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("repository-code:")]
    lines = [f"version: {version}" if ln.startswith("version:") else ln for ln in lines]
    if repository is not None:
        at = next((i for i, ln in enumerate(lines) if ln.startswith("license:")), len(lines) - 1)
        lines.insert(at + 1, f"repository-code: {repository}")
    return "\n".join(lines) + "\n"


def readme_text(text: str, *, repository: str | None) -> str:
    """The README with its repository line (between :data:`README_START` and
    :data:`README_END`) saying where the repository is, or that it is not published yet."""
    if README_START not in text or README_END not in text:
        raise ValueError(
            f"{README_FILE} has no repository block; add the lines {README_START!r} and "
            f"{README_END!r}"
        )
    before, rest = text.split(README_START, 1)
    _, after = rest.split(README_END, 1)
    if repository is None:
        line = (
            "The companion has no public repository yet (`[project.urls] Repository` in "
            "`pyproject.toml` is unset), so the book shows no repository, issue or launch "
            "buttons."
        )
    else:
        line = (
            f"Repository: <{repository}> (the book's repository, issue and Binder/Colab "
            "buttons point there)."
        )
    wrapped = "\n".join(textwrap.wrap(line, 100, break_long_words=False, break_on_hyphens=False))
    return f"{before}{README_START}\n{wrapped}\n{README_END}{after}"


def expected_files(root: Path | str = paths.REPO_ROOT) -> dict[Path, str]:
    """Each file that follows ``CITATION.cff`` and the repository setting, with the text it
    should have."""
    root = Path(root)
    repository = repository_url(root / "pyproject.toml")
    version = _package_version(root)
    cff, readme = root / CITATION_FILE, root / README_FILE
    return {
        cff: cff_text(cff.read_text(encoding="utf-8"), repository=repository, version=version),
        readme: readme_text(readme.read_text(encoding="utf-8"), repository=repository),
        root / BIB_FILE: bibtex(root),
    }


def drift(root: Path | str = paths.REPO_ROOT) -> list[Path]:
    """The files that are not in step with their source (empty when all are)."""
    return [
        file
        for file, text in expected_files(root).items()
        if not file.is_file() or file.read_text(encoding="utf-8") != text
    ]


def sync(root: Path | str = paths.REPO_ROOT) -> list[Path]:
    """Write every file :func:`drift` lists; returns them."""
    from regime_core.integrity import atomic_write_bytes

    changed = drift(root)
    for file, text in expected_files(root).items():
        if file in changed:
            atomic_write_bytes(file, text.encode("utf-8"))
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """The script: print the citations, or ``--check`` / ``--sync`` the files that follow them."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bibtex", action="store_true", help="print BibTeX entries")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="exit 1 when a file is not in step")
    action.add_argument("--sync", action="store_true", help="rewrite the files not in step")
    args = parser.parse_args(argv)
    written = sync() if args.sync else []
    out_of_step = drift()
    cites = citation_blocks(repository=repository_url())
    lines = [c.bibtex() if args.bibtex else c.text() for c in cites]
    lines += [f"written: {f.relative_to(paths.REPO_ROOT)}" for f in written]
    lines += [
        f"not in step (run `make citation`): {f.relative_to(paths.REPO_ROOT)}" for f in out_of_step
    ]
    print("\n".join(lines))
    return 1 if args.check and out_of_step else 0


if __name__ == "__main__":
    raise SystemExit(main())
