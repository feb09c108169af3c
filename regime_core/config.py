"""Defaults, in exactly one place, and the base of every experiment's frozen config.

Every number a reader might want to change (alpha, k, the seed, the number of bootstrap
resamples, ...) is defined here once; functions take it as a keyword argument whose default
is the constant below, and the book's "Our reading of the paper" page lists them from here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, ClassVar

# --- retrieval -------------------------------------------------------------------------------
ALPHA: float = (
    0.25  # weight of the bridge-side vector in union/knockout/entity (paper: frozen 0.25)
)
ENCODER: str = "minilm"  # the bundled all-MiniLM-L6-v2
POOL_MODES: tuple[str, ...] = ("question", "corpus")
POOL_MODE: str = "question"  # the question's own distractor pool
EXCLUDE_BRIDGE: bool = True  # the bridge passage is removed from the hop-2 ranking
ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout", "entity")
K_VALUES: tuple[int, ...] = (1, 2, 5, 10)
HEADLINE_K: int = 5  # the paper reports R@5
ENCODE_BATCH_SIZE: int = 64
# A question pool with <= k candidates (after the bridge is excluded) makes hit@k 1 for every
# arm: "exclude" leaves such items out of every hit@k claim (counted in each record), "keep"
# keeps them. Corpus pools are never that small.
TINY_POOL_RULES: tuple[str, ...] = ("exclude", "keep")
TINY_POOLS: str = "exclude"
# The knockout arm of a bridge whose only sentence is B_rel: "title" queries with the bridge's
# title (all that is left once B_rel is knocked out), "drop" leaves the item out of knockout.
KNOCKOUT_SINGLE_RULES: tuple[str, ...] = ("title", "drop")
KNOCKOUT_SINGLE: str = "title"

# Which passage the router and its union query read as the bridge: the gold hop-1 passage
# ("gold"), or the question's top-1 passage in its own pool ("retrieved", the paper's
# pipeline: hop 1 retrieves, hop 2 excludes what hop 1 returned). Items whose top-1 is the
# hop-2 passage itself have no bridge then; they are left out and counted.
BRIDGE_SOURCES: tuple[str, ...] = ("gold", "retrieved")
BRIDGE_SOURCE: str = "gold"

# --- regimes ---------------------------------------------------------------------------------
# Which names of the hop-2 entity count for P1/P2: "title" (the hop-2 passage's title and
# aliases) or "title+linking" (plus the linking entity, which makes P2 true by construction on
# MuSiQue and 2Wiki; see regime_core.regimes.PREDICATE_NAMES).
PREDICATE_NAMES: str = "title"
# A predicate true (or false) for at least this share of a dataset's items is degenerate there:
# it is reported, but that dataset is not evidence about it.
DEGENERATE_SHARE: float = 0.95

# --- statistics ------------------------------------------------------------------------------
SEED: int = 0
BOOTSTRAP_RESAMPLES: int = 10_000
PERMUTATION_RESAMPLES: int = 10_000
CONFIDENCE: float = 0.95

# --- router ----------------------------------------------------------------------------------
CV_FOLDS: int = 5
LABEL_TIE_RULE: str = "q"  # a tie between union and q is labelled q (the cheaper action)
# The router *training run* (experiments.router.RouterConfig, `regime route train`) drops ties:
# a tie carries no signal about which action is better, and on 2Wiki ties are ~2/3 of the items,
# so labelling them q teaches a constant-q router. outcome_labels keeps LABEL_TIE_RULE.
ROUTER_TRAIN_TIE_RULE: str = "drop"


class ConfigMixin:
    """Mixin for frozen dataclass configs: a canonical dict, a stable hash, validation hooks.

    Subclasses are ``@dataclass(frozen=True)`` and may override ``validate`` (raise ValueError
    with an actionable message); it runs in ``__post_init__``.
    """

    #: Fields for which a ``None`` parameter is a value (e.g. ``sample_size=None`` = "all"),
    #: not "use the default". Subclasses annotate their own as ``ClassVar``.
    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        self.validate()

    @classmethod
    def from_parameters(cls, **parameters: Any) -> Any:
        """Build the config from a notebook's papermill parameters.

        Parameters that are not fields (``output_dir``, ``work_dir``, ``profile``, ...) are
        ignored, and ``None`` for a field means "the default" unless the field is listed in
        ``NONE_IS_VALUE``.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(
            **{
                key: value
                for key, value in parameters.items()
                if key in names and (value is not None or key in cls.NONE_IS_VALUE)
            }
        )

    def validate(self) -> None:  # pragma: no cover - overridden where there is something to check
        return None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(dataclasses.asdict(self))  # type: ignore[call-overload]

    def config_hash(self, length: int = 12) -> str:
        """A hash of the canonical JSON of the config; names the artefacts it produces."""
        payload = json.dumps(
            {"kind": type(self).__name__, **self.to_dict()}, sort_keys=True, separators=(",", ":")
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:length]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
