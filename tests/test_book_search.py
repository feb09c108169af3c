"""The search shows the CLI's command descriptions as plain text, never as reST."""

from __future__ import annotations

from types import SimpleNamespace

from regime_book.search import plain_command_descriptions, plain_text


def test_a_description_loses_its_markup_and_keeps_its_words() -> None:
    assert plain_text("``regime annotate sample|kappa``: the classroom check") == (
        "regime annotate sample|kappa: the classroom check"
    )
    assert plain_text("reads :class:`~regime_core.schema.TwoHop` rows,\n  *one* per line") == (
        "reads ~regime_core.schema.TwoHop rows, one per line"
    )
    assert plain_text("a | b, no markup") == "a | b, no markup"


def test_every_command_of_the_domain_is_rewritten_the_rest_left_alone() -> None:
    entry = ("regime annotate", "``regime annotate``: *check*", "command", "cli", "a", 0)
    domain = SimpleNamespace(data={"commands": [entry], "commands-by-group": {"g": [entry]}})
    env = SimpleNamespace(domains={"commands": domain})
    plain_command_descriptions(None, env)  # type: ignore[arg-type]
    plain = ("regime annotate", "regime annotate: check", "command", "cli", "a", 0)
    assert domain.data["commands"] == [plain]
    assert domain.data["commands-by-group"] == {"g": [plain]}
    plain_command_descriptions(None, SimpleNamespace(domains={}))  # type: ignore[arg-type]
