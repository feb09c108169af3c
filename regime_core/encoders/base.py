"""The protocol every encoder implements (dense bi-encoders and the lexical TF-IDF cosine).

Vectors are float32 and L2-normalised, so an inner product is a cosine. ``identity`` names
everything that changes the vectors (model, weight hash or revision, prompts, dtype, for TF-IDF
the corpus it was fitted on): the embedding store keys its files by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    name: str

    @property
    def identity(self) -> dict[str, Any]: ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32, L2-normalised, in query mode (query prompt applied)."""
        ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32, L2-normalised, in document mode (document prompt applied)."""
        ...


def checked_corpus(corpus: Sequence[str], who: str) -> list[str]:
    """``corpus`` as a list, or ValueError naming ``who`` (``"tfidf"``) when it is
    empty: the lexical scorers fit on it, and would fail obscurely."""
    texts = list(corpus)
    if not texts:
        raise ValueError(f"{who}: the corpus is empty; pass the dataset's passage texts")
    return texts
