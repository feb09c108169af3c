"""Every knob of the sentence selector and the five features, with its default, in one place.

:class:`RouterRules` is a frozen config: its defaults are the only defaults, it validates itself,
and its canonical dict is hashed into the feature spec
(:data:`regime_core.router.features.FEATURE_SPEC`) that a saved router is checked against, so
a model is never applied to features computed by other rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from regime_core.config import ConfigMixin
from regime_core.inputs import Items, Number, Word
from regime_core.inputs.configs import declared

#: A selector weight: finite and >= 0; a count of characters: an integer >= 1 (router.js states
#: the same refusals: checkRules).
WEIGHT = Number(low=0.0)
COUNT = Number(low=1, integer=True)

# Words that signal a comparison question ("Which film came out first, X or Y?", "Are both X
# and Y from the same country?"). Matched against the question's words outside entity spans.
COMPARISON_CUES: tuple[str, ...] = (
    "both", "same", "either", "neither", "or", "than", "compared", "comparison", "versus", "vs",
    "more", "less", "fewer", "first", "last", "earlier", "later", "older", "younger", "oldest",
    "youngest", "longer", "shorter", "taller", "larger", "bigger", "smaller", "higher", "lower",
)  # fmt: skip
# Verbs whose presence as the first word makes a yes/no question ("Did X ...?", "Are both ...?").
YES_NO_OPENERS: tuple[str, ...] = (
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "can", "could",
    "will", "would", "should", "shall", "may", "might", "must",
)  # fmt: skip


@dataclass(frozen=True)
class RouterRules(ConfigMixin):
    """Knobs of :func:`~regime_core.router.selector.select_b_rel` and the features.

    Selector score of bridge sentence ``i`` (0-based) for a question::

        score_i = new_entity_weight · [sentence names an entity absent from the question
                                       and other than the bridge's own subject]
                + overlap_weight    · |relation stems of the question ∩ stems of sentence i|
                + position_weight   / (1 + i)

    Relation stems are the first ``stem_chars`` characters of the question's non-stop words of
    at least ``min_word_chars`` characters that lie outside its entity spans (the relation words:
    "directed", "mother", "born"). An entity is *named* by a text when the text holds at least
    ``entity_match_threshold`` of the entity's content words.
    """

    new_entity_weight: float = declared(1.0, WEIGHT)
    """selector score of a bridge sentence that names an entity neither in the question nor the
    bridge's own subject
    """
    overlap_weight: float = declared(0.5, WEIGHT)
    """selector score per relation word the question and sentence share"""
    position_weight: float = declared(0.25, WEIGHT)
    """selector score of the first sentence; sentence i gets it/(1 + i)"""
    stem_chars: int = declared(5, COUNT)
    """relation words match when their first this-many characters do"""
    min_word_chars: int = declared(3, COUNT)
    """question words shorter than this are never relation words"""
    entity_match_threshold: float = declared(0.5, Number(low=0.0, high=1.0, low_open=True))
    """the share of an entity's content words a text must hold to name the entity"""
    comparison_cues: tuple[str, ...] = declared(COMPARISON_CUES, Items(Word(lowercase=True)))
    """words that mark a comparison question, outside entity spans"""
    yes_no_openers: tuple[str, ...] = declared(YES_NO_OPENERS, Items(Word(lowercase=True)))
    """first words that make a question a yes/no question"""


DEFAULT_ROUTER_RULES = RouterRules()
