"""The data layer: raw dataset files -> canonical two-hop examples (see ``schema.Example``).

Public API (other modules code against exactly these):

- :func:`prepare` — read every raw file under a data directory, write ``<dataset>.jsonl`` and
  ``manifest.json``, return the manifest.
- :func:`load_examples` — the prepared examples of one dataset.
- :func:`corpus_passages` — distinct passages of a set of examples, sorted by pid.
- :func:`dataset_stats` — the summary ``regime data stats`` prints.

The official full files are downloaded by :func:`regime_core.data.fetch.fetch` (the module
``regime_core.data.fetch``; resumable, atomic, checksummed).
"""

from regime_core.data.canonical import corpus_passages
from regime_core.data.prepare import (
    PREPARED_DATASETS,
    dataset_stats,
    load_examples,
    load_manifest,
    prepare,
)

__all__ = [
    "PREPARED_DATASETS",
    "corpus_passages",
    "dataset_stats",
    "load_examples",
    "load_manifest",
    "prepare",
]
