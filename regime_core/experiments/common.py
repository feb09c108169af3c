"""What every claim shares: the experiment config, and a config's outcomes collected in one call.

The flow of every claim notebook is::

    config ──collect_outcomes──▶ outcome table (one row per query × arm × encoder)
                                      │
                                      ▼
                          analyse_t1 / analyse_t2 / analyse_t3 ──▶ result.to_numbers() ──▶ record

:func:`collect_outcomes` samples each dataset (:mod:`regime_core.experiments.sampling`) and builds
its outcome table for each encoder (:mod:`regime_core.experiments.outcomes`, the only place the
claims retrieve). The names of both modules are re-exported here, where they used to live.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypedDict, Unpack

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.data import known_datasets
from regime_core.data.regimes import DEFAULT_REGIME_RULES, RegimeRules
from regime_core.encoders.base import Encoder
from regime_core.encoders.registry import EncoderFactory
from regime_core.encoders.store import store_or_default
from regime_core.experiments.outcomes import (
    ENTITY_SOURCES,
    NEGATIVE_METRICS,
    OUTCOME_COLUMNS,
    OUTCOME_SETTINGS,
    POOLED,
    REGIME_COLUMNS,
    CountingStore,
    arm_matrix,
    bridge_entity_mention,
    evidence_datasets,
    hit_column,
    mention_is_title,
    metric_columns,
    outcome_columns,
    outcome_table,
    pq_label,
    ranking_metrics,
)
from regime_core.experiments.sampling import (
    SAMPLE_SETTINGS,
    Sample,
    hop2_candidates,
    ids_hash,
    is_tiny_pool,
    sample_examples,
    sample_ids,
    sample_numbers,
)
from regime_core.retrieval import EmbeddingSource, document_text
from regime_core.schema import SPLITS, Example
from regime_core.stats import PairedComparison, compare_paired

__all__ = [
    "ENTITY_SOURCES",
    "EXPERIMENT_DATASETS",
    "EXPERIMENT_ENCODERS",
    "NEGATIVE_METRICS",
    "OUTCOME_COLUMNS",
    "OUTCOME_SETTINGS",
    "POOLED",
    "REGIME_COLUMNS",
    "SAMPLE_SETTINGS",
    "CountingStore",
    "EncoderFactory",
    "ExperimentConfig",
    "OutcomeSources",
    "Outcomes",
    "Sample",
    "arm_matrix",
    "bridge_entity_mention",
    "collect_outcomes",
    "compare_arms",
    "default_encoder_factory",
    "evidence_datasets",
    "hit_column",
    "hop2_candidates",
    "ids_hash",
    "is_tiny_pool",
    "load_samples",
    "mention_is_title",
    "metric_columns",
    "outcome_columns",
    "outcome_table",
    "pq_label",
    "ranking_metrics",
    "sample_examples",
    "sample_ids",
    "sample_numbers",
    "settings_of",
    "table_numbers",
]

# The datasets `regime data prepare` builds; the experiments default to all of them.
EXPERIMENT_DATASETS: tuple[str, ...] = config.DATASETS
# A dense family and a lexical family: the smallest honest "across encoders" on a CPU machine.
EXPERIMENT_ENCODERS: tuple[str, ...] = (config.ENCODER, "tfidf")


@dataclass(frozen=True)
class ExperimentConfig(ConfigMixin):
    """The parameters every claim shares; notebooks build it from their ``parameters`` cell.

    ``sample_size`` is per dataset (``None``: every two-hop item of the split); the sample is a
    seeded function of (seed, dataset, ids) only. ``bootstrap_resamples`` drives every CI.
    Lists are accepted (papermill passes YAML lists) and stored as tuples.
    """

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size"})  # None = all

    datasets: tuple[str, ...] = EXPERIMENT_DATASETS
    encoders: tuple[str, ...] = EXPERIMENT_ENCODERS
    pool: str = config.POOL_MODE
    alpha: float = config.ALPHA
    k: int = config.HEADLINE_K
    seed: int = config.SEED
    sample_size: int | None = None
    split: str = config.SPLIT
    bootstrap_resamples: int = config.BOOTSTRAP_RESAMPLES
    confidence: float = config.CONFIDENCE
    exclude_bridge: bool = config.EXCLUDE_BRIDGE
    entity_source: str = "bridge_mention"
    tiny_pools: str = config.TINY_POOLS  # pools with <= k hop-2 candidates: exclude or keep
    knockout_single: str = config.KNOCKOUT_SINGLE  # knockout of a B_rel-only bridge: title/drop
    predicate_names: str = config.PREDICATE_NAMES  # names that make P1/P2: title(+linking)
    rules: RegimeRules = field(default_factory=lambda: DEFAULT_REGIME_RULES)

    def validate(self) -> None:
        for name in ("datasets", "encoders"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value))
        where = type(self).__name__
        if not self.datasets:
            raise ValueError(
                f"{where}.datasets is empty; name at least one of {EXPERIMENT_DATASETS}"
            )
        unknown = [d for d in self.datasets if d not in known_datasets()]
        if unknown:
            raise ValueError(f"{where}.datasets: unknown {unknown}; known {known_datasets()}")
        if len(set(self.datasets)) != len(self.datasets):
            raise ValueError(f"{where}.datasets lists a dataset twice: {self.datasets}")
        if not self.encoders or len(set(self.encoders)) != len(self.encoders):
            raise ValueError(f"{where}.encoders must be distinct names, got {self.encoders}")
        if self.pool not in config.POOL_MODES:
            raise ValueError(f"{where}.pool is {self.pool!r}, not one of {config.POOL_MODES}")
        if not np.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError(f"{where}.alpha must be a finite number >= 0, got {self.alpha!r}")
        if not _positive_int(self.k):
            raise ValueError(f"{where}.k must be a positive integer, got {self.k!r}")
        if self.sample_size is not None and not _positive_int(self.sample_size):
            raise ValueError(
                f"{where}.sample_size must be a positive integer or None (all), "
                f"got {self.sample_size!r}"
            )
        if self.split not in SPLITS:
            raise ValueError(f"{where}.split is {self.split!r}, not one of {SPLITS}")
        if not _positive_int(self.bootstrap_resamples):
            raise ValueError(
                f"{where}.bootstrap_resamples must be a positive integer, "
                f"got {self.bootstrap_resamples!r}"
            )
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"{where}.confidence must lie in (0, 1), got {self.confidence!r}")
        if self.entity_source not in ENTITY_SOURCES:
            raise ValueError(
                f"{where}.entity_source is {self.entity_source!r}, not one of {ENTITY_SOURCES}"
            )
        if not isinstance(self.rules, RegimeRules):
            raise ValueError(f"{where}.rules must be a RegimeRules")
        if self.tiny_pools not in config.TINY_POOL_RULES:
            raise ValueError(
                f"{where}.tiny_pools is {self.tiny_pools!r}, not one of {config.TINY_POOL_RULES}"
            )
        if self.knockout_single not in config.KNOCKOUT_SINGLE_RULES:
            raise ValueError(
                f"{where}.knockout_single is {self.knockout_single!r}, not one of "
                f"{config.KNOCKOUT_SINGLE_RULES}"
            )
        # predicate_names is the flat (papermill-friendly) face of rules.predicate_names: a
        # value set on either side wins over the other's default; two set values must agree.
        if self.rules.predicate_names != self.predicate_names:
            if self.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(self, "predicate_names", self.rules.predicate_names)
            elif self.rules.predicate_names == config.PREDICATE_NAMES:
                object.__setattr__(
                    self,
                    "rules",
                    dataclasses.replace(self.rules, predicate_names=self.predicate_names),
                )
            else:  # pragma: no cover - two non-default values of a two-valued knob differ
                raise ValueError(
                    f"{where}: predicate_names={self.predicate_names!r} contradicts "
                    f"rules.predicate_names={self.rules.predicate_names!r}; set one of them"
                )


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def settings_of(cfg: ExperimentConfig, names: Sequence[str]) -> dict[str, Any]:
    """``{name: cfg.name}`` for ``names``: the config's values of the parameters of that name of a
    function (:data:`~regime_core.experiments.sampling.SAMPLE_SETTINGS`,
    :data:`~regime_core.experiments.outcomes.OUTCOME_SETTINGS`), passed whole, never retyped."""
    return {name: getattr(cfg, name) for name in names}


def compare_arms(wide: pd.DataFrame, a: str, b: str, cfg: ExperimentConfig) -> PairedComparison:
    """Arm ``a`` against arm ``b`` (two columns of binary outcomes of a paired table, as
    :func:`~regime_core.experiments.outcomes.arm_matrix` makes it): McNemar, with the bootstrap
    resamples, confidence and seed of ``cfg``."""
    return compare_paired(
        wide[a].to_numpy(dtype=np.float64),
        wide[b].to_numpy(dtype=np.float64),
        test="mcnemar",
        resamples=cfg.bootstrap_resamples,
        confidence=cfg.confidence,
        seed=cfg.seed,
        label_a=a,
        label_b=b,
    )


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


def load_samples(
    cfg: ExperimentConfig,
    *,
    work: Path | str | None = None,
    examples: Mapping[str, Sequence[Example]] | None = None,
) -> dict[str, Sample]:
    """One :class:`Sample` per dataset of ``cfg``, from the prepared files under ``work`` (or
    from ``examples``, a mapping dataset -> examples, e.g. a synthetic world in tests)."""
    from regime_core.data import load_examples

    samples = {}
    for dataset in cfg.datasets:
        if examples is not None:
            if dataset not in examples:
                raise ValueError(f"examples: no entry for dataset {dataset!r}")
            found: Sequence[Example] = examples[dataset]
        else:
            found = load_examples(
                dataset, split=cfg.split, work=None if work is None else Path(work)
            )
        settings = settings_of(cfg, SAMPLE_SETTINGS)
        samples[dataset] = sample_examples(found, cfg.sample_size, dataset=dataset, **settings)
    return samples


@functools.cache
def _cached_dense_encoder(name: str) -> Encoder:
    from regime_core.encoders import get_encoder

    return get_encoder(name)


def default_encoder_factory(name: str, corpus_texts: Sequence[str]) -> Encoder:
    """``get_encoder(name)``; dense models are loaded once per process, TF-IDF is fitted on the
    dataset split's corpus (so its vectors do not depend on the sample)."""
    from regime_core.encoders import get_encoder

    if name == "tfidf":
        return get_encoder(name, corpus=list(corpus_texts))
    return _cached_dense_encoder(name)


