"""The live router on "Route your own question" (:mod:`regime_book.router_demo` computes
what it shows).

Directive ``regime-router-demo``: the router in the reader's browser (``router.js``, served from
``_static`` and loaded only on the pages that hold it) with presets, and a static table of the
presets' decisions by the Python router (what a reader without JavaScript sees). The presets are
hand-written or come from the toy world (never dataset text), and each says which sentence
``B_rel`` must be and why; a preset whose ``B_rel`` the router does not select fails the build.

Directive ``regime-router-features``: the five features by the names the page shows, each with
its one-line meaning and the name ``regime route --json`` prints.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from regime_book.tables import code_spans, table

#: the package's resources, router.js and the packaged model it reads, served from ``_static``
RESOURCES = Path(str(importlib.resources.files("regime_core") / "resources"))
ROUTER_CSS = "regime-router.css"  # in static/ beside this module, served by site.configure_site


class _RouterDirective(SphinxDirective):
    """A directive that shows what the packaged router does; it takes no options."""

    def router(self) -> Any:
        """The packaged router, its model file noted as an input of the page."""
        from regime_core.router.model import default_router, default_router_path

        self.env.note_dependency(str(default_router_path()))
        return default_router()


class RouterDemoDirective(_RouterDirective):
    """The live router with presets, and the presets' decisions by the Python router."""

    def run(self) -> list[nodes.Node]:
        from regime_book.router_demo import (
            HAND_WRITTEN_PRESETS,
            demo_html,
            load_model_json,
            route_presets,
            toy_presets,
        )
        from regime_core.data import load_examples
        from regime_core.router.model import default_router_path

        router = self.router()
        specs = [*HAND_WRITTEN_PRESETS, *toy_presets(load_examples("toyworld"), router)]
        presets = route_presets(specs, router)
        live = nodes.raw(
            "",
            demo_html(load_model_json(default_router_path()), presets, "regime-router"),
            format="html",
        )
        header = (
            "Preset",
            "Question",
            "B_rel",
            "Why it is the right sentence",
            "Decision",
            "p(union)",
        )
        rows = [
            (f"{p.source}: {p.key}", p.question, p.b_rel, p.why, p.action, f"{p.probability:.3f}")
            for p in presets
        ]
        presets_table = table(
            header, rows, widths=(2, 4, 4, 5, 1, 1), classes=["regime-router-presets"]
        )
        caption = nodes.paragraph(
            text="The presets, the sentence each one's B_rel must be and why, and the decision "
            "the Python router (regime route) gives each, computed when this book was built."
        )
        return [live, caption, presets_table]


class RouterFeaturesDirective(_RouterDirective):
    """The five features: the page's name, the one-line meaning, the name in ``--json``, and
    which way the packaged router's coefficient pushes (read from its model file)."""

    def run(self) -> list[nodes.Node]:
        from regime_book.router_demo import FEATURE_GUIDE, feature_pushes

        pushes = {p.name: p for p in feature_pushes(self.router())}
        items = nodes.bullet_list()
        for name, (label, meaning) in FEATURE_GUIDE.items():
            para = nodes.paragraph("", "", nodes.strong(text=label))
            para += code_spans(
                f". {meaning} (`{name}` in `regime route --json`.) In the packaged router: "
                f"{pushes[name].sentence()}"
            )
            items += nodes.list_item("", para)
        return [items]


class RouterLearnedDirective(_RouterDirective):
    """What the packaged router learned: a summary in words, the decision over a grid of
    feature values and the decisions on the toy world, all computed from its model file."""

    def run(self) -> list[nodes.Node]:
        from regime_book.router_demo import (
            MAX_NAMES_SHOWN,
            count_ranges,
            held_new_entity,
            learned_summary,
            routed_by_kind,
            union_name_limits,
        )
        from regime_core.data import load_examples

        router = self.router()
        out: list[nodes.Node] = [nodes.paragraph("", "", *code_spans(learned_summary(router)))]
        header = (
            "Cue words",
            "Yes/no",
            "Union with names",
            "Same, if it names a name in B_rel",
        )
        limits = {
            (lim.comparison_cues, lim.yes_no_opener, lim.names_b_rel_entity): lim.union_counts
            for lim in union_name_limits(router)
        }
        rows = [
            (
                str(cues),
                "yes" if yes_no else "no",
                count_ranges(limits[(cues, yes_no, False)]),
                count_ranges(limits[(cues, yes_no, True)]),
            )
            for cues in (0, 1, 2)
            for yes_no in (False, True)
        ]
        out.append(
            nodes.paragraph(
                text=f"The table gives, for each kind of question, the numbers of names in the "
                f"question (0 to {MAX_NAMES_SHOWN} tried) for which the packaged router says "
                f'union; with more names it says q. "B_rel brings a new name" is held at '
                f"{held_new_entity(router):g}, its value in the training questions, computed "
                "with the router when this book was built."
            )
        )
        out.append(table(header, rows, widths=(2, 2, 4, 4), classes=["regime-router-learned"]))
        counts = routed_by_kind(load_examples("toyworld"), router)
        words = "; ".join(
            f"of its {c.n} {c.kind} questions, {c.to_q} go to q and {c.to_union} to union"
            for c in counts
        )
        out.append(
            nodes.paragraph(text=f"Run on the toy world's questions with their bridges: {words}.")
        )
        return out


class RouterFailuresDirective(_RouterDirective):
    """Hand-written questions the packaged router gets wrong, with what it does on each; a case
    it no longer gets wrong fails the build."""

    def run(self) -> list[nodes.Node]:
        from regime_book.router_demo import FAILURE_CASES, route_failures

        failures = route_failures(FAILURE_CASES, self.router())
        items = nodes.bullet_list(classes=["regime-router-failures"])
        for f in failures:
            right = f.right_action if f.right_action is not None else f"B_rel {f.right_b_rel!r}"
            para = nodes.paragraph()
            para += nodes.strong(text=f"{f.key.capitalize()}. ")
            para += nodes.emphasis(text=f.question)
            para += nodes.Text(f" Bridge: {f.bridge}")
            said = nodes.paragraph(
                text=f"The router: {f.action} (p(union) = {f.probability:.2f}), with B_rel "
                f"{f.b_rel!r}. Right: {right}. {f.why}"
            )
            items += nodes.list_item("", para, said)
        return [items]


def router_assets_on_demo_pages(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load router.js and its style sheet only on pages that hold the live router."""
    if 'class="regime-router-demo"' in context.get("body", ""):
        from regime_book.router_demo import ROUTER_JS

        app.add_js_file(ROUTER_JS)
        app.add_css_file(ROUTER_CSS)
