"""The book's chrome: its static files, buttons, footer, one search box, scripts once, how to cite.

- **Static files**: ``static/`` (beside this module) holds the style sheets and scripts: every
  page links ``regime.css``, ``regime-claims.css`` (the claims' chart and tables) and
  ``regime.js`` (figures that open full size, boxes that say they scroll sideways), the pages
  with the live router ``regime-router.css`` (:mod:`~regime_book.router_page`).
  ``regime book`` vendors MathJax under ``<work>/vendor/mathjax`` (:mod:`regime_core.vendor`);
  the work directory is only known at build time, so :func:`configure_site` serves that copy and
  points Sphinx's ``mathjax_path`` at it (without it, Sphinx keeps the CDN).
- **Repository and launch buttons** follow the one setting for the repository's address,
  :func:`regime_book.citation.repository_url` (``[project.urls] Repository`` in
  ``pyproject.toml``): while it is unset the book shows no repository, issue or launch (Binder,
  Colab) button, and the theme is given no address at all (Jupyter Book would otherwise fill in
  its own repository as a default); once it is set, all of them point there. The launch buttons
  of an executed notebook (in the gitignored ``book/executed``) open its source notebook, whose
  path the runner stores in the notebook's ``metadata.regime.source``.
- **Footer**: the companion's version and the build date (:func:`build_date`, which honours
  ``SOURCE_DATE_EPOCH`` for a reproducible build).
- **One search box**: the sidebar's on a wide screen (the theme's top bar, which repeated it, is
  left empty), the header's search button on a phone.
- **Downloads**: a page's source (``.md``, ``.rst``) is not offered, since it shows roles such
  as ``{rec}`` instead of the numbers; the executed notebook (``.ipynb``, with its outputs) and
  "print to PDF" (the rendered page) stay.
- **Scripts once**: a script the page would declare twice (sphinx-thebe's configuration is added
  both at the builder's start and again for the pages) is kept once, so no page logs
  "Identifier ... has already been declared".
- ``regime-citation``: the paper and the companion, as text and as BibTeX, from
  ``CITATION.cff`` (:mod:`regime_book.citation`).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_book import citation
from regime_book.records import work_dir
from regime_book.router_page import RESOURCES
from regime_core import paths
from regime_core.book.build import EXECUTED_PREFIX
from regime_core.strict_json import read_json_file

STATIC_DIR = Path(__file__).resolve().parent / "static"
CSS_FILES: tuple[str, ...] = ("regime.css", "regime-claims.css")
#: Linked from every page: figures that open full size, boxes that say they scroll sideways.
JS_FILES: tuple[str, ...] = ("regime.js",)

#: The tag a build carries when the repository's address is set, so its launch buttons show:
#: ``{only} launchable`` / ``{only} not launchable`` say how to launch in either case.
LAUNCHABLE_TAG = "launchable"
#: The branch the launch buttons open (the repository's default branch).
REPOSITORY_BRANCH = "main"
BINDERHUB_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"
#: Source files a reader would get as written, roles and all, instead of the rendered text.
UNRENDERED_SOURCES: tuple[str, ...] = (".md", ".rst")


def package_version() -> str:
    """The installed companion's version (``regime-core``)."""
    try:
        return metadata.version("regime-core")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_date() -> str:
    """Today in UTC (``YYYY-MM-DD``), or the day of ``SOURCE_DATE_EPOCH`` when it is set."""
    import os
    from datetime import UTC, datetime

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return moment.strftime("%Y-%m-%d")


def theme_options(repository: str | None, version: str, built: str = "") -> dict[str, Any]:
    """The theme options this module sets (merged over those Jupyter Book derives from
    ``_config.yml``)."""
    source = f'; source at <a href="{repository}">{repository}</a>' if repository else ""
    options: dict[str, Any] = {
        "navbar_persistent": [],  # the sidebar holds the one search box
        "extra_footer": (
            f"Version {version} of the companion (<code>regime-core</code>)"
            + (f", built on {built}" if built else "")
            + source
            + "."
        ),
    }
    if repository is None:
        options.update(
            repository_url="",
            use_repository_button=False,
            use_issues_button=False,
            use_edit_page_button=False,
            launch_buttons={},
        )
    else:
        options.update(
            repository_url=repository,
            repository_branch=REPOSITORY_BRANCH,
            path_to_docs="",
            use_repository_button=True,
            use_issues_button=True,
            launch_buttons={
                "notebook_interface": "classic",
                "binderhub_url": BINDERHUB_URL,
                "colab_url": COLAB_URL,
            },
        )
    return options


