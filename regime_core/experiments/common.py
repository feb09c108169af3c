"""What every run shares: one config style, and the small kernels the claims reuse.

Every run's config is one flat frozen dataclass (its fields are the notebook's papermill
parameters and the record's ``config``), subclassing :class:`RunConfig`, which holds the fields
every run shares: the sample (``seed``, ``sample_size``, ``split``), the statistics
(``bootstrap_resamples``, ``confidence``) and the retrieval (``pool``, ``alpha``, ``k``, ...).
A config derives its :class:`~regime_core.retrieval.settings.RetrievalSettings` once
(:attr:`RunConfig.retrieval`), and that one value travels to every step that retrieves. The claims
T1-T3 and the data page subclass :class:`ExperimentConfig` (several datasets, several encoders);
the router's runs subclass :class:`RunConfig` with their own dataset and encoder fields
(:mod:`~regime_core.experiments.router_train`, :mod:`~regime_core.experiments.zero_shot_transfer`,
:mod:`~regime_core.experiments.ablations`).

The flow of every claim notebook is::

    config ──collect_outcomes──▶ outcome table (one row per query × arm × encoder)
                                      │
                                      ▼
                          analyse_t1 / analyse_t2 / analyse_t3 ──▶ result.to_numbers() ──▶ record
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.data import known_datasets
from regime_core.data.item_sets import item_set_problem
from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules
from regime_core.encoders.registry import check_encoder_name
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.router.evaluation import Bootstrap, paired_hits
from regime_core.schema import SPLITS
from regime_core.stats import PairedComparison

#: The datasets `regime data prepare` builds; the experiments default to all of them.
EXPERIMENT_DATASETS: tuple[str, ...] = config.DATASETS
#: A dense family and a lexical family: the smallest honest "across encoders" on a CPU machine.
EXPERIMENT_ENCODERS: tuple[str, ...] = (config.ENCODER, "tfidf")


def positive_int(value: object) -> bool:
    """``value`` is an integer >= 1 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def as_tuple(value: Any) -> tuple[Any, ...]:
    """A list (as papermill passes YAML lists) or one value as a tuple."""
    return (value,) if isinstance(value, str | int | float) else tuple(value)


def check_sample(cfg: Any, where: str) -> None:
    """Raise ValueError naming ``where`` unless ``cfg``'s questions are drawn right: a known
    ``split`` and a ``sample_size`` that is a positive integer or None (all)."""
    if cfg.sample_size is not None and not positive_int(cfg.sample_size):
        raise ValueError(
            f"{where}.sample_size must be a positive integer or None (all), got {cfg.sample_size!r}"
        )
    if cfg.split not in SPLITS:
        raise ValueError(f"{where}.split is {cfg.split!r}, not one of {SPLITS}")


def check_datasets(datasets: Sequence[str], where: str) -> None:
    """Raise ValueError naming ``where`` unless ``datasets`` are distinct known datasets."""
    if not datasets:
        raise ValueError(f"{where} is empty; name at least one of {EXPERIMENT_DATASETS}")
    known = known_datasets()  # the built-in ones, the toy world and any prepared file of one's own
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(f"{where}: unknown {unknown}; known {known}")
    if len(set(datasets)) != len(datasets):
        raise ValueError(f"{where} lists a dataset twice: {tuple(datasets)}")


def holm_family(tests: pd.DataFrame, axes: Sequence[str]) -> dict[str, Any]:
    """The Holm family of a run, for its record: one row of ``tests`` per test adjusted
    together; ``tests`` (how many) and, per column of ``axes`` (``comparison``, ``encoder``,
    ``dataset``, ``cell``), its distinct values in order of appearance, comma-separated. Holm
    adjusts the run's tests together, so an adjusted p depends on every dataset and encoder of the
    run: a page showing one states this family beside it.

    >>> holm_family(pd.DataFrame({"encoder": ["minilm", "minilm"], "dataset": ["a", "all"]}),
    ...             ["encoder", "dataset"])
    {'tests': 2, 'encoder': 'minilm', 'dataset': 'a, all'}
    """
    family: dict[str, Any] = {"tests": len(tests)}
    for axis in axes:
        family[axis] = ", ".join(str(v) for v in dict.fromkeys(tests[axis].tolist()))
    return family


