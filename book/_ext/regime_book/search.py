"""What the book's search shows: the commands of the CLI page in plain text.

sphinx-argparse lists each command of ``book/reference/cli.rst`` in its ``commands`` domain with
its description as written, reST and all (a command's description is its module's docstring),
and the search shows that description beside each command found, so its literals would reach
the reader between double backticks. :func:`plain_command_descriptions` rewrites each
description as the text a reader sees on the page, once every page has been read and before
the search index is written.
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx

#: reST inline markup a description may hold: a role, a literal, emphasis or strong emphasis
_ROLE = re.compile(r":[\w:+.-]+:`([^`]*)`")
_LITERAL = re.compile(r"``([^`]+)``")
_INTERPRETED = re.compile(r"`([^`]+)`_?")
_EMPHASIS = re.compile(r"\*\*([^*]+)\*\*|\*([^*]+)\*")


def plain_text(rst: str) -> str:
    """The text a reader sees of a reST paragraph: markup dropped, whitespace folded.

    >>> plain_text("``regime annotate``: see :func:`~x.y` and *this*,\\n  **twice**.")
    'regime annotate: see ~x.y and this, twice.'
    """
    text = _ROLE.sub(r"\1", rst)
    text = _LITERAL.sub(r"\1", text)
    text = _INTERPRETED.sub(r"\1", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return " ".join(text.split())


def plain_command_descriptions(app: Sphinx, env: Any) -> None:
    """Each command's description in sphinx-argparse's ``commands`` domain as plain text
    (``env-check-consistency``: after every read, before the search index is written)."""
    domain = env.domains.get("commands")
    if domain is None:
        return
    commands = domain.data.get("commands", [])
    for i, (name, description, *rest) in enumerate(commands):
        commands[i] = (name, plain_text(str(description)), *rest)
    for entries in domain.data.get("commands-by-group", {}).values():
        for i, (name, description, *rest) in enumerate(entries):
            entries[i] = (name, plain_text(str(description)), *rest)
