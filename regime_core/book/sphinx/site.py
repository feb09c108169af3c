"""The book's chrome: its buttons, its footer, its one search box, its scripts once, how to cite.

- **Repository and launch buttons** follow the one setting for the repository's address,
  :func:`regime_core.paths.repository_url` (``[project.urls] Repository`` in
  ``pyproject.toml``): while it is unset the book shows no repository, issue or launch (Binder,
  Colab) button, and the theme is given no address at all (Jupyter Book would otherwise fill in
  its own repository as a default); once it is set, all of them point there.
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
  ``CITATION.cff`` (:mod:`regime_core.book.citation`).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_core import paths

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
    """Set the buttons, footer and search box from the repository setting (``config-inited``)."""
    own = Path(app.srcdir) / "pyproject.toml"  # the book's root; the repository's as a rule
    repository = paths.repository_url(own if own.is_file() else None)
    options = dict(config.html_theme_options or {})
    options.update(theme_options(repository, package_version(), build_date()))
    config.html_theme_options = options
    # the theme logs an error for an empty colour mode ("Got invalid theme mode")
    config.html_context = {"default_mode": "auto", **(config.html_context or {})}


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


def tidy_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Drop the unrendered-source download and scripts declared twice (``html-page-context``,
    after the theme has built its buttons)."""
    if "header_buttons" in context:
        context["header_buttons"] = _without_unrendered_sources(context["header_buttons"])
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
        unique = []
        for script in scripts:
            key = _script_key(script)
            if key not in seen:
                seen.add(key)
                unique.append(script)
        scripts[:] = unique


class CitationDirective(SphinxDirective):
    """``regime-citation``: the paper, then the companion, each as a reference and as BibTeX,
    from ``CITATION.cff``."""

    def run(self) -> list[nodes.Node]:
        from regime_core.book import citation

        self.env.note_dependency(str(paths.REPO_ROOT / citation.CITATION_FILE))
        self.env.note_dependency(str(paths.PYPROJECT))
        headings = ("The paper", "This companion")
        repository = self.env.config.html_theme_options.get("repository_url") or None
        blocks = citation.citation_blocks(repository=repository)
        result: list[nodes.Node] = []
        for heading, cite in zip(headings, blocks, strict=True):
            result.append(nodes.rubric(heading, heading))
            lead, title, rest = cite.parts()
            paragraph = nodes.paragraph()
            paragraph += [
                nodes.Text(f"{lead} "),
                nodes.emphasis(title, title),
                nodes.Text(rest),
            ]
            result.append(paragraph)
            block = nodes.literal_block(cite.bibtex(), cite.bibtex(), language="bibtex")
            result.append(block)
        return result
