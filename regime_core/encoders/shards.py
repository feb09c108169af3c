"""The shard file format of the embedding store (version 2): pure functions of bytes.

A shard is the magic line ``REGIME-EMB 2\\n``, an 8-byte little-endian header length, a JSON
header ``{identity, n, dim, layout, nnz, payload_bytes, payload_sha256}``, then the payload:
``n`` 32-byte keys (:func:`text_key`) followed by the vectors, either ``dense`` (n·dim float32)
or ``csr`` (int64 indptr, int32 indices, float32 data; chosen when at most a quarter of the
entries are non-zero, as with TF-IDF). ``identity`` is the identity hash of the encoder that
wrote the shard (its directory's name) and ``dim`` its dimension: a shard is tied to its
encoder. A shard's file name is ``shard-<first 24 hex of the sha256 of the whole file>.emb``,
so the header is covered by a checksum too.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from regime_core.inputs.shard_header import SHARD_HEADER
from regime_core.strict_json import parse_json

SHARD_SUFFIX = ".emb"
_MAGIC = b"REGIME-EMB 2\n"
_NAME_HEX = 24  # hex digits of the file's sha256 in its name
NAMED = re.compile(rf"^shard-[0-9a-f]{{{_NAME_HEX}}}\{SHARD_SUFFIX}$")
_KEY_BYTES = 32
# Rows are written sparse (CSR) when at most this fraction of the entries is non-zero.
_SPARSE_DENSITY: float = 0.25


class CorruptShardError(ValueError):
    """A shard file failed validation (length, checksum or structure)."""


class ForeignShardError(ValueError):
    """A valid shard of another encoder: ``identity`` is the identity hash its header names."""

    def __init__(self, message: str, identity: str) -> None:
        super().__init__(message)
        self.identity = identity


def text_key(mode: str, text: str) -> bytes:
    """The 32-byte store key of a text in a mode: ``sha256(mode ‖ 0x00 ‖ utf-8 text)``."""
    return hashlib.sha256(mode.encode("ascii") + b"\0" + text.encode("utf-8")).digest()


def encode_shard(keys: Sequence[bytes], vectors: np.ndarray, identity: str) -> bytes:
    """Serialise ``keys`` (32 bytes each) and their float32 ``vectors`` as one shard of the
    encoder whose identity hash is ``identity``. The store hands it a row per key, checked as
    the encoder's output (:meth:`~regime_core.encoders.store.EmbeddingStore.add`)."""
    matrix = np.ascontiguousarray(vectors, dtype="<f4")
    n, dim = matrix.shape
    nonzero = matrix != 0
    nnz = int(nonzero.sum())
    parts = [b"".join(keys)]
    if n and nnz <= _SPARSE_DENSITY * n * dim:
        layout = "csr"
        rows, cols = np.nonzero(nonzero)
        indptr = np.zeros(n + 1, dtype="<i8")
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        parts += [indptr.tobytes(), cols.astype("<i4").tobytes(), matrix[rows, cols].tobytes()]
    else:
        layout = "dense"
        parts.append(matrix.tobytes())
    payload = b"".join(parts)
    header = json.dumps(
        {
            "identity": identity,
            "n": n,
            "dim": dim,
            "layout": layout,
            "nnz": nnz,
            "payload_bytes": len(payload),
            "payload_sha256": hashlib.sha256(payload).hexdigest(),
        },
        sort_keys=True,
    ).encode("utf-8")
    return _MAGIC + struct.pack("<Q", len(header)) + header + payload


def shard_name(blob: bytes) -> str:
    """The file name of a shard: ``shard-<sha256 of its bytes, 24 hex>.emb``."""
    return "shard-" + hashlib.sha256(blob).hexdigest()[:_NAME_HEX] + SHARD_SUFFIX


