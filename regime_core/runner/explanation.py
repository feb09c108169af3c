"""Why a claim came out as it did, in words filled from records: a claim's ``why`` templates.

A :mod:`~regime_core.runner.diagnosis` re-judges a claim under alternative settings; some
verdicts are explained instead by numbers that are not alternatives of the claim: which part of
a cost is the selector's and which the router's, the best α of a grid beside the score spread
of each encoder, the setting a level was measured in. A claim of ``paper_claims.yml`` states
those under ``why``, a list of entries, each a sentence template::

    why:
      - run: ablations                    # the record its fields read (default: the claim's run)
        each: {"MuSiQue, MiniLM": minilm.musique}   # optional: label -> what fills {value}
        when: ["alpha_rule.{value}.best_alpha", ">", "alpha_rule.{value}.alpha"]  # optional
        lead: "The best α of the grid lies above the rule's on "   # optional, said once
        text: "{label} ({numbers.alpha_rule.{value}.best_alpha|frac})"
        join: "; "                        # between the items of `each` (default "; ")
        none: "No best α lies above the rule's."   # optional: said when no item is left

Fields of ``text``, ``lead`` and ``none``: ``{numbers.KEY|KIND:DIGITS}`` (a number of the
record, formatted by :func:`~regime_core.runner.wording.format_number` with ``KIND``, default
``auto``, and its optional ``DIGITS``), ``{config.FIELD}`` (a config value as written; lists
joined by commas, ``None`` reads "all"), either prefixed by another run as
``{RUN:numbers.KEY|KIND}``; ``{paper.KEY|KIND}`` (the claim's own paper side, e.g.
``paper.levels.routed``: the one place the paper's numbers are typed); and ``{label}`` (the
item's label). ``{value}`` is replaced first, as text, everywhere (also in ``when``). ``when`` is
``[KEY, OP, KEY]`` with ``OP`` one of ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=`` and each
``KEY`` a dotted key of ``numbers`` (``RUN:KEY`` for another run) or ``paper.KEY``: an item is
said only when it holds. An item whose keys its run's record lacks (a setting this profile does
not run) is left out and named in :attr:`Explanation.not_run`, never guessed.
Each entry is read by :data:`regime_core.inputs.claims_file.WHY` when the claims are read. Pure:
records in, text out; no number is typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from regime_core.paper import WHEN_OPERATORS, WHY_FIELD
from regime_core.runner.records import Record
from regime_core.runner.wording import format_number

#: How a config value is shown: ``(field, value) -> text`` (the book's
#: :func:`regime_core.book.names.config_value`).
Display = Callable[[str, Any], str]


@dataclass(frozen=True)
class Explanation:
    """A claim's ``why`` filled from records: the text, and the items its records lack."""

    sentence: str
    #: the items named but absent from their run's record (``label`` each; ``text`` of an
    #: entry without ``each``)
    not_run: tuple[str, ...] = ()


def fill_why(
    template: str,
    records: Mapping[str, Record],
    run: str,
    *,
    label: str = "",
    paper: Mapping[str, Any] | None = None,
    display: Display | None = None,
) -> str:
    """``template`` with its fields filled from ``records`` (``run``'s unless a field names
    another) and the claim's ``paper`` side; ``{value}`` must already be replaced.
    ``KeyError`` names a key a record lacks."""

    def replace(match: re.Match[str]) -> str:
        key, source = match.group("key"), match.group("source")
        digits = None if match.group("digits") is None else int(match.group("digits"))
        if source == "paper":
            value = _paper_number(paper or {}, key)
        else:
            record = records[match.group("run") or run]
            if source == "config":
                return record.config_text(key, display)
            value = record.number(key)
        return format_number(value, match.group("kind") or "auto", digits)

    return WHY_FIELD.sub(replace, template.replace("{label}", label))


def _paper_number(paper: Mapping[str, Any], key: str) -> Any:
    """The paper's value at dotted ``key`` of a claim's ``paper`` side (which states it:
    :func:`regime_core.paper.load_claims` checks every key a ``why`` names)."""
    node: Any = paper
    for part in key.split("."):
        node = node[part]
    return node


def _holds(
    when: Sequence[str],
    records: Mapping[str, Record],
    run: str,
    paper: Mapping[str, Any],
    where: str,
) -> bool:
    values = []
    for key in (when[0], when[2]):
        key_run, _, name = key.rpartition(":")  # RUN:KEY, KEY or paper.KEY (as the file was read)
        if not key_run and key.startswith("paper."):
            value = _paper_number(paper, key.removeprefix("paper."))
        else:
            value = records[key_run or run].number(name)
        if isinstance(value, str):
            raise ValueError(f"{where}: 'when' key {key!r} is the text {value!r}, not a number")
        values.append(float(value))
    return WHEN_OPERATORS[when[1]](values[0], values[1])


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def explain(
    entries: Sequence[Mapping[str, Any]],
    records: Mapping[str, Record],
    default_run: str,
    *,
    paper: Mapping[str, Any] | None = None,
    display: Display | None = None,
    where: str = "why",
) -> Explanation:
    """The ``why`` entries of a claim filled from ``records`` (run id -> record); pure.

    Each entry gives one sentence: its ``lead``, then its ``text`` once (no ``each``) or once
    per label of ``each`` whose ``when`` holds, joined by ``join``; ``none`` when no item is
    left (nothing, without it). ``records`` holds every run the entries read
    (:func:`regime_core.runner.verdicts.judge_claims` checks it); an item whose keys its record
    lacks is left out and listed in ``not_run``."""
    sentences, not_run = [], []
    for entry in entries:
        run = str(entry.get("run", default_run))
        items = []
        for label, value in (entry.get("each") or {"": None}).items():
            try:
                item = _item(entry, str(label), value, records, run, paper or {}, display, where)
            except KeyError:  # a setting this profile does not run: named, not guessed
                not_run.append(str(label) or str(entry["text"]))
                continue
            if item is not None:
                items.append(item)
        if items:
            lead = fill_why(str(entry.get("lead", "")), records, run, paper=paper, display=display)
            sentences.append(_sentence(lead + str(entry.get("join", "; ")).join(items)))
        elif entry.get("none"):
            none = fill_why(str(entry["none"]), records, run, paper=paper, display=display)
            sentences.append(_sentence(none))
    return Explanation(" ".join(s for s in sentences if s), tuple(not_run))


def _item(
    entry: Mapping[str, Any],
    label: str,
    value: Any,
    records: Mapping[str, Record],
    run: str,
    paper: Mapping[str, Any],
    display: Display | None,
    where: str,
) -> str | None:
    """One item of an entry: its ``text`` filled for ``label`` (``value`` fills ``{value}``),
    or None when its ``when`` does not hold."""

    def sub(text: Any) -> str:
        return str(text) if value is None else str(text).replace("{value}", str(value))

    when = entry.get("when")
    if when is not None and not _holds([sub(k) for k in when], records, run, paper, where):
        return None
    return fill_why(sub(entry["text"]), records, run, label=label, paper=paper, display=display)
