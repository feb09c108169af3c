"""Where a run reads its inputs and what it embeds with: one object, replaceable in tests.

Every run function takes ``context: Context | None = None``. The default reads the prepared
files and the embedding store under the work directory (``REGIME_WORK_DIR``,
:mod:`regime_core.paths`) and loads the real encoders; a test replaces any part (a synthetic world
for ``examples``, a hashing encoder for ``encoder_factory``, an in-memory ``store``)::

    train_router(cfg)                                                   # the real thing
    train_router(cfg, Context(work=tmp_path))                           # another work directory
    train_router(cfg, Context(examples={"toyworld": world}, encoder_factory=fake, store=mem))
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from regime_core import paths
from regime_core.data.item_sets import ALL
from regime_core.encoders.base import Encoder
from regime_core.encoders.registry import EncoderFactory
from regime_core.experiments.common import RunConfig
from regime_core.experiments.sampling import Sample, sample_examples
from regime_core.retrieval import EmbeddingSource, document_text
from regime_core.schema import Example, Passage


class SampleSpec(Protocol):
    """What a sample is drawn by: a config's split, sample size and seed."""

    @property
    def split(self) -> str: ...
    @property
    def sample_size(self) -> int | None: ...
    @property
    def seed(self) -> int: ...


@functools.cache
def _cached_dense_encoder(name: str) -> Encoder:
    from regime_core.encoders import get_encoder

    return get_encoder(name)


@functools.lru_cache(maxsize=4)
def _fitted_tfidf(corpus_texts: tuple[str, ...]) -> Encoder:
    from regime_core.encoders import get_encoder

    return get_encoder("tfidf", corpus=list(corpus_texts))


def default_encoder_factory(name: str, corpus_texts: Sequence[str]) -> Encoder:
    """``get_encoder(name)``; dense models are loaded once per process, TF-IDF is fitted on the
    dataset split's corpus (so its vectors do not depend on the sample), once per corpus for
    the last few corpora (the fit is a deterministic function of the texts: a run that samples
    a dataset under several readings fits it once)."""
    if name == "tfidf":
        return _fitted_tfidf(tuple(corpus_texts))
    return _cached_dense_encoder(name)


@dataclass(frozen=True, eq=False)
class Context:
    """The resources of a run. ``work``: the work directory (None: ``REGIME_WORK_DIR``);
    ``store``: where vectors come from (None: the embedding store under ``work``);
    ``encoder_factory``: ``(name, corpus texts) -> Encoder`` (None: the real encoders, TF-IDF
    fitted on the split's corpus); ``examples``: ``{dataset: examples}`` in place of the
    prepared files (None: read them under ``work``)."""

    work: Path | None = None
    store: EmbeddingSource | None = None
    encoder_factory: EncoderFactory | None = None
    examples: Mapping[str, Sequence[Example]] | None = None
    #: the store every vector comes from: ``store``, else the embedding store under ``work``
    embeddings: EmbeddingSource = field(init=False, repr=False)
    #: what makes an encoder: ``encoder_factory``, else :func:`default_encoder_factory`
    factory: EncoderFactory = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.work is not None:
            object.__setattr__(self, "work", Path(self.work))
        store = self.store
        if store is None:
            from regime_core.encoders import EmbeddingStore

            store = EmbeddingStore(paths.embeddings_dir(self.work))
        object.__setattr__(self, "embeddings", store)
        object.__setattr__(self, "factory", self.encoder_factory or default_encoder_factory)

    def encoder(self, name: str, corpus: Sequence[Passage]) -> Encoder:
        """Encoder ``name`` for a dataset whose split holds the passages ``corpus``."""
        return self.factory(name, [document_text(p) for p in corpus])

    def dataset_examples(self, dataset: str, split: str) -> Sequence[Example]:
        """Every example of ``dataset`` (the prepared file's ``split``, or this context's own)."""
        if self.examples is None:
            from regime_core.data import load_examples

            return load_examples(dataset, split=split, work=self.work)
        if dataset not in self.examples:
            raise ValueError(f"Context.examples: no entry for dataset {dataset!r}")
        return self.examples[dataset]

    def with_examples_read(self, datasets: Sequence[str], split: str) -> Context:
        """This context with ``datasets``' examples of ``split`` read once and kept (unless it
        holds examples already): a run that draws samples under many readings then parses the
        prepared files once, not once per reading (they do not change during a run)."""
        if self.examples is not None:
            return self
        read = {d: tuple(self.dataset_examples(d, split)) for d in dict.fromkeys(datasets)}
        return dataclasses.replace(self, examples=read)

    def samples(self, cfg: SampleSpec, datasets: Sequence[str]) -> dict[str, Sample]:
        """One seeded :class:`~regime_core.experiments.sampling.Sample` per dataset, drawn by
        ``cfg``'s seed, sample size and split under its item set and its tiny-pool rule (a
        config without retrieval settings, not a :class:`RunConfig`, samples every item)."""
        settings = cfg.retrieval if isinstance(cfg, RunConfig) else None
        return {
            dataset: sample_examples(
                self.dataset_examples(dataset, cfg.split),
                cfg.sample_size,
                seed=cfg.seed,
                dataset=dataset,
                split=cfg.split,
                settings=settings,
                item_set=getattr(cfg, "item_set", ALL),
            )
            for dataset in datasets
        }


def resolve(context: Context | None) -> Context:
    """``context``, or the default one."""
    return Context() if context is None else context
