"""Stand-ins the tests share: a deterministic hashing encoder and a store that encodes directly.

Import them as ``from helpers import HashingEncoder, DirectStore`` (pytest puts ``tests/`` on the
import path); :func:`two_hop_example` builds a hand-written synthetic example.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from regime_core.schema import Example, Passage


class HashingEncoder:
    """Bag of lower-cased words hashed (crc32) into ``dim`` buckets, L2-normalised.
    Deterministic: no download, no model."""

    name = "hashing-test"

    def __init__(self, dim: int = 96) -> None:
        self.dim = dim

    @property
    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "dim": self.dim}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


def two_hop_example(
    question: str,
    bridge: Passage,
    target: Passage,
    pool: Sequence[Passage],
    *,
    hop2_entity: str,
    qid: str = "x1",
    native_type: str = "bridge",
    answer: str = "x",
    hop2_aliases: Sequence[str] = (),
    relation_sentence: int | None = None,
) -> Example:
    """A synthetic (``toyworld``, dev) two-hop example: ``bridge`` then ``target``, in ``pool``."""
    return Example(
        id=qid,
        dataset="toyworld",
        split="dev",
        native_type=native_type,
        question=question,
        answer=answer,
        answer_aliases=(),
        pool=tuple(pool),
        bridge_pid=bridge.pid,
        target_pid=target.pid,
        gold_pids=(bridge.pid, target.pid),
        hop_order_rule="synthetic",
        parallel=False,
        hop2_entity=hop2_entity,
        hop2_aliases=tuple(hop2_aliases),
        relation_sentence=relation_sentence,
        relation_source="synthetic" if relation_sentence is not None else "none",
    )


class DirectStore:
    """Stands in for EmbeddingStore: encodes directly (and keeps nothing)."""

    def embed(self, encoder: Any, texts: Sequence[str], mode: str) -> np.ndarray:
        if mode == "query":
            return encoder.encode_queries(texts)
        return encoder.encode_documents(texts)


def hashing_context(examples: Any, dim: int = 64) -> Any:
    """A :class:`~regime_core.experiments.context.Context` over ``examples`` (``{dataset:
    examples}``) with the hashing encoder and the direct store: no file is read or written."""
    from regime_core.experiments.context import Context

    return Context(
        examples=examples,
        encoder_factory=lambda name, corpus: HashingEncoder(dim),
        store=DirectStore(),
    )
