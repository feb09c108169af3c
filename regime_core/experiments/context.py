"""Where a pipeline reads its inputs and what it embeds with: one object, replaceable in tests.

Every pipeline function takes ``context: Context | None = None``. The default reads the prepared
files and the embedding store under the work directory (``REGIME_WORK_DIR``,
:mod:`regime_core.paths`) and loads the real encoders; a test replaces any part (a synthetic world
for ``examples``, a hashing encoder for ``encoder_factory``, an in-memory ``store``)::

    train_router(cfg)                                                   # the real thing
    train_router(cfg, Context(work=tmp_path))                           # another work directory
    train_router(cfg, Context(examples={"toyworld": world}, encoder_factory=fake, store=mem))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from regime_core import paths
from regime_core.encoders.base import Encoder
from regime_core.experiments.common import (
    EncoderFactory,
    ExperimentConfig,
    Sample,
    default_encoder_factory,
    load_samples,
)
from regime_core.retrieval import EmbeddingSource, document_text
from regime_core.schema import Example, Passage


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

    def __post_init__(self) -> None:
        if self.work is not None:
            object.__setattr__(self, "work", Path(self.work))
        if self.store is None:
            from regime_core.encoders import EmbeddingStore

            object.__setattr__(self, "store", EmbeddingStore(paths.embeddings_dir(self.work)))
        if self.encoder_factory is None:
            object.__setattr__(self, "encoder_factory", default_encoder_factory)

    @property
    def embeddings(self) -> EmbeddingSource:
        """The store every vector comes from (never None once built)."""
        assert self.store is not None
        return self.store

    def encoder(self, name: str, corpus: Sequence[Passage]) -> Encoder:
        """Encoder ``name`` for a dataset whose split holds the passages ``corpus``."""
        assert self.encoder_factory is not None
        return self.encoder_factory(name, [document_text(p) for p in corpus])

    def samples(self, cfg: ExperimentConfig) -> dict[str, Sample]:
        """One seeded sample per dataset of ``cfg``
        (:func:`~regime_core.experiments.common.load_samples`)."""
        return load_samples(cfg, work=self.work, examples=self.examples)


def resolve(context: Context | None) -> Context:
    """``context``, or the default one."""
    return Context() if context is None else context
