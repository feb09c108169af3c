"""The live router on "Route your own question" (:mod:`regime_core.book.router_demo` computes
what it shows).

Directive ``regime-router-demo``: the router in the reader's browser (``router.js``, served from
``_static`` and loaded only on the pages that hold it) with presets, and a static table of the
presets' decisions by the Python router (what a reader without JavaScript sees). Presets come
from the toy world and the prepared datasets of the work directory; a dataset that is not
prepared is a warning, so a strict build fails.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_core.book.sphinx.records import warn, work_dir
from regime_core.book.sphinx.tables import table

ROUTER_DATASETS: tuple[str, ...] = ("2wikimultihopqa", "hotpotqa", "musique")
#: the package's resources: router.js and the packaged model it reads
RESOURCES = Path(str(importlib.resources.files("regime_core") / "resources"))


class RouterDemoDirective(SphinxDirective):
    """The live router with presets, and the presets' decisions by the Python router."""

    option_spec: ClassVar[dict[str, Any]] = {"per-source": directives.positive_int}

    def run(self) -> list[nodes.Node]:
        from regime_core.book.router_demo import STYLE, choose_presets, demo_html, load_model_json
        from regime_core.data import load_examples
        from regime_core.router.model import default_router, default_router_path

        model_path = default_router_path()
        self.env.note_dependency(str(model_path))
        examples = {"toyworld": load_examples("toyworld")}
        for dataset in ROUTER_DATASETS:
            try:
                examples[dataset] = load_examples(dataset, work=work_dir(self.env.app))
            except (FileNotFoundError, ValueError) as err:
                warn(self.env, f"router presets: {err}", self.get_location())
        presets = choose_presets(
            examples, default_router(), per_source=self.options.get("per-source", 2)
        )
        live = nodes.raw(
            "", STYLE + demo_html(load_model_json(model_path), presets, "regime-router"),
            format="html",
        )  # fmt: skip
        header = ("Preset", "Question", "Bridge title", "B_rel", "Decision", "p(union)")
        rows = [
            (f"{p.source} {p.example_id}", p.question, p.title, p.b_rel, p.action,
             f"{p.probability:.3f}")
            for p in presets
        ]  # fmt: skip
        presets_table = table(
            header, rows, widths=(2, 4, 2, 4, 1, 1), classes=["regime-router-presets"]
        )
        caption = nodes.paragraph(
            text="The presets and the decision the Python router (regime route) gives each, "
            "computed when this book was built."
        )
        return [live, caption, presets_table]


def serve_router_js(app: Sphinx, config: Any) -> None:
    """Copy ``regime_core/resources`` (router.js and the model it reads) to ``_static``."""
    config.html_static_path = [*config.html_static_path, str(RESOURCES)]


def router_js_on_demo_pages(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load router.js only on pages that hold the live router."""
    if 'class="regime-router-demo"' in context.get("body", ""):
        from regime_core.book.router_demo import ROUTER_JS

        app.add_js_file(ROUTER_JS)
