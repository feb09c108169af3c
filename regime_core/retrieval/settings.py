"""The retrieval settings that travel together, as one frozen value.

A run's config (:class:`regime_core.experiments.common.RunConfig`) derives a
:class:`RetrievalSettings` from its flat fields, once, and that value is handed whole to every
step that retrieves or samples: :func:`~regime_core.retrieval.retrieve_arms` and the query plans
(:func:`~regime_core.retrieval.plan_arm`), the union geometry of the router
(:func:`~regime_core.retrieval.geometry.build_geometry`), the outcome tables and the samples of
the experiments. It has no defaults of its own: they are the config's. Building one checks every
setting, so a step that is given one checks nothing again.
"""

from __future__ import annotations

from dataclasses import dataclass

from regime_core import config
from regime_core.data.regimes import RegimeRules
from regime_core.limits import check_alpha
from regime_core.schema import Example


def hop2_candidates(example: Example, exclude_bridge: bool) -> int:
    """How many hop-2 candidates the question's own pool offers (the bridge excluded or not)."""
    pids = {p.pid for p in example.pool}
    if exclude_bridge:
        pids.discard(example.bridge.pid)
    return len(pids)


@dataclass(frozen=True, kw_only=True)
class RetrievalSettings:
    """How the hop-2 passage is retrieved and judged: the candidate ``pool``, the bridge-side
    weight ``alpha``, the cutoff ``k`` of hit@k, whether the bridge is ``exclude_bridge``\\ d
    from the candidates, the ``knockout_single`` rule, the ``tiny_pools`` rule, the
    ``entity_source`` of the entity arm and the ``regime_rules`` behind P1, P2 and the gold
    ``B_rel``. The meaning of each is the field of the same name of
    :class:`~regime_core.experiments.common.RunConfig`.

    >>> try:
    ...     RetrievalSettings(pool="question", alpha=-1.0, k=5, exclude_bridge=True,
    ...         knockout_single="title", tiny_pools="exclude", entity_source="bridge_mention",
    ...         regime_rules=RegimeRules())
    ... except ValueError as err:
    ...     print(str(err)[:64])
    RetrievalSettings.alpha must be a finite number in [0, 1e+18], got
    """

    pool: str
    alpha: float
    k: int
    exclude_bridge: bool
    knockout_single: str
    tiny_pools: str
    entity_source: str
    regime_rules: RegimeRules

    def __post_init__(self) -> None:
        where = type(self).__name__
        check_alpha(self.alpha, f"{where}.alpha")  # finite, >= 0, within float32's reach
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"{where}.k must be a positive integer, got {self.k!r}")
        if not isinstance(self.exclude_bridge, bool):
            raise ValueError(f"{where}.exclude_bridge must be true or false")
        for name, allowed in (
            ("pool", config.POOL_MODES),
            ("knockout_single", config.KNOCKOUT_SINGLE_RULES),
            ("tiny_pools", config.TINY_POOL_RULES),
            ("entity_source", config.ENTITY_SOURCES),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{where}.{name} is {getattr(self, name)!r}, not one of {tuple(allowed)}"
                )

    def is_tiny_pool(self, example: Example) -> bool:
        """The question's own pool offers at most ``k`` hop-2 candidates, so hit@k is 1 for
        every arm; a corpus pool is never tiny."""
        return self.pool == "question" and hop2_candidates(example, self.exclude_bridge) <= self.k
