"""Check the rendered book as its readers meet it: the HTML of every page, no browser needed.

:func:`check_html` reads a Jupyter Book HTML build (``_build/html``) and returns one
:class:`Problem` per defect a reader would see:

================  ==============================================================================
kind              what it flags
================  ==============================================================================
``warning``       a Python warning printed on the page (a runtime or a tqdm warning)
``traceback``     a traceback, or an error output of a notebook cell
``progress``      a progress bar (tqdm's bar or rate, a weights-loading bar, a Jupyter widget)
``path``          an absolute local path (under /work, /home, /tmp, /root, /Users; site-packages)
``markup``        source markup leaked into the text: ``:func:``, ``{rec}``, double backticks
``link``          an internal link or image whose file or anchor is not in the build
``figure``        a page showing fewer images than its notebook's image outputs (or its run's
                  record's figures), or a notebook drawing a figure with no image output
``alt``           a figure without alt text, or whose alt text is a file name or hash
``caption``       a caption naming a colour or marker (red, hollow, dashed...) that its figure
                  does not draw (the figure's SVG lists what it draws,
                  :mod:`regime_core.book.figures.encodings`; :mod:`tools.bookcheck.prose`)
``placeholder``   a link to a placeholder address (Jupyter Book's own repository, the old
                  ``regime-companion`` address), or a repository, issue or launch
                  button while no repository is set (or pointing elsewhere than the setting)
``script``        a script declared twice on a page (the same inline code or the same file)
================  ==============================================================================

Pages are the HTML files of the build but Sphinx's own (``genindex``, ``search``,
``py-modindex``) and those under ``_static``, ``_sources``, ``_images``, ``_downloads``;
Sphinx's pages still count as link targets, and so does the page a redirect (the build's
``index.html``) leads to. Everything a page holds is checked, code included (a path in a
signature is as local as one in an output), but its scripts and styles. The figure check reads
the executed notebooks Sphinx copies to ``_sources/`` (the very notebooks the pages were
rendered from).

Everything here is a pure function of the files it is given (BeautifulSoup parses the pages;
it comes with the book's theme). The browser checks (overflow on a phone, unrendered maths)
are in :mod:`tools.bookcheck.browser`; a stderr box fails the build (:mod:`tools.bookcheck`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup, Comment, Doctype, NavigableString, Tag

from regime_core.strict_json import read_json_file

HTML_KINDS: tuple[str, ...] = (
    "warning",
    "traceback",
    "progress",
    "path",
    "markup",
    "link",
    "figure",
    "alt",
    "caption",
    "placeholder",
    "script",
)
SKIPPED_DIRS = frozenset({"_static", "_sources", "_images", "_downloads", "_panels_static"})
SKIPPED_PAGES = frozenset({"genindex.html", "search.html", "py-modindex.html"})
NOTEBOOK_IMAGE_TYPES: tuple[str, ...] = ("image/png", "image/svg+xml", "image/jpeg")

# Elements whose text a reader never sees.
_INVISIBLE = frozenset({"script", "style", "template", "noscript", "head", "title"})
# Elements whose text is code or maths: source markup there is shown on purpose.
_LITERAL = frozenset({"pre", "code", "kbd", "samp", "tt", "textarea", "math"})
_LITERAL_CLASSES = frozenset({"highlight", "math", "literal", "pre"})

# `warnings.showwarning` prints "file:line: SomeWarning: message".
WARNING = re.compile(r"\b[A-Z][A-Za-z]*Warning\b:|\bwarnings\.warn\(")
TRACEBACK = re.compile(
    r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+", re.MULTILINE
)
PROGRESS = re.compile(
    r"\d{1,3}%\s?\|[^|\n]{1,80}\|"  # tqdm's bar: ' 42%|████      |'
    r"|\d+(?:\.\d+)?\s?(?:it|s|B|kB|MB|GB)/(?:s|it)\]"  # its rate: '3.2it/s]', '1.5s/it]'
    r"|\bLoading (?:weights|checkpoint shards)\b"
    r"|\bBatches:\s"
)
# A path that starts at the root of a local machine (not a URL's path: no word character before).
ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~/-])/(?:work|home|tmp|root|Users|private/var|var/folders|opt/conda)/[^\s\"'<>)]*"
    r"|[\w./-]*(?:site|dist)-packages/[^\s\"'<>)]*"
    r"|\b[A-Za-z]:\\(?:Users|Windows)\\\S*"
)
# reST roles (``:func:`x```) and MyST roles (``{rec}`x```) shown as text, and inline literals
# whose double backticks were not parsed. A role's target is often split off into a <code>
# element, so a role name at the very end of a text node counts too.
RST_ROLE = re.compile(
    r"(?<![\w:]):(?:py:|std:|math:)?(?:func|data|class|mod|meth|attr|exc|obj|const|ref|doc|term"
    r"|numref|eq|cite[pt]?|math|download|abbr|any|envvar|option|file|samp|kbd|pep|rfc|sub|sup)"
    r":(?=`|\s*$)"
)
MYST_ROLE = re.compile(r"\{[a-z][\w:.-]*\}(?=`|\s*$)")
DOUBLE_BACKTICKS = re.compile(r"``")
#: Addresses that stand in for a real one (Jupyter Book's default repository, the companion's
#: old placeholder address).
PLACEHOLDER_ADDRESS = re.compile(
    r"github\.com/executablebooks/jupyter-book|regime-companion/regime-conditional-retrieval",
    re.IGNORECASE,
)
#: Alt text that is no description (a file name, a path, or a hash).
_FILE_LIKE_ALT = re.compile(r"\.(?:png|svg|jpe?g|gif)$|/|^[0-9a-f]{16,}$", re.IGNORECASE)
PLOTTING_CALL = re.compile(r"\b(?:plt|pyplot|fig|figure)\.show\(|\.savefig\(|\bnb\.save\(")

_SNIPPET = 110


@dataclass(frozen=True, order=True)
class Problem:
    """One defect on one page: ``page`` relative to the build (POSIX), a ``kind`` of
    :data:`HTML_KINDS` (or ``overflow``/``math`` from the browser), and what was seen."""

    page: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: {self.kind}: {self.detail}"

    def as_dict(self) -> dict[str, str]:
        return {"page": self.page, "kind": self.kind, "detail": self.detail}


def book_pages(html_dir: Path | str) -> list[Path]:
    """The reader's pages of a build: every ``*.html`` but Sphinx's own and its asset folders."""
    root = Path(html_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory; build the book first (regime book)")
    return sorted(
        page
        for page in root.rglob("*.html")
        if page.name not in SKIPPED_PAGES
        and not SKIPPED_DIRS.intersection(page.relative_to(root).parts)
    )


def parse_page(path: Path | str) -> BeautifulSoup:
    return BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")


# --- text-level checks of one page ---------------------------------------------------------------


def _invisible(node: NavigableString | Tag) -> bool:
    return any(parent.name in _INVISIBLE for parent in node.parents)


def _literal(node: NavigableString) -> bool:
    for parent in node.parents:
        if parent.name in _LITERAL:
            return True
        if _LITERAL_CLASSES.intersection(parent.get("class") or ()):
            return True
    return False


def _text_nodes(soup: BeautifulSoup) -> Iterable[NavigableString]:
    for node in soup.find_all(string=True):
        if isinstance(node, Comment | Doctype) or _invisible(node):
            continue
        yield node


def visible_text(soup: BeautifulSoup) -> str:
    """The page's text as a reader sees it (scripts, styles and comments left out)."""
    return "".join(str(node) for node in _text_nodes(soup))


