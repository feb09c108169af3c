"""Every knob of the sentence selector and the five features, with its default, in one place.

:class:`RouterRules` is a frozen config: its defaults are the only defaults, it validates itself,
and its canonical dict is hashed into the feature spec
(:data:`regime_core.router.features.FEATURE_SPEC`) that a saved router is checked against, so
a model is never applied to features computed by other rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from regime_core.config import ConfigMixin

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

    new_entity_weight: float = 1.0
    """selector score of a bridge sentence that names an entity neither in the question nor the
    bridge's own subject
    """
    overlap_weight: float = 0.5
    """selector score per relation word the question and sentence share"""
    position_weight: float = 0.25
    """selector score of the first sentence; sentence i gets it/(1 + i)"""
    stem_chars: int = 5
    """relation words match when their first this-many characters do"""
    min_word_chars: int = 3
    """question words shorter than this are never relation words"""
    entity_match_threshold: float = 0.5
    """the share of an entity's content words a text must hold to name the entity"""
    comparison_cues: tuple[str, ...] = COMPARISON_CUES
    """words that mark a comparison question, outside entity spans"""
    yes_no_openers: tuple[str, ...] = YES_NO_OPENERS
    """first words that make a question a yes/no question"""

    def validate(self) -> None:
        for name in ("new_entity_weight", "overlap_weight", "position_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"RouterRules.{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"RouterRules.{name} must be finite and >= 0, got {value!r}")
        for name in ("stem_chars", "min_word_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RouterRules.{name} must be an integer >= 1, got {value!r}")
        t = self.entity_match_threshold
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1:
            raise ValueError(f"RouterRules.entity_match_threshold must be in (0, 1], got {t!r}")
        for name in ("comparison_cues", "yes_no_openers"):
            words = getattr(self, name)
            if not isinstance(words, tuple) or not all(
                isinstance(w, str) and w and w == w.lower() and len(w.split()) == 1 for w in words
            ):
                raise ValueError(
                    f"RouterRules.{name} must be a tuple of lowercase single words, got {words!r}"
                )


DEFAULT_ROUTER_RULES = RouterRules()
