"""Defaults, in exactly one place, and the base of every experiment's frozen config.

Every number a reader might want to change (alpha, k, the seed, the number of bootstrap
resamples, ...) is defined here once; functions take it as a keyword argument whose default
is the constant below, and the book's "Our reading of the paper" page lists them from here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import types
import typing
from typing import Any, ClassVar

# --- data ------------------------------------------------------------------------------------
# The paper's datasets, which `regime data prepare` builds and every experiment reads by default
# ("toyworld", the synthetic world, is accepted wherever a dataset name is: schema.DATASETS).
DATASETS: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")  # the paper's datasets
SPLIT: str = "dev"  # the split every experiment reads (the router is cross-fitted on it)

# --- retrieval -------------------------------------------------------------------------------
ALPHA: float = 0.25  # weight of the bridge-side vector in union/knockout/entity (paper: frozen)
ALPHA_GRID: tuple[float, ...] = tuple(
    sorted({0.0, 0.1, ALPHA, 0.5, 0.75, 1.0})
)  # a sweep's alphas (ablations, demo): 0 (union = q) to 1 (q, B_rel equal), the paper's too
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
# MuSiQue and 2Wiki; see regime_core.data.regimes.PREDICATE_NAMES).
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
# The router *training run* (router_train.RouterConfig, `regime route train`) drops ties:
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
        ``NONE_IS_VALUE``. Each value is checked against its field's annotation first, so a
        bad papermill parameter (``-p alpha abc``) is a ValueError naming the parameter rather
        than an error deep in NumPy.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        chosen = {
            key: value
            for key, value in parameters.items()
            if key in names and (value is not None or key in cls.NONE_IS_VALUE)
        }
        hints = ConfigMixin._field_hints(cls)
        for key, value in chosen.items():
            problem = ConfigMixin._type_problem(value, hints.get(key, Any))
            if problem is not None:
                raise ValueError(
                    f"{cls.__name__}: parameter {key!r} must be {problem}, got "
                    f"{type(value).__name__} {value!r}"
                )
        return cls(**chosen)

    @staticmethod
    def _field_hints(cls: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls)
        except (NameError, TypeError):  # an annotation we cannot resolve is not checked here
            return {}

    @staticmethod
    def _type_problem(value: Any, hint: Any) -> str | None:
        """What ``value`` should have been for annotation ``hint`` (None: it fits).

        Checks the scalar kinds parameters carry (bool, int, float, str), their ``| None`` and
        ``tuple[X, ...]`` forms (a list, as papermill passes YAML lists, or one string for a tuple
        of strings); other annotations are left to the config's ``validate``.
        """
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            options = typing.get_args(hint)
            problems = [ConfigMixin._type_problem(value, option) for option in options]
            if any(p is None for p in problems):
                return None
            return " or ".join(p for p in problems if p)
        if hint is type(None):
            return None if value is None else "null"
        if hint is bool:
            return None if isinstance(value, bool) else "true or false"
        if hint is int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
            return None if ok else "an integer"
        if hint is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
            return None if ok else "a number"
        if hint is str:
            return None if isinstance(value, str) else "a string"
        if origin is tuple:
            args = typing.get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                if args[0] is str and isinstance(value, str):
                    return None
                if not isinstance(value, list | tuple):
                    return f"a list of {ConfigMixin._describe(args[0])}"
                bad = [v for v in value if ConfigMixin._type_problem(v, args[0]) is not None]
                return f"a list of {ConfigMixin._describe(args[0])}" if bad else None
            if not isinstance(value, list | tuple) or len(value) != len(args):
                return f"a list of {len(args)} values"
            fits = all(
                ConfigMixin._type_problem(v, a) is None for v, a in zip(value, args, strict=True)
            )
            return None if fits else f"a list of {len(args)} values of types {args}"
        return None

    @staticmethod
    def _describe(hint: Any) -> str:
        return {bool: "true/false", int: "integers", float: "numbers", str: "strings"}.get(
            hint, str(hint)
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
