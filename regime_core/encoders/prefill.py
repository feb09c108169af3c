"""Encode once, up front: fill the embedding store with every text a profile's runs will ask a
dense encoder for, before any notebook starts.

``regime reproduce`` calls :func:`fill_for_runs` before it schedules the runs: from the runs'
parameters (:func:`encodings`) it lists, per dense encoder, the prepared datasets (and splits)
the runs read,
and fills the store with each dataset's texts (:func:`regime_core.encoders.embed.dataset_texts`:
its corpus in document mode, its questions, bridge sentences and arm queries in query mode), one
encoder at a time, with a progress bar that shows texts per second. The notebooks then find
their vectors in the store, so two notebooks running at once (``--jobs``) never encode the
same passage twice. Lexical encoders (TF-IDF) are fitted per corpus inside each run and cost
seconds: they are not filled here.

What a run reads is decided by its own parameters: :data:`DATASET_PARAMETERS` and
:data:`ENCODER_PARAMETERS` name the notebook parameters that hold datasets and encoders.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import config, paths

#: Notebook parameters naming the datasets a run reads (a list or one name).
DATASET_PARAMETERS: tuple[str, ...] = (
    "datasets",
    "transfer_datasets",
    "selector_datasets",
    "real_dataset",
)
#: Notebook parameters naming the encoders a run encodes with (a list or one name).
ENCODER_PARAMETERS: tuple[str, ...] = ("encoders", "encoder", "primary_encoder")
#: Encoders fitted on each run's own corpus in seconds: never filled up front.
LEXICAL_ENCODERS: tuple[str, ...] = ("tfidf",)


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def reads_whole_split(parameters: Mapping[str, Any]) -> bool:
    """Whether a run with these ``parameters`` asks for the vectors of its whole split: it
    samples nothing (no ``sample_size``), or it pools over the corpus (``pool``/``pools``
    naming ``corpus``). A run on a sample over question pools (the quick profile's) reads a
    small part of the split: filling the whole split for it would cost more than it saves.

    >>> reads_whole_split({}), reads_whole_split({"sample_size": 40})
    (True, False)
    >>> reads_whole_split({"sample_size": 1000, "pool": "corpus"})
    True
    """
    pools = {*_names(parameters.get("pool")), *_names(parameters.get("pools"))}
    return parameters.get("sample_size") is None or "corpus" in pools


def encodings(parameters: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """``{dense encoder: [(dataset, split), ...]}`` in first-seen order, from the runs'
    ``parameters``: every dataset a run names, in the split it reads (its ``split``, else
    :data:`regime_core.config.SPLIT`), under every dense encoder it names (pure; lexical
    encoders, runs naming no dataset and runs reading a sample of question pools
    (:func:`reads_whole_split`) are left out).

    >>> encodings([{"datasets": ["musique"], "encoders": ["minilm", "tfidf"]},
    ...            {"encoder": "minilm", "real_dataset": "hotpotqa", "split": "train"}])
    {'minilm': [('musique', 'dev'), ('hotpotqa', 'train')]}
    """
    from regime_core.encoders.registry import KNOWN_ENCODERS

    dense = set(KNOWN_ENCODERS) - set(LEXICAL_ENCODERS)
    out: dict[str, dict[tuple[str, str], None]] = {}
    for params in parameters:
        if not reads_whole_split(params):
            continue
        split = params.get("split") or config.SPLIT
        datasets = [(d, split) for name in DATASET_PARAMETERS for d in _names(params.get(name))]
        encoders = [e for name in ENCODER_PARAMETERS for e in _names(params.get(name))]
        for encoder in encoders:
            if encoder in dense and datasets:
                out.setdefault(encoder, {}).update(dict.fromkeys(datasets))
    return {encoder: list(datasets) for encoder, datasets in out.items()}


@dataclass(frozen=True)
class FillReport:
    """What :func:`fill_for_runs` did for one encoder: texts listed, encoded and seconds;
    ``datasets`` the ``dataset/split`` filled, ``skipped`` those whose dataset is not prepared
    (their runs will say so)."""

    encoder: str
    datasets: tuple[str, ...]
    skipped: tuple[str, ...]
    texts: int
    encoded: int
    seconds: float

    def line(self) -> str:
        rate = self.encoded / self.seconds if self.seconds > 0 else 0.0
        skipped = f"; not prepared: {', '.join(self.skipped)}" if self.skipped else ""
        return (
            f"encoded up front with {self.encoder}: {self.encoded:,} of {self.texts:,} texts "
            f"({', '.join(self.datasets) or 'no dataset'}) in {self.seconds:.1f} s"
            f" ({rate:.0f} texts/s){skipped}"
        )


def _prepared(dataset: str, work: Path) -> bool:
    from regime_core.data.prepared import TOYWORLD

    return dataset == TOYWORLD or (paths.prepared_dir(work) / f"{dataset}.jsonl").exists()


def fill_for_runs(
    parameters: Iterable[Mapping[str, Any]],
    work: Path,
    *,
    progress: bool = True,
    say: Callable[[str], None] = lambda _message: None,
    batch_size: int = config.ENCODE_BATCH_SIZE,
    backend: str = config.ENCODER_BACKEND,
) -> list[FillReport]:
    """Fill ``work``'s embedding store with every text the runs of ``parameters`` will ask a
    dense encoder for (:func:`encodings`), run on ``backend`` (the notebooks' own);
    one :class:`FillReport` per encoder. A store that already holds them encodes nothing (and
    loads no model)."""
    from regime_core.encoders.embed import dataset_texts, make_encoder
    from regime_core.encoders.store import EmbeddingStore

    store = EmbeddingStore(paths.embeddings_dir(work))
    reports = []
    for encoder_name, datasets in encodings(parameters).items():
        started = time.perf_counter()
        ready = [(d, split) for d, split in datasets if _prepared(d, work)]
        by_mode: dict[str, dict[str, None]] = {"document": {}, "query": {}}
        for dataset, split in ready:
            documents, queries = dataset_texts(dataset, work, split)
            by_mode["document"].update(dict.fromkeys(documents))
            by_mode["query"].update(dict.fromkeys(queries))
        encoder = make_encoder(encoder_name, [], backend=backend, work=work)
        encoded = texts = 0
        for mode, listed in by_mode.items():
            say(f"encoding up front with {encoder_name}: {len(listed):,} {mode} texts")
            report = store.fill(
                encoder,
                list(listed),
                mode,  # type: ignore[arg-type]
                batch_size=batch_size,
                progress=progress,
            )
            encoded += report.n_encoded
            texts += report.n_unique
        reports.append(
            FillReport(
                encoder=encoder_name,
                datasets=tuple(f"{d}/{split}" for d, split in ready),
                skipped=tuple(f"{d}/{split}" for d, split in datasets if (d, split) not in ready),
                texts=texts,
                encoded=encoded,
                seconds=time.perf_counter() - started,
            )
        )
    return reports
