"""The arguments of the statistical functions a user may call directly, declared
(:mod:`regime_core.stats`, :mod:`~regime_core.power`, :mod:`~regime_core.agreement`,
:mod:`~regime_core.coverage`, :mod:`~regime_core.multiplicity`).

Each public function reads what a user may hand it through these kinds at its entry
(:func:`~regime_core.inputs.check_value`, or :data:`POWER_QUESTION` for the cluster of
:func:`~regime_core.power.power`), the refusal naming the function and the argument; the kernels
under them trust what they get.
What a kind cannot say (arrays paired by query, finite and binary outcomes, counts that fit in
``n``) stays in the function.
"""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Number
from regime_core.inputs.configs import LEVEL, SHARE, integer

COUNT = integer(0)
"""a count of questions or of pairs: a whole number >= 0"""
RESAMPLES = integer(1)
"""how many resamples (bootstrap or sign flips) to draw: at least one"""
DIFFERENCE = Number(low=-1.0, high=1.0)
"""a difference of two hit rates"""
DISCORDANCE = Number(low=0.0, high=1.0, low_open=True)
"""a share of discordant questions that some are: above 0, at most 1"""

#: How the power is judged: the interval excludes ``null`` above it (``greater``), below it
#: (``less``), or lies within ``±null`` (``within``, equivalence; ``null`` is the margin).
SIDES: tuple[str, ...] = ("greater", "less", "within")

POWER_QUESTION = Format(
    "a power question",
    (
        Field("n", COUNT, meaning="the paired questions"),
        Field("discordance", SHARE, meaning="the share of discordant questions observed"),
        Field("effect", DIFFERENCE, meaning="the true difference of hit rates"),
        Field("null", Number(), meaning="the difference (or the margin, ``within``) judged"),
        Field("side", Choice(SIDES), meaning="where the interval must lie against ``null``"),
        Field("confidence", LEVEL, meaning="the interval's level"),
    ),
)
