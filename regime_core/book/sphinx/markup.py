"""Docstring markup (reST) shown where reST is not what renders it.

Docstrings and help texts are written in reST (``code``, :func:`name`). A MyST page parses them
as Markdown, where the roles would show as raw text: :func:`as_myst` rewrites them into MyST's
own syntax, so they still render as code and links. A text block (the ``--help`` of a command)
shows them verbatim: :func:`as_plain` drops the markup and keeps the words.
"""

from __future__ import annotations

import re

# :role:`text` or :domain:role:`text`
_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<text>[^`]+)`")
_DOUBLE_BACKTICKS = re.compile(r"``(?P<text>[^`]+?)``")
_LITERAL_BLOCK_MARK = re.compile(r"(?<=\S)::$", re.MULTILINE)
_TITLE_AND_TARGET = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


def as_myst(text: str) -> str:
    """reST inline markup as MyST Markdown: ````x```` -> ```x```, ``:func:`y``` -> ``{func}`y```.

    >>> as_myst("Labels from :func:`~regime_core.router.outcome_labels` (``-1`` = dropped)")
    'Labels from {func}`~regime_core.router.outcome_labels` (`-1` = dropped)'
    """
    text = _DOUBLE_BACKTICKS.sub(lambda m: f"`{m.group('text')}`", text)
    return _ROLE.sub(lambda m: f"{{{m.group('role')}}}`{m.group('text')}`", text)


def as_plain(text: str) -> str:
    """reST inline markup dropped, for text shown as it is (a role keeps its target's short name
    when written ``~a.b.c``, its title when written ``title <target>``).

    >>> as_plain("``regime demo``: see :func:`~regime_core.teaching.demo.run_demo`::")
    'regime demo: see run_demo:'
    """

    def role(match: re.Match[str]) -> str:
        body = match.group("text")
        titled = _TITLE_AND_TARGET.match(body)
        if titled:
            return titled.group("title")
        return body[1:].rsplit(".", 1)[-1] if body.startswith("~") else body

    text = _DOUBLE_BACKTICKS.sub(lambda m: m.group("text"), text)
    text = _ROLE.sub(role, text)
    return _LITERAL_BLOCK_MARK.sub(":", text)
