"""The regime predicates P1 and P2, the gold relation sentence ``B_rel``, and regime labels.

For a two-hop example with hop-2 entity *e* (its mention, plus optionally the target title
and its aliases):

* **P1**: *e* appears in the question.
* **P2**: *e* appears in a *relation-bearing sentence* of the bridge passage. We define a
  relation-bearing sentence as a bridge sentence that mentions *e* (the sentence that links
  hop 1 to hop 2); so P2 holds iff some bridge sentence mentions *e*.

The regime is a function of (P1, P2):

=====  =====  ==============
P1     P2     regime
=====  =====  ==============
True   True   ``Q-dominant``
True   False  ``Q-dominant``
False  True   ``B-dominant``
False  False  ``neither``
=====  =====  ==============

Mentions are matched by :meth:`regime_core.text.NameMatcher.any` under the normalisation rules of
:class:`RegimeRules`; every choice is a parameter, none is hidden. Comparison ("parallel")
items are not special-cased: their question names both entities, so they are expected to be
Q-dominant, and :func:`regime_table` measures whether they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.inputs import Choice, Flag, Instance
from regime_core.inputs.configs import declared
from regime_core.schema import Example
from regime_core.text import NormalizationRules, compile_names, find_mentions

Regime = Literal["Q-dominant", "B-dominant", "neither"]
REGIMES: tuple[str, ...] = ("Q-dominant", "B-dominant", "neither")

PREDICATE_NAMES: dict[str, str] = {
    "title": "the hop-2 passage's title and its aliases (the entity the hop-2 passage is about)",
    "title+linking": "the title and aliases plus the linking entity (Example.hop2_entity: the "
    "step-1 answer in MuSiQue, the evidence object in 2Wiki), which the bridge contains by "
    "construction, so P2 is then true for (almost) every item",
}
"""which names of the hop-2 entity may count for P1 and P2; finding B_rel uses every name"""

RELATION_SENTENCE_DEFINITIONS: dict[str, str] = {
    "mentions_hop2_entity": "a bridge sentence that mentions the hop-2 entity (by its mention, "
    "and by title/aliases where RegimeRules allows them)",
}
"""what makes a bridge sentence relation-bearing"""


@dataclass(frozen=True)
class RegimeRules(ConfigMixin):
    """Every choice behind P1, P2 and ``B_rel``.

    ``Example.hop2_entity`` always counts as a name. Readers put the target title among the
    aliases too, so only turning ``use_title`` and ``use_aliases`` both off restricts P1/P2 to
    the entity's own mention (this matters for MuSiQue, whose target passage is often titled
    after another entity of the question). The linking entity is always used to *find*
    ``B_rel`` and the bridge's mention of the entity, but as a predicate name it makes P2 true
    by construction, so by default it is not one (``config.PREDICATE_NAMES``).
    """

    normalization: NormalizationRules = declared(  # noqa: RUF009  (a dataclasses.field)
        kind=Instance(NormalizationRules), factory=NormalizationRules
    )
    """how names and texts are normalised before they are matched"""
    use_title: bool = declared(True, Flag())
    """the hop-2 passage's title counts as a name of the hop-2 entity"""
    use_aliases: bool = declared(True, Flag())
    """the hop-2 entity's aliases count as names (its mention always does)"""
    relation_sentence: str = declared(
        "mentions_hop2_entity", Choice(tuple(RELATION_SENTENCE_DEFINITIONS))
    )
    """which bridge sentences are relation-bearing (a key of RELATION_SENTENCE_DEFINITIONS)"""
    predicate_names: str = declared(config.PREDICATE_NAMES, Choice(tuple(PREDICATE_NAMES)))
    """which names of the hop-2 entity make P1 and P2: title (the hop-2 passage's title and aliases)
    or title+linking (also the linking entity)
    """

    def validate(self) -> None:
        if self.predicate_names == "title" and not (self.use_title or self.use_aliases):
            raise ValueError(
                "RegimeRules: predicate_names='title' needs use_title or use_aliases; "
                "with both off no name is left for P1/P2"
            )


DEFAULT_REGIME_RULES = RegimeRules()


@dataclass(frozen=True)
class GoldBRel:
    """The gold relation sentence of the bridge: its text, index and where it came from."""

    sentence: str | None
    index: int | None
    source: str
    """example (the example's own relation_sentence, whose relation_source says how it was
    made), else entity_mention (the first bridge sentence that mentions the hop-2 entity), else
    none"""


# --- kernels ---------------------------------------------------------------------------------


def regime_label(p1: bool, p2: bool) -> Regime:
    """The regime of one (P1, P2) cell (see the module's truth table).

    >>> regime_label(True, False), regime_label(False, True), regime_label(False, False)
    ('Q-dominant', 'B-dominant', 'neither')
    """
    if p1:
        return "Q-dominant"
    return "B-dominant" if p2 else "neither"


