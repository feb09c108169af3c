"""``toyworld``: a synthetic two-regime world for teaching, generated in seconds, no download.

An invented world of people, films, bands, companies, cities and countries (names coined from
syllables), Wikipedia-like passages written from templates, and two-hop questions of both
regimes, emitted as canonical :class:`regime_core.schema.Example` objects so that every notebook
and command runs on them unchanged.

>>> from regime_core.data.toyworld import ToyWorldConfig, generate, true_regime
>>> examples = generate(ToyWorldConfig(n_questions=4, b_dominant_share=0.5))
>>> [true_regime(ex) for ex in examples]
['B-dominant', 'Q-dominant', 'B-dominant', 'Q-dominant']
"""

from regime_core.data.toyworld.generator import (
    B_DOMINANT,
    COMPARISONS,
    COMPOSITIONAL,
    MAX_DISTRACTORS,
    MAX_QUESTIONS,
    Q_DOMINANT,
    ToyWorldConfig,
    generate,
    is_b_dominant_slot,
    load_examples,
    true_regime,
)
from regime_core.data.toyworld.world import MAX_SENTENCES, MIN_SENTENCES

__all__ = [
    "B_DOMINANT",
    "COMPARISONS",
    "COMPOSITIONAL",
    "MAX_DISTRACTORS",
    "MAX_QUESTIONS",
    "MAX_SENTENCES",
    "MIN_SENTENCES",
    "Q_DOMINANT",
    "ToyWorldConfig",
    "generate",
    "is_b_dominant_slot",
    "load_examples",
    "true_regime",
]