@dataclass(frozen=True)
class Outcomes:
    """Every (dataset, encoder) outcome table of a config, concatenated, plus provenance."""

    table: pd.DataFrame
    samples: Mapping[str, Sample]
    missing: Mapping[str, Mapping[str, Mapping[str, Mapping[str, int]]]]  # enc -> ds -> arm
    n_encoded: int
    n_cached: int

    def sample_numbers(self) -> dict[str, dict[str, Any]]:
        """``{dataset: {n_available, n, n_tiny_pool, ids_hash}}`` for the record."""
        return {ds: sample_numbers(s) for ds, s in self.samples.items()}

    def input_hashes(self) -> dict[str, str]:
        """``{"sample_<dataset>": ids_hash}`` for the record's ``inputs``."""
        return {f"sample_{ds}": s.ids_hash for ds, s in self.samples.items()}


class OutcomeSources(TypedDict, total=False):
    """Where :func:`collect_outcomes` reads from; each left out means the real thing.

    ``work``: the work directory (prepared files, embedding store; default ``REGIME_WORK_DIR``).
    ``examples``: dataset -> examples, instead of the prepared files (a synthetic world).
    ``encoder_factory``: ``(name, corpus texts) -> Encoder``, instead of the real encoders.
    ``store``: the embedding store, instead of the one under ``work``.
    """

    work: Path | str | None
    examples: Mapping[str, Sequence[Example]] | None
    encoder_factory: EncoderFactory | None
    store: EmbeddingSource | None


