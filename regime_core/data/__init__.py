"""The data layer: raw dataset files -> canonical two-hop examples (see ``schema.Example``).

Public API (other modules code against exactly these):

- :func:`prepare` — read every raw file under a data directory, write ``<dataset>.jsonl`` and
  ``manifest.json``, return the manifest.
- :func:`load_examples` — the prepared examples of one dataset.
- :func:`corpus_passages` — distinct passages of a set of examples, sorted by pid.
- :func:`dataset_stats` — the summary ``regime data stats`` prints.
- :func:`known_datasets` — every dataset name a command or experiment accepts: the built-in
  ones and those of one's own prepared under a work directory.
- :func:`prepare_jsonl` / :func:`export_jsonl` — a dataset of one's own in the
  ``regime-twohop/1`` JSON-lines format (:mod:`regime_core.data.twohop`) into the prepared
  store, and any prepared dataset out in it (:mod:`regime_core.data.custom`).

The official full files are downloaded by :func:`regime_core.data.fetch.fetch` (the module
``regime_core.data.fetch``; resumable, atomic, checksummed).
"""

from regime_core.data.canonical import corpus_passages
from regime_core.data.custom import export_jsonl, prepare_jsonl
from regime_core.data.prepare import prepare
from regime_core.data.store import (
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