def check_transfer_grid(cfg: Any, *grids: str) -> None:
    """Make ``cfg``'s ``transfer_datasets``, ``encoders`` and ``grids`` tuples; raise ValueError
    unless its datasets (the training one, then the transfer ones) are distinct known datasets and
    its encoders distinct names (the ablations' and the α-transfer run's configs)."""
    where = type(cfg).__name__
    for name in ("transfer_datasets", "encoders", *grids):
        object.__setattr__(cfg, name, as_tuple(getattr(cfg, name)))
    check_datasets(cfg.datasets, f"{where}: train_dataset and transfer_datasets")
    if not cfg.encoders or len(set(cfg.encoders)) != len(cfg.encoders):
        raise ValueError(f"{where}.encoders must be distinct names, got {cfg.encoders}")


@dataclass(frozen=True)
class RunConfig(ConfigMixin):
    """The fields every run shares; a run's config subclasses it with its own.

    ``sample_size`` is per dataset (``None``: every two-hop item of the split); the sample is a
    seeded function of (seed, dataset, ids) only. ``bootstrap_resamples`` drives every CI.
    ``predicate_names`` is the flat (papermill-friendly) face of ``regime_rules.predicate_names``:
    a value set on either side wins over the other's default.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size"})  # None = all

    pool: str = config.POOL_MODE
    """where the hop-2 candidates come from: question (each question's own pool) or corpus (every
    passage of the dataset)
    """
    alpha: float = config.ALPHA
    """weight α of the bridge side in the union, knockout and entity queries (question + α × bridge
    side); the paper freezes it at 0.25
    """
    k: int = config.HEADLINE_K
    """the cutoff k of every hit@k claim; 5 makes it hit@5, the paper's R@5"""
    seed: int = config.SEED
    """seed of the question sample and of every bootstrap and permutation draw"""
    sample_size: int | None = None
    """questions drawn per dataset, seeded; None takes every two-hop one"""
    split: str = config.SPLIT
    """the split of each dataset that is read: dev or train"""
    bootstrap_resamples: int = config.BOOTSTRAP_RESAMPLES
    """bootstrap resamples behind every confidence interval"""
    confidence: float = config.CONFIDENCE
    """level of every confidence interval; one minus it is the test level"""
    exclude_bridge: bool = config.EXCLUDE_BRIDGE
    """the bridge passage is removed from the hop-2 candidates"""
    entity_source: str = config.ENTITY_SOURCE
    """what the entity arm adds to the question: bridge_mention (the hop-2 entity as the bridge
    writes it) or example (the dataset's own name for it)
    """
    tiny_pools: str = config.TINY_POOLS
    """a pool of at most k hop-2 candidates, where every arm scores hit@k = 1: exclude (left out of
    hit@k claims, counted) or keep
    """
    item_set: str = config.ITEM_SET
    """which two-hop items of each dataset are read: all (every item prepare keeps) or strict
    (only those whose bridge mentions the target's title exactly once and whose answer is not
    yes/no; regime_core.data.item_sets), the others left out before sampling and counted
    """
    knockout_single: str = config.KNOCKOUT_SINGLE
    """the knockout query of a bridge whose only sentence is B_rel: title (the bridge's title) or
    exclude (the question leaves the knockout arm)
    """
    predicate_names: str = config.PREDICATE_NAMES
    regime_rules: RegimeRules = field(default_factory=lambda: DEFAULT_REGIME_RULES)
    """the rules behind P1, P2 and the gold B_rel (RegimeRules)"""

    def validate(self) -> None:
        where = type(self).__name__
        for name in ("encoder", "encoders", "primary_encoder", "paper_encoders"):  # if it has them
            value = getattr(self, name, ())
            for encoder in (value,) if isinstance(value, str) else value:
                try:
                    check_encoder_name(encoder)
                except ValueError as err:
                    raise ValueError(f"{where}.{name}: {err}") from None
        check_sample(self, where)
        problem = item_set_problem(self.item_set)
        if problem is not None:
            raise ValueError(f"{where}.item_set {problem}")
        if not positive_int(self.bootstrap_resamples):
            raise ValueError(
                f"{where}.bootstrap_resamples must be a positive integer, "
                f"got {self.bootstrap_resamples!r}"
            )
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"{where}.confidence must lie in (0, 1), got {self.confidence!r}")
        if not isinstance(self.regime_rules, RegimeRules):
            raise ValueError(f"{where}.regime_rules must be a RegimeRules")
        if self.regime_rules.predicate_names != self.predicate_names:
            if self.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(self, "predicate_names", self.regime_rules.predicate_names)
            else:
                rules = dataclasses.replace(self.regime_rules, predicate_names=self.predicate_names)
                object.__setattr__(self, "regime_rules", rules)
        if self.alpha is None and "alpha" in self.NONE_IS_VALUE:
            # α is given later (TransferConfig: the router's own); the other settings are checked
            self.retrieval_at(config.ALPHA)
        else:
            self.retrieval  # noqa: B018  (built once: it checks every retrieval setting)

    def retrieval_at(self, alpha: float) -> RetrievalSettings:
        """This config's retrieval settings with the bridge-side weight ``alpha``."""
        # the settings are the config's fields of the same names
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(RetrievalSettings)}
        try:
            return RetrievalSettings(**{**values, "alpha": alpha})
        except ValueError as err:
            raise ValueError(str(err).replace("RetrievalSettings", type(self).__name__)) from None

    @functools.cached_property
    def retrieval(self) -> RetrievalSettings:
        """The retrieval settings of this run, checked when the config was built."""
        return self.retrieval_at(self.alpha)

    @property
    def bootstrap(self) -> Bootstrap:
        """The bootstrap of every interval this run reports."""
        return Bootstrap(
            resamples=self.bootstrap_resamples, confidence=self.confidence, seed=self.seed
        )


