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
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.data import known_datasets
from regime_core.data.regimes import DEFAULT_REGIME_RULES, PREDICATE_NAMES, RegimeRules
from regime_core.encoders.registry import check_encoder_name
from regime_core.inputs import Choice, Flag, Instance, Nullable
from regime_core.inputs.configs import ALPHA, LEVEL, NAMES, declared, integer
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.router.evaluation import Bootstrap, paired_hits
from regime_core.schema import SPLITS
from regime_core.stats import PairedComparison

#: A dense family and a lexical family: the smallest honest "across encoders" on a CPU machine.
EXPERIMENT_ENCODERS: tuple[str, ...] = (config.ENCODER, "tfidf")


def check_datasets(datasets: Sequence[str], where: str) -> None:
    """Raise ValueError naming ``where`` unless ``datasets`` are distinct known datasets."""
    known = known_datasets()  # the built-in ones, the toy world and any prepared file of one's own
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(f"{where}: unknown {unknown}; known {known}")
    check_distinct(datasets, where)


def check_distinct(values: Sequence[Any], where: str) -> None:
    """Raise ValueError naming ``where`` if ``values`` lists a value twice."""
    if len(set(values)) != len(values):
        raise ValueError(f"{where} lists a value twice: {tuple(values)}")


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


def check_transfer_grid(cfg: Any) -> None:
    """Raise ValueError unless ``cfg``'s datasets (the training one, then the transfer ones) are
    distinct known datasets and its encoders distinct (the ablations' and the α-transfer run's
    configs)."""
    where = type(cfg).__name__
    check_datasets(cfg.datasets, f"{where}: train_dataset and transfer_datasets")
    check_distinct(cfg.encoders, f"{where}.encoders")


@dataclass(frozen=True)
class RunConfig(ConfigMixin):
    """The fields every run shares; a run's config subclasses it with its own.

    ``sample_size`` is per dataset (``None``: every two-hop item of the split); the sample is a
    seeded function of (seed, dataset, ids) only. ``bootstrap_resamples`` drives every CI.
    ``predicate_names`` is the flat (papermill-friendly) face of ``regime_rules.predicate_names``:
    a value set on either side wins over the other's default.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size"})  # None = all

    pool: str = declared(config.POOL_MODE, Choice(config.POOL_MODES))
    """where the hop-2 candidates come from: question (each question's own pool) or corpus (every
    passage of the dataset)
    """
    alpha: float = declared(config.ALPHA, ALPHA)
    """weight α of the bridge side in the union, knockout and entity queries (question + α × bridge
    side); the paper freezes it at 0.25
    """
    k: int = declared(config.HEADLINE_K, integer(1))
    """the cutoff k of every hit@k claim; 5 makes it hit@5, the paper's R@5"""
    seed: int = declared(config.SEED, integer())
    """seed of the question sample and of every bootstrap and permutation draw"""
    sample_size: int | None = declared(None, Nullable(integer(1)))
    """questions drawn per dataset, seeded; None takes every two-hop one"""
    split: str = declared(config.SPLIT, Choice(SPLITS))
    """the split of each dataset that is read: dev or train"""
    bootstrap_resamples: int = declared(config.BOOTSTRAP_RESAMPLES, integer(1))
    """bootstrap resamples behind every confidence interval"""
    confidence: float = declared(config.CONFIDENCE, LEVEL)
    """level of every confidence interval; one minus it is the test level"""
    exclude_bridge: bool = declared(config.EXCLUDE_BRIDGE, Flag())
    """the bridge passage is removed from the hop-2 candidates"""
    entity_source: str = declared(config.ENTITY_SOURCE, Choice(config.ENTITY_SOURCES))
    """what the entity arm adds to the question: bridge_mention (the hop-2 entity as the bridge
    writes it) or example (the dataset's own name for it)
    """
    tiny_pools: str = declared(config.TINY_POOLS, Choice(config.TINY_POOL_RULES))
    """a pool of at most k hop-2 candidates, where every arm scores hit@k = 1: exclude (left out of
    hit@k claims, counted) or keep
    """
    item_set: str = declared(config.ITEM_SET, Choice(config.ITEM_SETS))
    """which two-hop items of each dataset are read: all (every item prepare keeps) or strict
    (only those whose bridge mentions the target's title exactly once and whose answer is not
    yes/no; regime_core.data.item_sets), the others left out before sampling and counted
    """
    knockout_single: str = declared(config.KNOCKOUT_SINGLE, Choice(config.KNOCKOUT_SINGLE_RULES))
    """the knockout query of a bridge whose only sentence is B_rel: title (the bridge's title) or
    exclude (the question leaves the knockout arm)
    """
    predicate_names: str = declared(config.PREDICATE_NAMES, Choice(tuple(PREDICATE_NAMES)))
    regime_rules: RegimeRules = declared(  # noqa: RUF009  (a dataclasses.field)
        kind=Instance(RegimeRules), factory=lambda: DEFAULT_REGIME_RULES
    )
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
        if self.regime_rules.predicate_names != self.predicate_names:
            if self.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(self, "predicate_names", self.regime_rules.predicate_names)
            else:
                rules = dataclasses.replace(self.regime_rules, predicate_names=self.predicate_names)
                object.__setattr__(self, "regime_rules", rules)

    @functools.cached_property
    def retrieval(self) -> RetrievalSettings:
        """The retrieval settings of this run, read from its fields of the same names, which
        were checked when the config was built (a TransferConfig's α of None is replaced by the
        router's before it retrieves)."""
        fields = dataclasses.fields(RetrievalSettings)
        return RetrievalSettings(**{f.name: getattr(self, f.name) for f in fields})

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

    datasets: tuple[str, ...] = declared(config.DATASETS, NAMES)
    """the datasets the claim is judged on, pooled and each on its own"""
    encoders: tuple[str, ...] = declared(EXPERIMENT_ENCODERS, NAMES)
    """the encoders retrieval runs with; the claim is judged under each"""

    def validate(self) -> None:
        where = type(self).__name__
        check_datasets(self.datasets, f"{where}.datasets")
        check_distinct(self.encoders, f"{where}.encoders")
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