def regime_labels(p1: np.ndarray | Sequence[bool], p2: np.ndarray | Sequence[bool]) -> np.ndarray:
    """Vectorised :func:`regime_label`: boolean arrays in, an object array of labels out.

    >>> regime_labels([True, False, False], [False, True, False]).tolist()
    ['Q-dominant', 'B-dominant', 'neither']
    """
    a, b = np.asarray(p1, dtype=bool), np.asarray(p2, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"regime_labels: p1 has shape {a.shape}, p2 has shape {b.shape}")
    return np.where(a, REGIMES[0], np.where(b, REGIMES[1], REGIMES[2])).astype(object)


# --- per example -----------------------------------------------------------------------------


def hop2_names(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> tuple[str, ...]:
    """The names of the hop-2 entity that count under ``rules``: the mention, then the target's
    title (``use_title``), then the aliases (``use_aliases``); duplicates removed."""
    names = _names(example, rules, linking=True)
    if not compile_names(names, rules.normalization).forms:
        raise ValueError(
            f"example {example.id}: the hop-2 entity has no usable name under the rules "
            f"(field 'hop2_entity' is {example.hop2_entity!r}, names {list(names)!r} all normalise "
            "to empty); fix the record or relax RegimeRules.normalization"
        )
    return names


def _names(example: Example, rules: RegimeRules, *, linking: bool) -> tuple[str, ...]:
    """The linking entity (``linking``), the title and the aliases ``rules`` count, in that
    order; blanks and duplicates removed."""
    names = [example.hop2_entity] if linking else []
    if rules.use_title:
        names.append(example.target.title)
    if rules.use_aliases:
        names.extend(example.hop2_aliases)
    return tuple(dict.fromkeys(n for n in names if n.strip()))


def bridge_entity_mention(
    example: Example, b_rel_index: int | None, rules: RegimeRules
) -> str | None:
    """The hop-2 entity *as the bridge writes it*: the first mention of any hop-2 name in
    ``B_rel``, else in the first bridge sentence that has one; None when the bridge never
    names it.

    Why: an entity arm queried with the target's *title* retrieves the target by name (it
    leaks the answer passage); the bridge's own words are what an iterative retriever has
    after hop 1 (design notes, "two traps").
    """
    names = hop2_names(example, rules)
    sentences = list(example.bridge.sentences)
    order = list(range(len(sentences)))
    if b_rel_index is not None and 0 <= b_rel_index < len(sentences):
        order.remove(b_rel_index)
        order.insert(0, b_rel_index)
    for i in order:
        found = find_mentions(sentences[i], names, rules.normalization)
        if found:
            return found[0].surface
    return None


def predicate_names(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> tuple[str, ...]:
    """The names that count for P1 and P2 under ``rules.predicate_names``: with ``"title"`` the
    target's title (``use_title``) and aliases (``use_aliases``); with ``"title+linking"``
    every name of :func:`hop2_names` (the linking entity first)."""
    if rules.predicate_names == "title+linking":
        return hop2_names(example, rules)
    names = _names(example, rules, linking=False)
    if not compile_names(names, rules.normalization).forms:
        raise ValueError(
            f"example {example.id}: the hop-2 passage's title {example.target.title!r} and "
            f"aliases {list(example.hop2_aliases)!r} leave no usable name for P1/P2; fix the "
            "record or use RegimeRules(predicate_names='title+linking')"
        )
    return names


def p1(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> bool:
    """P1: the hop-2 entity (any of :func:`predicate_names`) appears in the question."""
    matcher = compile_names(predicate_names(example, rules), rules.normalization)
    return matcher.any(example.question)


def relation_sentences(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> list[int]:
    """Indices of the bridge's relation-bearing sentences: those that mention the hop-2 entity."""
    matcher = compile_names(hop2_names(example, rules), rules.normalization)
    return [i for i, s in enumerate(example.bridge.sentences) if matcher.any(s)]


def p2(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> bool:
    """P2: the hop-2 entity (any of :func:`predicate_names`) appears in a relation-bearing
    sentence of the bridge, i.e. (by our definition of relation-bearing) in some sentence."""
    matcher = compile_names(predicate_names(example, rules), rules.normalization)
    return any(matcher.any(s) for s in example.bridge.sentences)


def gold_b_rel(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> GoldBRel:
    """The gold ``B_rel``: the example's ``relation_sentence`` when it has one (source
    ``"example"``), else the first relation-bearing sentence (``"entity_mention"``), else none."""
    index, source = _b_rel_index(example, rules)
    return GoldBRel(None if index is None else example.bridge.sentences[index], index, source)


def _b_rel_index(
    example: Example, rules: RegimeRules, found: Sequence[int] | None = None
) -> tuple[int | None, str]:
    """The rule of :func:`gold_b_rel`: the index of ``B_rel`` and its source. ``found``: the
    relation-bearing sentences, when the caller has them already (else they are looked for
    only if the rule needs them)."""
    if example.relation_sentence is not None:
        return example.relation_sentence, "example"
    if found is None:
        found = relation_sentences(example, rules)
    return (found[0], "entity_mention") if found else (None, "none")


def regime(example: Example, rules: RegimeRules = DEFAULT_REGIME_RULES) -> Regime:
    """The regime of one example: Q-dominant ⇔ P1; B-dominant ⇔ ¬P1 ∧ P2; neither ⇔ ¬P1 ∧ ¬P2."""
    return regime_label(p1(example, rules), p2(example, rules))


# --- over lists ------------------------------------------------------------------------------

TABLE_COLUMNS: tuple[str, ...] = (
    "id",
    "dataset",
    "split",
    "native_type",
    "parallel",
    "p1",
    "p2",
    "regime",
    "n_relation_sentences",
    "b_rel_index",
    "b_rel_source",
    "relation_source",
)


def regime_table(
    examples: Iterable[Example], rules: RegimeRules = DEFAULT_REGIME_RULES
) -> pd.DataFrame:
    """One row per example: ids and types, P1, P2, the regime and the gold ``B_rel``.

    ``b_rel_index`` is a nullable integer; ``b_rel_source`` is :class:`GoldBRel`'s ``source``;
    ``relation_source`` is the example's own field. The rules are stored in ``table.attrs``
    (``regime_rules`` and ``regime_rules_hash``).
    """
    rows = []
    for example in examples:
        found = relation_sentences(example, rules)
        b_rel_index, b_rel_source = _b_rel_index(example, rules, found)
        rows.append(
            (
                example.id,
                example.dataset,
                example.split,
                example.native_type,
                example.parallel,
                p1(example, rules),
                p2(example, rules),
                None,
                len(found),
                b_rel_index,
                b_rel_source,
                example.relation_source,
            )
        )
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    table = table.astype({"parallel": bool, "p1": bool, "p2": bool})
    table["regime"] = regime_labels(table["p1"].to_numpy(), table["p2"].to_numpy())
    table["n_relation_sentences"] = table["n_relation_sentences"].astype("int64")
    table["b_rel_index"] = table["b_rel_index"].astype("Int64")
    for column in ("id", "dataset", "split", "native_type", "regime", "b_rel_source"):
        table[column] = table[column].astype(object)
    table.attrs["regime_rules"] = rules.to_dict()
    table.attrs["regime_rules_hash"] = rules.config_hash()
    return table


def regime_shares(
    table: pd.DataFrame, by: Sequence[str] = ("dataset", "native_type")
) -> pd.DataFrame:
    """Count and share of each regime within each group of ``by`` (long format).

    Columns: ``*by, regime, count, n, share`` with ``share = count / n`` and ``n`` the group
    size; every regime appears in every group (count 0 when absent), in the order of
    ``REGIMES``. ``by=()`` gives the overall shares.
    """
    by = [by] if isinstance(by, str) else list(by)
    unknown = sorted(set(table["regime"]) - set(REGIMES))
    if unknown:
        raise ValueError(f"regime_shares: column 'regime' has unknown labels {unknown}")
    regimes = pd.Categorical(table["regime"], categories=list(REGIMES))
    counts = (
        pd.Series(1, index=table.index)
        .groupby([*(table[c] for c in by), regimes], observed=False, dropna=False)
        .sum()
    )
    counts.index = counts.index.set_names([*by, "regime"])
    out = counts.rename("count").reset_index()
    if by:
        # Keep only groups that occur (a categorical product can add empty combinations).
        present = table[by].drop_duplicates()
        out = out.merge(present, on=by, how="inner")
        out["n"] = out.groupby(by, dropna=False)["count"].transform("sum")
    else:
        out["n"] = out["count"].sum()
    out["regime"] = out["regime"].astype(object)
    out["count"] = out["count"].astype("int64")
    out["n"] = out["n"].astype("int64")
    out["share"] = np.where(out["n"] > 0, out["count"] / out["n"].where(out["n"] > 0, 1), np.nan)
    return out.sort_values([*by, "regime"], key=_regime_order_key).reset_index(drop=True)


def _regime_order_key(column: pd.Series) -> pd.Series:
    if column.name == "regime":
        return column.map({r: i for i, r in enumerate(REGIMES)})
    return column


def degenerate_predicates(
    table: pd.DataFrame,
    threshold: float = config.DEGENERATE_SHARE,
    by: str = "dataset",
) -> pd.DataFrame:
    """Which predicates are (nearly) constant within each group of ``by``; pure.

    One row per (group, predicate) with ``n``, ``share_true`` and ``degenerate``: true when the
    predicate is true, or false, for at least ``threshold`` of the group's items. A degenerate
    predicate cannot separate regimes there, so that group is no evidence about it.

    >>> t = pd.DataFrame({"dataset": ["a"] * 20, "p1": [True] * 10 + [False] * 10,
    ...                   "p2": [True] * 20})
    >>> degenerate_predicates(t)[["predicate", "share_true", "degenerate"]].values.tolist()
    [['p1', 0.5, False], ['p2', 1.0, True]]
    """
    rows = []
    for group, part in table.groupby(by, sort=True):
        for predicate in ("p1", "p2"):
            share = float(part[predicate].astype(bool).mean())
            rows.append(
                {
                    by: group,
                    "predicate": predicate,
                    "n": len(part),
                    "share_true": share,
                    "degenerate": bool(max(share, 1.0 - share) >= threshold),
                }
            )
    return pd.DataFrame(rows, columns=[by, "predicate", "n", "share_true", "degenerate"])