def _snippet(text: str, start: int, end: int) -> str:
    """The line around ``text[start:end]``, whitespace folded, cut to a readable length."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    offset = start - line_start
    if len(line) > _SNIPPET:
        lo = max(0, min(offset - _SNIPPET // 3, len(line) - _SNIPPET))
        line = ("…" if lo else "") + line[lo : lo + _SNIPPET] + "…"
    return " ".join(line.split())


def _matches(pattern: re.Pattern[str], text: str) -> list[str]:
    seen: dict[str, None] = {}
    for match in pattern.finditer(text):
        seen.setdefault(_snippet(text, match.start(), match.end()), None)
    return list(seen)


def find_warnings(soup: BeautifulSoup) -> list[str]:
    """Lines of the page that show a Python warning."""
    return _matches(WARNING, visible_text(soup))


def find_tracebacks(soup: BeautifulSoup) -> list[str]:
    """Tracebacks in the text, and notebook error outputs (myst-nb's ``output traceback``)."""
    found = _matches(TRACEBACK, visible_text(soup))
    for box in soup.select("div.output.traceback, div.output.error"):
        found.append("error output: " + _first_line(box.get_text()))
    return found


def find_progress_bars(soup: BeautifulSoup) -> list[str]:
    """Progress bars: tqdm's text bars and rates, weights-loading bars, and Jupyter widgets
    (which is how ``tqdm.auto`` draws a bar in a notebook)."""
    found = _matches(PROGRESS, visible_text(soup))
    for _ in soup.select('script[type="application/vnd.jupyter.widget-view+json"]'):
        found.append("a Jupyter widget output (tqdm.auto draws its progress bars as widgets)")
    return found


def find_absolute_paths(soup: BeautifulSoup) -> list[str]:
    """Absolute local paths in the text (code included: a reader sees it) and file links."""
    found = _matches(ABSOLUTE_PATH, visible_text(soup))
    for tag in soup.find_all(["a", "img"]):
        ref = str(tag.get("href") or tag.get("src") or "")
        if ref.startswith("file:"):
            found.append(f"link to {ref}")
    return found


def find_leaked_markup(soup: BeautifulSoup) -> list[str]:
    """reST/MyST roles and double backticks shown as text (code and maths left out)."""
    found: dict[str, None] = {}
    for node in _text_nodes(soup):
        if _literal(node):
            continue
        text = str(node)
        for pattern in (RST_ROLE, MYST_ROLE, DOUBLE_BACKTICKS):
            for match in pattern.finditer(text):
                context = _context_of(node)
                found.setdefault(f"{match.group(0)!r} in {context!r}", None)
    return list(found)


def _context_of(node: NavigableString) -> str:
    """The text of the block around ``node`` (its paragraph, cell or item), shortened."""
    block = node.parent
    while block is not None and block.name in {"span", "a", "em", "strong", "code", "cite"}:
        block = block.parent
    text = " ".join((block or node).get_text().split())
    where = text.find(" ".join(str(node).split())[:20])
    lo = max(0, where - 30)
    return ("…" if lo else "") + text[lo : lo + 90] + ("…" if len(text) > lo + 90 else "")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return _snippet(line, 0, 0)
    return ""


def _article(soup: BeautifulSoup) -> Tag | BeautifulSoup:
    found = soup.select_one("article.bd-article") or soup.find("main") or soup.body
    return found if found is not None else soup


def find_bad_alt_text(soup: BeautifulSoup) -> list[str]:
    """Images of the article without alt text, or whose alt text is a file name or hash."""
    found = []
    for img in _article(soup).find_all("img"):
        alt = str(img.get("alt") or "").strip()
        if not alt:
            found.append(f"no alt text: {img.get('src')}")
        elif _FILE_LIKE_ALT.search(alt):
            found.append(f"alt text is a file name: {alt!r}")
    return found


def find_duplicate_scripts(soup: BeautifulSoup) -> list[str]:
    """Scripts a page declares twice: the same inline code, or the same ``src``."""
    seen: Counter[str] = Counter()
    for script in soup.find_all("script"):
        key = str(script.get("src") or "") or " ".join(script.get_text().split())
        if key:
            seen[key] += 1
    return [f"declared {n} times: {key[:90]}" for key, n in seen.items() if n > 1]


PAGE_CHECKS = {
    "warning": find_warnings,
    "traceback": find_tracebacks,
    "progress": find_progress_bars,
    "path": find_absolute_paths,
    "markup": find_leaked_markup,
    "alt": find_bad_alt_text,
    "script": find_duplicate_scripts,
}


# --- placeholder links and buttons ---------------------------------------------------------------

_HEADER_BUTTONS = ".article-header-buttons a[href], .header-article-items a[href]"


def find_placeholder_links(soup: BeautifulSoup, repository: str | None) -> list[str]:
    """Links to a placeholder address anywhere on the page, and external repository, issue or
    launch buttons in the article's header while no ``repository`` is set, or not under it."""
    found = [
        f"placeholder address: {a['href']}"
        for a in soup.find_all("a", href=True)
        if PLACEHOLDER_ADDRESS.search(str(a["href"]))
    ]
    path = urlsplit(repository).path.strip("/") if repository else None
    for button in soup.select(_HEADER_BUTTONS):
        href = str(button["href"])
        if not urlsplit(href).netloc:
            continue  # a download, a link into the book
        if path is None:
            found.append(f"a repository or launch button although no repository is set: {href}")
        elif path not in href:
            found.append(f"a button pointing elsewhere than {repository}: {href}")
    return found


# --- captions against their figures --------------------------------------------------------------


def _captions(article: Tag | BeautifulSoup) -> list[tuple[Tag, str]]:
    """Each image of the article with the caption shown with it: its ``<figcaption>``, or, for
    a notebook's figure, the "Figure: ..." output that follows it before the next image."""
    pairs: list[tuple[Tag, str]] = []
    waiting: Tag | None = None
    for node in article.descendants:
        if isinstance(node, Tag) and node.name == "img":
            figure = node.find_parent("figure")
            caption = figure.find("figcaption") if figure is not None else None
            if caption is not None:
                pairs.append((node, " ".join(caption.get_text().split())))
                waiting = None
            else:
                waiting = node
        elif isinstance(node, NavigableString) and waiting is not None:
            text = " ".join(str(node).split())
            if text.startswith("Figure:"):
                block = node.find_parent(["p", "div"]) or node.parent
                shown = " ".join(block.get_text().split()) if block is not None else text
                pairs.append((waiting, shown.removeprefix("Figure:").strip()))
                waiting = None
    return pairs


def check_captions(html_dir: Path | str, parsed: Mapping[Path, BeautifulSoup]) -> list[Problem]:
    """Each caption against the encodings its figure's SVG lists: a colour or style the caption
    names that the figure does not draw is a problem. Images without that list (not made by
    :mod:`regime_core.book.figures`) are left alone."""
    from regime_core.book.figures.encodings import ENCODINGS_KEY, figure_text
    from tools.bookcheck.prose import unused_encodings

    root = Path(html_dir).resolve()
    problems = []
    for page, soup in parsed.items():
        name = page.resolve().relative_to(root).as_posix()
        for img, caption in _captions(_article(soup)):
            src = urlsplit(str(img.get("src") or ""))
            if src.scheme or src.netloc or not src.path:
                continue
            drawn = figure_text(page.parent / unquote(src.path)).get(ENCODINGS_KEY)
            if drawn is None or not caption:
                continue
            problems += [
                Problem(
                    name,
                    "caption",
                    f"{Path(src.path).name}: the caption names {word!r}, which the figure "
                    f"does not draw (it draws: {drawn})",
                )
                for word in sorted(unused_encodings(caption, drawn.split(",")))
            ]
    return problems


def check_page(page: str, soup: BeautifulSoup, repository: str | None = None) -> list[Problem]:
    """Every problem of one parsed page (``page`` is its name in the report) but its links,
    captions and figures; ``repository`` as for :func:`find_placeholder_links`."""
    found = [(kind, detail) for kind, check in PAGE_CHECKS.items() for detail in check(soup)]
    found += [("placeholder", detail) for detail in find_placeholder_links(soup, repository)]
    return [Problem(page, kind, detail) for kind, detail in found]


# --- links ---------------------------------------------------------------------------------------


def anchors(soup: BeautifulSoup) -> set[str]:
    """The fragment targets of a page: ``id`` attributes and ``<a name>``."""
    found = {str(tag["id"]) for tag in soup.find_all(id=True)}
    found |= {str(tag["name"]) for tag in soup.find_all("a", attrs={"name": True})}
    return found


REFRESH = re.compile(r"^\s*\d+\s*;\s*url=(.+)$", re.IGNORECASE)  # a refresh's content


def _refresh_target(soup: BeautifulSoup) -> str | None:
    for meta in soup.find_all("meta", attrs={"http-equiv": True, "content": True}):
        found = REFRESH.match(str(meta["content"]))
        if str(meta["http-equiv"]).lower() == "refresh" and found:
            return found.group(1).strip()
    return None


def redirect_target(page: Path | str) -> str | None:
    """Where a redirect page (``<meta http-equiv="refresh">``, like the build's ``index.html``)
    sends its reader, or None for a page a reader reads."""
    with Path(page).open(encoding="utf-8") as handle:
        return _refresh_target(BeautifulSoup(handle.read(4096), "html.parser"))


def internal_references(soup: BeautifulSoup) -> list[str]:
    """Every ``href`` and ``src`` of the page without a scheme or host (links into the build),
    and the address a redirect sends its reader to."""
    refs = [str(a["href"]) for a in soup.find_all(["a", "link"], href=True)]
    refs += [target] if (target := _refresh_target(soup)) else []
    refs += [str(tag["src"]) for tag in soup.find_all(["img", "script", "source"], src=True)]
    return [
        ref for ref in refs if ref.strip() and not urlsplit(ref).scheme and not urlsplit(ref).netloc
    ]


def check_links(html_dir: Path | str, parsed: Mapping[Path, BeautifulSoup]) -> list[Problem]:
    """Internal links and images of the ``parsed`` pages whose file, or anchor, is not in the
    build at ``html_dir``. Pages outside ``parsed`` (Sphinx's index, say) are read on demand."""
    root = Path(html_dir).resolve()
    cache: dict[Path, set[str]] = {}

    def ids_of(target: Path) -> set[str]:
        if target not in cache:
            soup = parsed.get(target)
            cache[target] = anchors(soup if soup is not None else parse_page(target))
        return cache[target]

    problems: list[Problem] = []
    for page, soup in parsed.items():
        name = page.resolve().relative_to(root).as_posix()
        seen: set[str] = set()
        for ref in internal_references(soup):
            if ref in seen:
                continue
            seen.add(ref)
            parts = urlsplit(ref)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                problems.append(Problem(name, "link", f"{ref} (no such file)"))
            elif (
                parts.fragment
                and target.suffix == ".html"
                and unquote(parts.fragment) not in ids_of(target.resolve())
            ):
                problems.append(Problem(name, "link", f"{ref} (no such anchor)"))
    return problems


# --- figures of executed notebooks ---------------------------------------------------------------


def notebook_figures(notebook: Mapping[str, Any]) -> tuple[int, bool]:
    """How many image outputs an executed notebook holds, and whether its code draws a figure
    (``plt.show()``, ``fig.show()``, ``savefig``)."""
    images = 0
    draws = False
    for cell in notebook.get("cells", []) or []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        draws = draws or bool(PLOTTING_CALL.search(source))
        for output in cell.get("outputs", []) or []:
            data = output.get("data", {}) if isinstance(output, dict) else {}
            images += any(kind in data for kind in NOTEBOOK_IMAGE_TYPES)
    return images, draws


def page_images(soup: BeautifulSoup) -> int:
    """``<img>`` in the page's article (the theme's logos and launch buttons left out)."""
    return len(_article(soup).find_all("img"))


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def recorded_figures(results_dir: Path | str, run: str) -> list[str] | None:
    """The figure files run ``run``'s record lists (``<results_dir>/<run>/record.json``), or
    None when there is no such record."""
    record = Path(results_dir) / run / "record.json"
    if not record.is_file():
        return None
    figures = read_json_file(record).get("figures") or []
    return [str(name) for name in figures]


def check_figures(
    html_dir: Path | str,
    parsed: Mapping[Path, BeautifulSoup] | None = None,
    *,
    results_dir: Path | str | None = None,
) -> list[Problem]:
    """Every figure an executed notebook makes is an image on its page.

    For each notebook under ``<html_dir>/_sources``, its page (the same path, ``.html``) must
    show at least as many images as the notebook has image outputs, and a notebook whose code
    draws or writes a figure (``plt.show()``, ``savefig``, ``nb.save``) must hold an image
    output (``plt.show()`` under the Agg backend shows nothing). With ``results_dir``, the page
    of the notebook named after a run must also show at least as many images as the run's
    record lists figures.
    """
    root = Path(html_dir).resolve()
    sources = root / "_sources"
    problems: list[Problem] = []
    for notebook_path in sorted(sources.rglob("*.ipynb")) if sources.is_dir() else []:
        relative = notebook_path.relative_to(sources).with_suffix(".html")
        page = root / relative
        name = relative.as_posix()
        images, draws = notebook_figures(read_json_file(notebook_path))
        found = []
        if draws and images == 0:
            found.append("the notebook makes a figure but has no image output")
        if not page.is_file():
            found.append("the notebook's page was not rendered")
        else:
            shown = page_images((parsed or {}).get(page) or parse_page(page))
            if shown < images:
                found.append(f"{_count(images, 'image output')}, {shown} on the page")
            written = None if results_dir is None else recorded_figures(results_dir, page.stem)
            if written and shown < len(written):
                found.append(
                    f"the run writes {_count(len(written), 'figure')} ({', '.join(written)}), "
                    f"{_count(shown, 'image')} on the page"
                )
        problems += [Problem(name, "figure", detail) for detail in found]
    return problems


# --- the whole build -----------------------------------------------------------------------------


def check_html(
    html_dir: Path | str,
    *,
    results_dir: Path | str | None = None,
    repository: str | None = None,
) -> list[Problem]:
    """Every HTML-level problem of the build at ``html_dir``, sorted by page, kind and detail.

    ``results_dir`` (the runs' records, ``<work>/results``) adds the check that every figure a
    run writes is an image on its notebook's page (see :func:`check_figures`); ``repository``
    is the repository setting the buttons must follow (None: unset, so no button may link out;
    see :func:`find_placeholder_links`)."""
    root = Path(html_dir).resolve()
    parsed = {page: parse_page(page) for page in book_pages(root)}
    problems: list[Problem] = []
    for page, soup in parsed.items():
        problems += check_page(page.relative_to(root).as_posix(), soup, repository)
    problems += check_links(root, parsed)
    problems += check_captions(root, parsed)
    problems += check_figures(root, parsed, results_dir=results_dir)
    return sorted(set(problems))


def count_by_kind(problems: Iterable[Problem]) -> dict[str, int]:
    """``{kind: count}`` in a stable order: known kinds first, as listed, then any others."""
    counts = Counter(p.kind for p in problems)
    order = [*HTML_KINDS, "overflow", "math", "console", "figure-text", "clipped-cell",
             "raw-markup", "landing-budget", "load"]  # fmt: skip
    return {
        k: counts[k]
        for k in sorted(counts, key=lambda k: (order.index(k) if k in order else len(order), k))
    }


def format_report(problems: Iterable[Problem]) -> str:
    """One line per problem, then the count per kind (or ``no problems``)."""
    problems = list(problems)
    if not problems:
        return "no problems"
    lines = [str(p) for p in problems]
    lines.append(", ".join(f"{kind}: {n}" for kind, n in count_by_kind(problems).items()))
    return "\n".join(lines)