@dataclass(frozen=True)
class ExperimentConfig(RunConfig):
    """A run over several datasets and encoders (the data page, T1-T3, the multiverse); the
    claim is judged pooled over the ``datasets`` and under each of the ``encoders``. Lists are
    accepted (papermill passes YAML lists) and stored as tuples."""

    datasets: tuple[str, ...] = EXPERIMENT_DATASETS
    """the datasets the claim is judged on, pooled and each on its own"""
    encoders: tuple[str, ...] = EXPERIMENT_ENCODERS
    """the encoders retrieval runs with; the claim is judged under each"""

    def validate(self) -> None:
        for name in ("datasets", "encoders"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        where = type(self).__name__
        check_datasets(self.datasets, f"{where}.datasets")
        if not self.encoders or len(set(self.encoders)) != len(self.encoders):
            raise ValueError(f"{where}.encoders must be distinct names, got {self.encoders}")
        super().validate()


def compare_arms(wide: pd.DataFrame, a: str, b: str, cfg: RunConfig) -> PairedComparison:
    """Arm ``a`` against arm ``b`` (two columns of binary outcomes of a paired table, as
    :func:`~regime_core.experiments.outcomes.arm_matrix` makes it): McNemar, with the bootstrap
    of ``cfg``."""
    return paired_hits(wide[a], wide[b], (a, b), bootstrap=cfg.bootstrap)


def table_numbers(
    table: pd.DataFrame, keys: Sequence[str], fields: Mapping[str, Callable[[Any], Any]]
) -> dict[Any, Any]:
    """A table as a record's nested numbers: per row ``{field: cast(value)}`` for ``fields``
    (name -> ``int``, ``float``, ``bool``, ...), nested under the row's values of ``keys``.

    >>> t = pd.DataFrame({"enc": ["m", "m"], "ds": ["a", "b"], "n": [3, 4], "hit": [0.5, 1]})
    >>> table_numbers(t, ("enc", "ds"), {"n": int, "hit": float})
    {'m': {'a': {'n': 3, 'hit': 0.5}, 'b': {'n': 4, 'hit': 1.0}}}
    """
    out: dict[Any, Any] = {}
    for row in table.itertuples(index=False):
        node = out
        for key in keys[:-1]:
            node = node.setdefault(getattr(row, key), {})
        node[getattr(row, keys[-1])] = {
            name: cast(getattr(row, name)) for name, cast in fields.items()
        }
    return out
