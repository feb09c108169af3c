"""The launch buttons (Binder, Colab) of an executed notebook open its source notebook.

Executed notebooks live in the gitignored ``book/executed``; the runner stores the source's
path (relative to the repository) in the notebook's ``metadata.regime.source``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from regime_core.book.build import EXECUTED_PREFIX
from regime_core.strict_json import read_json_file


def launch_sources(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Point the Binder/Colab buttons of an executed notebook's page at its source notebook."""
    if not pagename.startswith(EXECUTED_PREFIX):
        return
    executed = Path(app.srcdir) / f"{pagename}.ipynb"
    try:
        source = read_json_file(executed)["metadata"]["regime"]["source"]
    except (OSError, KeyError, TypeError, ValueError):
        return
    old = f"{pagename}.ipynb"

    def rewrite(value: Any) -> Any:
        if isinstance(value, str):  # only launch URLs; the download link stays local
            return value.replace(old, source) if value.startswith("http") else value
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: rewrite(v) for k, v in value.items()}
        return value

    if "header_buttons" in context:
        context["header_buttons"] = rewrite(context["header_buttons"])
