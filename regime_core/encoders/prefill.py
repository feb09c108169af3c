"""Encode once, up front: fill the embedding store with every text a profile's runs will ask a
dense encoder for, before any notebook starts.

``regime reproduce`` calls :func:`fill_for_runs` before it schedules the runs, so two notebooks
running at once (``--jobs``) never encode the same passage twice. Lexical encoders (TF-IDF) are
fitted per corpus inside each run and cost seconds: they are not filled here. What a run reads
is decided by its own parameters: :data:`DATASET_PARAMETERS` and :data:`ENCODER_PARAMETERS`
name the notebook parameters that hold datasets and encoders.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import config, paths
from regime_core.schema import Example

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


def encodings(parameters: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """``{dense encoder: [(dataset, split), ...]}`` in first-seen order, from the runs'
    ``parameters``: every dataset a run names, in the split it reads (its ``split``, else
    :data:`regime_core.config.SPLIT`), under every dense encoder it names (pure; lexical
    encoders and runs naming no dataset are left out). A run on a sample reads its whole split
    too: its questions' vectors are among the split's, and a corpus pool reads every passage.

    >>> encodings([{"datasets": ["musique"], "encoders": ["minilm", "tfidf"]},
    ...            {"encoder": "minilm", "real_dataset": "hotpotqa", "split": "train"}])
    {'minilm': [('musique', 'dev'), ('hotpotqa', 'train')]}
    """
    from regime_core.encoders.registry import KNOWN_ENCODERS

    dense = set(KNOWN_ENCODERS) - set(LEXICAL_ENCODERS)
    out: dict[str, dict[tuple[str, str], None]] = {}
    for params in parameters:
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


def retrieved_bridge_sentences(examples: Sequence[Example], encoder: Any, store: Any) -> list[str]:
    """The sentences of each question's hop-1 top-1 passage under ``encoder``, distinct, in
    order: what a ``bridge_source="retrieved"`` reading (the robustness multiverse's) selects
    ``B_rel`` from in query mode. Reads the questions' and their pools' vectors from ``store``."""
    from regime_core.retrieval.geometry import hop1_top_pids, with_retrieved_bridges

    top = hop1_top_pids(examples, encoder=encoder, store=store)
    kept, _outcomes, _counts = with_retrieved_bridges(examples, top)
    return list(dict.fromkeys(s for ex in kept for s in ex.bridge.sentences))


def fill_for_runs(
    parameters: Iterable[Mapping[str, Any]],
    work: Path,
    *,
    generated: Mapping[str, Sequence[Sequence[Example]]] | None = None,
    progress: bool = True,
    say: Callable[[str], None] = lambda _message: None,
    batch_size: int = config.ENCODE_BATCH_SIZE,
) -> list[FillReport]:
    """Fill ``work``'s embedding store with every text the runs of ``parameters`` will ask a
    dense encoder for (:func:`encodings`: each dataset's corpus in document mode, its
    :func:`~regime_core.encoders.embed.query_texts` in query mode), then with the sentences of
    the bridges hop 1 retrieves (:func:`retrieved_bridge_sentences`), and with the texts of the
    examples runs generate (``generated``: ``{encoder: [world, ...]}``, the teaching runs' toy
    worlds); one :class:`FillReport` per encoder. A store that already holds them encodes
    nothing (and loads no model)."""
    from regime_core.data import corpus_passages, load_examples
    from regime_core.encoders.embed import make_encoder, query_texts
    from regime_core.encoders.registry import KNOWN_ENCODERS
    from regime_core.encoders.store import EmbeddingStore, Mode
    from regime_core.retrieval import document_text

    store = EmbeddingStore(paths.embeddings_dir(work))
    wanted = encodings(parameters)
    dense = set(KNOWN_ENCODERS) - set(LEXICAL_ENCODERS)
    made = {e: worlds for e, worlds in (generated or {}).items() if e in dense and worlds}
    reports = []
    for encoder_name in dict.fromkeys([*wanted, *made]):
        datasets = wanted.get(encoder_name, [])
        started = time.perf_counter()
        ready = [(d, split) for d, split in datasets if _prepared(d, work)]
        read = {(d, split): load_examples(d, split=split, work=work) for d, split in ready}
        encoder = make_encoder(encoder_name, [])
        parts = [*read.values(), *made.get(encoder_name, [])]
        passages = (document_text(p) for part in parts for p in corpus_passages(part))
        queries = (text for part in parts for text in query_texts(part))
        # read when its turn comes, from the questions' and passages' vectors filled before it
        bridges = (
            s for part in read.values() for s in retrieved_bridge_sentences(part, encoder, store)
        )
        seen: dict[str, set[str]] = {"document": set(), "query": set()}
        encoded = texts = 0
        work_items: list[tuple[Mode, Iterable[str]]] = [
            ("document", passages),
            ("query", queries),
            ("query", bridges),
        ]
        for mode, listed in work_items:
            unique = [t for t in dict.fromkeys(listed) if t not in seen[mode]]
            seen[mode].update(unique)
            if unique:
                say(f"encoding up front with {encoder_name}: {len(unique):,} {mode} texts")
                report = store.fill(encoder, unique, mode, batch_size=batch_size, progress=progress)
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
