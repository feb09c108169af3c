"""BM25 as a non-cosine lexical reference (``bm25s``, pure numpy/scipy).

BM25 has no vectors, so it is not an :class:`~regime_core.encoders.base.Encoder`: it scores a
*text* query against corpus documents. It therefore supports only the ``q`` and ``bridge`` arms
(the question or the whole bridge passage as the query); ``union``, ``knockout`` and ``entity``
add weighted query *vectors* and have no BM25 counterpart.

Lucene's variant (``bm25s`` default): for query q and document d,
``score(q, d) = Σ_{t ∈ q} idf(t) · tf(t, d) / (tf(t, d) + k1·(1 − b + b·|d|/avgdl))``
with ``idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))``; like Lucene 8+, it omits the
textbook ``(k1 + 1)`` numerator factor, a constant that does not change rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from regime_core.config import ConfigMixin
from regime_core.encoders.base import checked_corpus
from regime_core.inputs import Choice, Number, Text
from regime_core.inputs.configs import SHARE, declared

BM25_METHODS: tuple[str, ...] = ("lucene", "robertson", "atire", "bm25l", "bm25+")


@dataclass(frozen=True)
class BM25Params(ConfigMixin):
    """BM25's parameters (``bm25s`` defaults) and its tokeniser's stop-word list."""

    k1: float = declared(1.5, Number(low=0.0))
    b: float = declared(0.75, SHARE)
    method: str = declared("lucene", Choice(BM25_METHODS))
    stopwords: str = declared("en", Text())


class BM25Scorer:
    """BM25 over ``corpus_texts``; :meth:`scores` ranks documents by their corpus index.

    >>> bm25 = BM25Scorer(["Paris is in France.", "Berlin is in Germany."])
    >>> bm25.scores(["Where is Berlin?"]).argmax()
    np.int64(1)
    """

    def __init__(self, corpus_texts: Sequence[str], params: BM25Params | None = None) -> None:
        import bm25s

        texts = checked_corpus(corpus_texts, "bm25")
        self.params = params or BM25Params()
        tokens = bm25s.tokenize(texts, stopwords=self.params.stopwords, show_progress=False)
        self.retriever_ = bm25s.BM25(k1=self.params.k1, b=self.params.b, method=self.params.method)
        self.retriever_.index(tokens, show_progress=False)
        self.n_documents_ = len(texts)

    def _query_token_ids(self, text: str) -> list[int]:
        import bm25s

        words = bm25s.tokenize(
            [text], stopwords=self.params.stopwords, return_ids=False, show_progress=False
        )[0]
        vocab = self.retriever_.vocab_dict
        return [vocab[w] for w in words if w in vocab]

    def scores(
        self, query_texts: Sequence[str], doc_indices: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """``(len(query_texts), len(doc_indices))`` float32 BM25 scores (all documents if None).

        A query sharing no term with the corpus scores 0 everywhere.
        """
        if doc_indices is None:
            columns = np.arange(self.n_documents_)
        else:
            columns = np.asarray(doc_indices)
            out_of_range = columns[(columns < 0) | (columns >= self.n_documents_)]
            if out_of_range.size:
                raise ValueError(
                    f"bm25: doc_indices {out_of_range[:5].tolist()} are outside the corpus of "
                    f"{self.n_documents_} documents"
                )
        result = np.zeros((len(query_texts), columns.size), dtype=np.float32)
        for row, text in enumerate(query_texts):
            ids = self._query_token_ids(text)
            if ids:
                result[row] = self.retriever_.get_scores(ids)[columns]
        return result