def collect_outcomes(
    cfg: ExperimentConfig, arms: Sequence[str], **sources: Unpack[OutcomeSources]
) -> Outcomes:
    """Sample every dataset of ``cfg`` and build its outcome table for every encoder.

    ``sources`` replace the prepared files, the real encoders or the store (tests use a
    synthetic world and a fake encoder). The table is sorted by encoder, dataset, arm, qid.
    """
    work = sources.get("work")
    samples = load_samples(cfg, work=work, examples=sources.get("examples"))
    factory = sources.get("encoder_factory") or default_encoder_factory
    counting = CountingStore(store_or_default(sources.get("store"), work))
    settings = settings_of(cfg, OUTCOME_SETTINGS)
    frames = []
    missing: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for encoder_name in cfg.encoders:
        missing[encoder_name] = {}
        for dataset, sample in samples.items():
            encoder = factory(encoder_name, [document_text(p) for p in sample.corpus])
            table = outcome_table(
                sample.examples,
                encoder=encoder,
                arms=arms,
                store=counting,
                corpus=sample.corpus,
                **settings,
            )
            # The encoder's own name may differ from the requested one (a hub id); keep the
            # requested name so that tables line up with the config.
            table["encoder"] = encoder_name
            missing[encoder_name][dataset] = table.attrs["missing"]
            frames.append(table)
    table = pd.concat(frames, ignore_index=True)
    table = table.sort_values(["encoder", "dataset", "arm", "qid"], kind="stable")
    table = table.reset_index(drop=True)
    return Outcomes(
        table=table,
        samples=samples,
        missing=missing,
        n_encoded=counting.n_encoded,
        n_cached=counting.n_cached,
    )
