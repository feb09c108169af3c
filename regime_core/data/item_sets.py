"""Item sets: which of a dataset's two-hop items a run reads (``item_set``, :data:`ITEM_SETS`).

``prepare`` keeps every question it can make a two-hop item of (its exclusions are
:data:`regime_core.data.canonical.EXCLUSION_REASONS`, counted in the manifest). The verdicts
depend on that choice, so a stricter one is a named, counted setting of every run, never a
silent filter: ``item_set="all"`` (the default, :data:`regime_core.config.ITEM_SET`) reads every
item; ``item_set="strict"`` reads only the items that pass every clause of
:data:`STRICT_CLAUSES`, on every dataset alike.

**The strict rule, precisely.** An item is kept when both hold:

1. *the target's title is mentioned exactly once in the bridge.* The names are the hop-2
   (target) passage's title and, when it ends in a parenthetical disambiguator, the title
   without it ("Heat (1995 film)" and "Heat"); no alias of the dataset (``hop2_entity``,
   ``hop2_aliases``) counts. The text searched is the bridge (hop-1) passage's text, its
   sentences joined by spaces (not its title, not the target, not the question). Both are
   normalised by :func:`regime_core.text.normalize`'s default rules (accents stripped, case
   ignored, possessive "'s" dropped, punctuation a token break, articles dropped) and a
   mention is a whole-token match: "Paris" is in "Paris's mayor", not in "Parisian". Mentions
   are leftmost-longest and never overlap (:func:`regime_core.text.find_mentions`): "Heat
   (1995 film)" written out is one mention, not two. A one-word form that is one word only
   because an article was dropped ("The Who" -> "who") matches only where the text writes it
   capitalised after an article. Zero mentions fail (``title_not_mentioned``), two or more
   fail (``title_mentioned_repeatedly``).
2. *the answer is not yes or no.* A yes/no (comparison-answer) question is recognised by its
   answer alone: ``normalize(answer)`` is ``"yes"`` or ``"no"`` (the test that already types
   IRCoT-only HotpotQA questions as comparisons, ``ircot_yes_no_answer``); the answer's aliases
   and the question's wording are not read.

A removed item is counted under the first clause of :data:`STRICT_CLAUSES` it fails (so the
counts add up to the items removed), and under every clause it fails in ``failing`` (an item
may fail two). Pure: examples in, a :class:`ItemSetFilter` out.

>>> from regime_core.data import toyworld
>>> world = toyworld.generate(toyworld.ToyWorldConfig(n_questions=4))
>>> chosen = filter_item_set(world, "all")
>>> chosen.n, chosen.n_kept, chosen.n_removed
(4, 4, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from regime_core import config
from regime_core.schema import Example
from regime_core.text import find_mentions, normalize

#: The item sets a run may read (their meanings: :data:`regime_core.config.ITEM_SETS`).
ITEM_SETS: tuple[str, ...] = config.ITEM_SETS
#: The item set of every run unless it says otherwise: every two-hop item.
ALL = "all"
#: The answers that make a yes/no question, normalised.
YES_NO: frozenset[str] = frozenset({"yes", "no"})

#: Why the strict item set leaves an item out, in the order an item is counted under (its first
#: failing clause); the first two are clause 1 of the module docstring, the third clause 2.
STRICT_CLAUSES: dict[str, str] = {
    "yes_no_answer": "the answer is yes or no (normalised): a comparison answer",
    "title_not_mentioned": "the bridge passage's text never mentions the target passage's title "
    "(normalised, whole words; with and without a '(film)'-style tail)",
    "title_mentioned_repeatedly": "the bridge passage's text mentions the target passage's title "
    "twice or more",
}


def mention_count(text: str, title: str) -> int:
    """How many times ``text`` mentions ``title`` by clause 1 of the module docstring:
    non-overlapping whole-token matches of the title's normalised forms (pure).

    >>> mention_count("Heat (1995 film) stars Pacino. Michael Mann made HEAT.", "Heat (1995 film)")
    2
    >>> mention_count("The heatwave of 1995.", "Heat (1995 film)")
    0
    """
    return len(find_mentions(text, title))


def title_mentions(example: Example) -> int:
    """How many times the bridge's text mentions the target's title (clause 1)."""
    return mention_count(example.bridge.text, example.target.title)


def is_yes_no(example: Example) -> bool:
    """The example's answer, normalised, is ``yes`` or ``no`` (clause 2)."""
    return normalize(example.answer) in YES_NO


def strict_failures(example: Example) -> tuple[str, ...]:
    """The clauses of :data:`STRICT_CLAUSES` the example fails, in their order (empty: kept)."""
    failed: list[str] = []
    if is_yes_no(example):
        failed.append("yes_no_answer")
    mentions = title_mentions(example)
    if mentions == 0:
        failed.append("title_not_mentioned")
    elif mentions > 1:
        failed.append("title_mentioned_repeatedly")
    return tuple(failed)


@dataclass(frozen=True)
class ItemSetFilter:
    """The items an item set keeps from ``n`` and the counts of those it removes: ``removed``
    per first failing clause (they add up to ``n_removed``), ``failing`` per clause failed
    (every clause listed, zeros included; an item may count twice)."""

    item_set: str
    n: int
    kept: tuple[Example, ...]
    removed: Mapping[str, int]
    failing: Mapping[str, int]

    @property
    def n_kept(self) -> int:
        return len(self.kept)

    @property
    def n_removed(self) -> int:
        return self.n - self.n_kept

    def to_numbers(self) -> dict[str, Any]:
        """The counts as a record keeps them."""
        return {
            "item_set": self.item_set,
            "n": self.n,
            "kept": self.n_kept,
            "removed": self.n_removed,
            "removed_by": dict(self.removed),
            "failing": dict(self.failing),
        }


def filter_item_set(examples: Iterable[Example], item_set: str) -> ItemSetFilter:
    """The examples ``item_set`` keeps, in their order, and the counts of the others (pure).

    ``"all"`` keeps every example and counts nothing removed (its clause counts are zero);
    ``"strict"`` keeps the examples :func:`strict_failures` finds no fault with.
    """
    items = tuple(examples)
    removed = dict.fromkeys(STRICT_CLAUSES, 0)
    failing = dict.fromkeys(STRICT_CLAUSES, 0)
    if item_set == ALL:
        return ItemSetFilter(item_set, len(items), items, removed, failing)
    kept: list[Example] = []
    for ex in items:
        failed = strict_failures(ex)
        if not failed:
            kept.append(ex)
            continue
        removed[failed[0]] += 1
        for clause in failed:
            failing[clause] += 1
    return ItemSetFilter(item_set, len(items), tuple(kept), removed, failing)
