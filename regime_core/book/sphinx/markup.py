"""Docstring markup (reST) shown on a Markdown page.

Docstrings are written in reST (``code``, :func:`name`). A MyST page parses them as Markdown,
where the roles would show as raw text: :func:`as_myst` rewrites them into MyST's own syntax, so
they still render as code and links.
"""

from __future__ import annotations

import re

# :role:`text` or :domain:role:`text`
_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<text>[^`]+)`")
_DOUBLE_BACKTICKS = re.compile(r"``(?P<text>[^`]+?)``")


def as_myst(text: str) -> str:
    """reST inline markup as MyST Markdown: ````x```` -> ```x```, ``:func:`y``` -> ``{func}`y```.

    >>> as_myst("Labels from :func:`~regime_core.router.outcome_labels` (``-1`` = dropped)")
    'Labels from {func}`~regime_core.router.outcome_labels` (`-1` = dropped)'
    """
    text = _DOUBLE_BACKTICKS.sub(lambda m: f"`{m.group('text')}`", text)
    return _ROLE.sub(lambda m: f"{{{m.group('role')}}}`{m.group('text')}`", text)