def configure_site(app: Sphinx, config: Any) -> None:
    """Set the buttons, footer and search box from the repository setting; serve the style
    sheets, the vendored MathJax and the router's resources (``config-inited``)."""
    from regime_core.vendor import MATHJAX_ENTRY

    own = Path(app.srcdir) / "pyproject.toml"  # the book's root; the repository's as a rule
    repository = citation.repository_url(own if own.is_file() else citation.PYPROJECT)
    options = dict(config.html_theme_options or {})
    options.update(theme_options(repository, package_version(), build_date()))
    config.html_theme_options = options
    if repository is not None:  # pages say how to launch either way (``{only} launchable``)
        app.tags.add(LAUNCHABLE_TAG)
    # the theme logs an error for an empty colour mode ("Got invalid theme mode")
    config.html_context = {"default_mode": "auto", **(config.html_context or {})}
    for css in CSS_FILES:
        app.add_css_file(css)
    for script in JS_FILES:
        app.add_js_file(script, defer="defer")
    static = [str(STATIC_DIR)]
    vendored = work_dir(app) / "vendor"
    if (vendored / "mathjax" / MATHJAX_ENTRY).is_file():
        static.append(str(vendored))
        config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"
    # router.js and the model it reads (loaded only by the pages holding the live router)
    config.html_static_path = [*config.html_static_path, *static, str(RESOURCES)]


def _without_unrendered_sources(buttons: list[Any]) -> list[Any]:
    kept = []
    for button in buttons:
        if isinstance(button, dict) and button.get("type") == "group":
            inner = _without_unrendered_sources(list(button.get("buttons", [])))
            if inner:
                kept.append({**button, "buttons": inner})
            continue
        if (
            isinstance(button, dict)
            and button.get("label") == "download-source-button"
            and str(button.get("text", "")) in UNRENDERED_SOURCES
        ):
            continue
        kept.append(button)
    return kept


def _script_key(script: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    filename = str(getattr(script, "filename", script) or "")
    attributes = getattr(script, "attributes", {}) or {}
    return filename, tuple(sorted((str(k), str(v)) for k, v in attributes.items()))


def _launch_source(app: Sphinx, pagename: str) -> str | None:
    """The source notebook of an executed notebook's page (``None`` for any other page)."""
    if not pagename.startswith(EXECUTED_PREFIX):
        return None
    try:
        executed = read_json_file(Path(app.srcdir) / f"{pagename}.ipynb")
        return str(executed["metadata"]["regime"]["source"])
    except (OSError, KeyError, TypeError, ValueError):
        return None


def _launching(value: Any, old: str, source: str) -> Any:
    """``value`` with every launch URL opening ``source`` instead of ``old`` (the download link
    stays local)."""
    if isinstance(value, str):
        return value.replace(old, source) if value.startswith("http") else value
    if isinstance(value, list):
        return [_launching(v, old, source) for v in value]
    if isinstance(value, dict):
        return {k: _launching(v, old, source) for k, v in value.items()}
    return value


def tidy_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Point the launch buttons at the source notebook, drop the unrendered-source download and
    scripts declared twice (``html-page-context``, after the theme has built its buttons)."""
    if "header_buttons" in context:
        buttons = context["header_buttons"]
        source = _launch_source(app, pagename)
        if source is not None:
            buttons = _launching(buttons, f"{pagename}.ipynb", source)
        context["header_buttons"] = _without_unrendered_sources(buttons)
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        unique: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
        for script in scripts:
            unique.setdefault(_script_key(script), script)  # the first of each, in order
        scripts[:] = unique.values()


class CitationDirective(SphinxDirective):
    """``regime-citation``: the paper, then the companion, each as a reference and as BibTeX,
    from ``CITATION.cff``."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(paths.REPO_ROOT / citation.CITATION_FILE))
        self.env.note_dependency(str(citation.PYPROJECT))
        headings = ("The paper", "This companion")
        repository = self.env.config.html_theme_options.get("repository_url") or None
        blocks = citation.citation_blocks(repository=repository)
        result: list[nodes.Node] = []
        for heading, cite in zip(headings, blocks, strict=True):
            lead, title, rest = cite.parts()
            text = [nodes.Text(f"{lead} "), nodes.emphasis(title, title), nodes.Text(rest)]
            bibtex = nodes.literal_block(cite.bibtex(), cite.bibtex(), language="bibtex")
            result += [nodes.rubric(heading, heading), nodes.paragraph("", "", *text), bibtex]
        return result
