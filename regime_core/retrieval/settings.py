"""The retrieval settings that travel together, as one frozen value.

A run's config (:class:`regime_core.experiments.common.RunConfig`) derives a
:class:`RetrievalSettings` from its flat fields, once, and that value is handed whole to every
step that retrieves or samples: :func:`~regime_core.retrieval.retrieve_arms` and the query plans
(:func:`~regime_core.retrieval.plan_arm`), the union geometry of the router
(:func:`~regime_core.retrieval.geometry.build_geometry`), the outcome tables and the samples of
the experiments. It has no defaults of its own: they are the config's, and so are its checks (every
field is read when the config is built), so a step that is given one checks nothing again.
"""

from __future__ import annotations

from dataclasses import dataclass

from regime_core.data.regimes import RegimeRules
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
    """

    pool: str
    alpha: float
    k: int
    exclude_bridge: bool
    knockout_single: str
    tiny_pools: str
    entity_source: str
    regime_rules: RegimeRules

    def is_tiny_pool(self, example: Example) -> bool:
        """The question's own pool offers at most ``k`` hop-2 candidates, so hit@k is 1 for
        every arm; a corpus pool is never tiny."""
        return self.pool == "question" and hop2_candidates(example, self.exclude_bridge) <= self.k
