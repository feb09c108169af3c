"""The data layer: raw dataset files -> canonical two-hop examples (see ``schema.Example``).

Other modules code against exactly the names below: :func:`prepare` (raw files -> the prepared
store), the loaders of :mod:`~regime_core.data.prepared`, :func:`corpus_passages`, and datasets of
one's own in the ``regime-twohop/1`` format (:mod:`~regime_core.data.custom`). The official full
files are downloaded by :func:`regime_core.data.fetch.fetch`.
"""

from regime_core.data.canonical import corpus_passages
from regime_core.data.custom import export_jsonl, prepare_jsonl
from regime_core.data.prepare import prepare
from regime_core.data.prepared import (
    PREPARED_DATASETS,
    dataset_stats,
    known_datasets,
    load_examples,
    load_manifest,
)

__all__ = [
    "PREPARED_DATASETS",
    "corpus_passages",
    "dataset_stats",
    "export_jsonl",
    "known_datasets",
    "load_examples",
    "load_manifest",
    "prepare",
    "prepare_jsonl",
]