def decode_shard(
    blob: bytes,
    *,
    dense: bool = True,
    identity: str | None = None,
) -> tuple[list[bytes], Any]:
    """Parse and validate a shard; raise :class:`CorruptShardError` saying what is wrong, or
    :class:`ForeignShardError` when it belongs to another ``identity`` (hash) than the one
    given. Its dimension is the store's to judge: a directory's dimension is the one its shards
    agree on (:mod:`regime_core.encoders.store`).

    The vectors are a dense float32 array, or, for a ``csr`` shard with ``dense=False``, a
    ``scipy.sparse.csr_matrix`` (float32) holding the same rows.
    """
    if not blob.startswith(_MAGIC):
        raise CorruptShardError("bad magic (not a shard, or truncated at the start)")
    offset = len(_MAGIC) + 8
    # Truncated before the header's length or inside the header, not UTF-8, not JSON, or not
    # the declared header: a header cut short is never a whole JSON object.
    try:
        (header_len,) = struct.unpack_from("<Q", blob, len(_MAGIC))
        text = blob[offset : offset + header_len].decode("utf-8")
        header = SHARD_HEADER.read(parse_json(text, "header"), where="shard header")
    except (struct.error, ValueError) as err:
        raise CorruptShardError(f"unreadable header ({err})") from err
    n, dim, layout, nnz = header["n"], header["dim"], header["layout"], header["nnz"]
    owner, payload_bytes = header["identity"], header["payload_bytes"]
    payload = blob[offset + header_len :]
    if len(payload) != payload_bytes:
        raise CorruptShardError(f"payload is {len(payload)} bytes, header says {payload_bytes}")
    if hashlib.sha256(payload).hexdigest() != header["payload_sha256"]:
        raise CorruptShardError("payload checksum mismatch")
    if identity is not None and owner != identity:
        raise ForeignShardError(
            f"written by the encoder of identity {owner}, not {identity}", owner
        )
    keys_end = n * _KEY_BYTES
    keys = [payload[i : i + _KEY_BYTES] for i in range(0, keys_end, _KEY_BYTES)]
    body = payload[keys_end:]
    if layout == "dense":
        if len(body) != n * dim * 4:
            raise CorruptShardError(f"dense body is {len(body)} bytes, expected {n * dim * 4}")
        vectors = np.frombuffer(body, dtype="<f4").reshape(n, dim).astype(np.float32)
    else:  # csr, the header's only other layout
        expected = (n + 1) * 8 + nnz * 8
        if len(body) != expected:
            raise CorruptShardError(f"csr body is {len(body)} bytes, expected {expected}")
        indptr = np.frombuffer(body, dtype="<i8", count=n + 1)
        cols = np.frombuffer(body, dtype="<i4", count=nnz, offset=(n + 1) * 8)
        data = np.frombuffer(body, dtype="<f4", count=nnz, offset=(n + 1) * 8 + nnz * 4)
        if indptr[0] != 0 or indptr[-1] != nnz or np.any(np.diff(indptr) < 0):
            raise CorruptShardError("csr row pointers are inconsistent")
        if nnz and (cols.min() < 0 or cols.max() >= dim):
            raise CorruptShardError("csr column index out of range")
        if not dense:
            from scipy.sparse import csr_matrix

            return keys, csr_matrix(
                (data.astype(np.float32), cols.astype(np.int32), indptr.astype(np.int64)),
                shape=(n, dim),
            )
        vectors = np.zeros((n, dim), dtype=np.float32)
        vectors[np.repeat(np.arange(n), np.diff(indptr)), cols] = data
    return keys, vectors


def compact_rows(vectors: Any) -> Any:
    """Vectors as kept in memory: scipy CSR when sparse enough (as the shard stores them)."""
    if not isinstance(vectors, np.ndarray):
        return vectors.tocsr().astype(np.float32)
    if vectors.size and np.count_nonzero(vectors) <= _SPARSE_DENSITY * vectors.size:
        from scipy.sparse import csr_matrix

        return csr_matrix(vectors, dtype=np.float32)
    return vectors
