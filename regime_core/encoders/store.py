"""The on-disk, content-addressed embedding store.

Layout under ``root`` (``paths.embeddings_dir(work)``)::

    <identity hash>/identity.json        the encoder's identity (what the hash is of)
    <identity hash>/shard-<sha>.emb      appended shards of (key, vector) rows

A vector's key is ``sha256(mode + "\\0" + text)``: the same text in query and document mode are
two entries (prompts differ), and a text is never encoded twice by the same encoder. Each call
to :meth:`EmbeddingStore.embed` encodes only the distinct texts not yet stored, in batches, and
appends them as new shard(s), each written to a temporary file then ``os.replace``-d into place,
so a reader never sees half a shard and two processes can share a store (concurrent writers of
the same texts at worst store duplicates; the first one read wins).

Shards are written in the format of :mod:`regime_core.encoders.shards`. CSR shards stay sparse
in memory (scipy CSR) and are densified only row by row as they are gathered, so a TF-IDF store
costs its non-zeros, not n × vocabulary floats.

What is read, and what is done with a file that cannot be used (each reported once per process
with ``warnings.warn`` naming the file; none is ever read into results):

- *damaged* (length, checksum, structure or name hash wrong): deleted, its texts encoded again;
- *foreign* (another encoder's identity, or a dimension other than the directory's): refused
  and left where it is, never deleted (it may be another store's genuine shard; the warning
  says which identity it carries); its texts are encoded again for this encoder. The
  directory's dimension is the one its shards agree on; if its shards disagree, the encoder
  is asked (one text encoded) and the shards of the other dimension(s) are the foreign ones;
- *not a regular file* (a FIFO, a directory named like a shard): refused (it is opened without
  blocking, :func:`regime_core.integrity.read_bytes`) and left alone.

An ``identity.json`` that does not describe its directory's identity (garbage, edited) is
rewritten with a warning; temporaries left by writers that are no longer running are deleted
when a process first opens the directory.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

import numpy as np

from regime_core import config
from regime_core.encoders.base import Encoder
from regime_core.encoders.shards import (
    NAMED,
    SHARD_SUFFIX,
    CorruptShardError,
    ForeignShardError,
    compact_rows,
    decode_shard,
    encode_shard,
    shard_name,
    text_key,
)
from regime_core.encoders.vectors import identity_hash, unnormalized_rows
from regime_core.integrity import (
    append_text,
    atomic_write_bytes,
    make_directory,
    read_bytes,
    remove_stale_temporaries,
)
from regime_core.strict_json import parse_json

MODES: tuple[str, ...] = ("query", "document")
Mode = Literal["query", "document"]


class EmbedOptions(TypedDict, total=False):
    """The keyword options of :meth:`EmbeddingStore.embed` (defaults: those of
    :meth:`EmbeddingStore.embed_with_report`, stated there only)."""

    batch_size: int
    progress: bool


IDENTITY_FILE = "identity.json"
# New texts are flushed to a shard every this many, so an interrupted run keeps its progress.
CHECKPOINT_TEXTS: int = 4096
# ... or as soon as their dense vectors take this many bytes (TF-IDF rows are vocabulary-wide:
# 4,096 of them would be ~570 MB), which bounds what an encode holds before writing.
CHECKPOINT_BYTES: int = 64 << 20
# A gather copies rows out of a shard this many bytes at a time (see EmbeddingStore._gather).
GATHER_BYTES: int = 32 << 20


def _identity_bytes(identity: dict[str, Any]) -> bytes:
    return (json.dumps(identity, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _identity_file_matches(file: Path, identity: dict[str, Any]) -> bool:
    """Whether ``identity.json`` parses to the identity its directory is named after."""
    try:
        stored = parse_json(read_bytes(file).decode("utf-8"), str(file))
    except (OSError, ValueError):
        return False
    return stored == json.loads(_identity_bytes(identity))


@dataclass(frozen=True)
class StoreReport:
    """What one :meth:`EmbeddingStore.embed_with_report` or :meth:`EmbeddingStore.fill` call did."""

    identity_hash: str
    directory: Path
    mode: str
    n_texts: int
    n_unique: int
    n_encoded: int
    n_cached: int


#: a file each store call appends one JSON line to (encoder, texts, cached, encoded), if set: the
#: runner names one per run (``runs/<run_id>/encodes.jsonl``) for ``benchmarks/bench_build.py``
ENCODE_LOG_VARIABLE = "REGIME_ENCODE_LOG"
#: hex digits of each encoded text's key the log keeps (48 bits: a collision among a million
#: texts has odds of about 1 in 500), so that texts encoded by two runs can be counted
ENCODED_KEY_DIGITS = 12


def log_encodes(encoder_name: str, report: StoreReport, encoded: Sequence[bytes]) -> None:
    """Append ``report``'s counts, and the short keys of the ``encoded`` texts, to the file
    ``REGIME_ENCODE_LOG`` names (nothing if unset)."""
    target = os.environ.get(ENCODE_LOG_VARIABLE)
    if not target:
        return
    line = {
        "encoder": encoder_name,
        "identity_hash": report.identity_hash,
        "mode": report.mode,
        "n_texts": report.n_texts,
        "n_unique": report.n_unique,
        "n_cached": report.n_cached,
        "n_encoded": report.n_encoded,
        "encoded_keys": [key.hex()[:ENCODED_KEY_DIGITS] for key in encoded],
    }
    append_text(target, json.dumps(line, sort_keys=True) + "\n")  # a FIFO there never blocks


def plan_batches(missing: dict[bytes, str], batch_size: int) -> list[list[tuple[bytes, str]]]:
    """``missing`` (key → text) cut into encode batches of ``batch_size`` (at least 1, as
    every caller checked), longest texts first (pure).

    Every engine encodes exactly these batches, so their vectors are bit-identical: a batch's
    padding, hence its arithmetic, depends on which texts share it.

    >>> [[t for _, t in b] for b in plan_batches({b"a": "x", b"b": "xyz", b"c": "xy"}, 2)]
    [['xyz', 'xy'], ['x']]
    """
    # Longest first, as sentence-transformers orders one encode call: batches of similar
    # lengths waste little on padding (rows are keyed, so the order is not observable).
    items = sorted(missing.items(), key=lambda item: -len(item[1]))
    return [items[start : start + batch_size] for start in range(0, len(items), batch_size)]


@dataclass
class _Directory:
    """In-memory view of one identity directory: its loaded shards and a key index."""

    shards: dict[str, tuple[list[bytes], Any]]  # dense array or scipy CSR
    index: dict[bytes, tuple[str, int]]
    dim: int | None = None
    refused: dict[str, str] = field(default_factory=dict)  # name -> why (reported once)


class EmbeddingStore:
    """Content-addressed vectors per encoder identity under ``root``.

    >>> store = EmbeddingStore(paths.embeddings_dir())            # doctest: +SKIP
    >>> docs = store.embed(encoder, passages, "document")          # doctest: +SKIP
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._dirs: dict[str, _Directory] = {}

    def directory(self, encoder: Encoder) -> Path:
        """The directory holding ``encoder``'s vectors."""
        return self.root / identity_hash(encoder.identity)

    def embed(
        self, encoder: Encoder, texts: Sequence[str], mode: Mode, **options: Unpack[EmbedOptions]
    ) -> np.ndarray:
        """``(len(texts), d)`` float32 vectors in input order, encoding only what is not stored.

        An empty ``texts`` gives shape ``(0, d)`` when the store knows ``d``, else ``(0, 0)``.
        ``options``: ``batch_size`` and ``progress``, as :meth:`embed_with_report` takes them.
        """
        vectors, _ = self.embed_with_report(encoder, texts, mode, **options)
        return vectors

    def embed_compact(
        self, encoder: Encoder, texts: Sequence[str], mode: Mode, **options: Unpack[EmbedOptions]
    ) -> Any:
        """As :meth:`embed`, but rows the store keeps sparse (a lexical encoder's, e.g. TF-IDF)
        come back as a ``scipy.sparse.csr_matrix`` (float32) holding exactly the values
        :meth:`embed` would densify; a dense encoder's come back dense. Retrieval densifies a
        block of rows at a time (:mod:`regime_core.retrieval.vectors`)."""
        vectors, _ = self.embed_with_report(encoder, texts, mode, compact=True, **options)
        return vectors

    def embed_with_report(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        mode: Mode,
        *,
        batch_size: int = config.ENCODE_BATCH_SIZE,
        progress: bool = False,
        compact: bool = False,
    ) -> tuple[Any, StoreReport]:
        """As :meth:`embed` (:meth:`embed_compact` with ``compact``), also returning counts of
        encoded and cached texts."""
        keys, state, report = self._fill(encoder, texts, mode, batch_size, progress)
        if compact:
            return self._gather_compact(state, keys), report
        return self._gather(state, keys), report

    def fill(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        mode: Mode,
        *,
        batch_size: int = config.ENCODE_BATCH_SIZE,
        progress: bool = False,
    ) -> StoreReport:
        """Encode and store what is missing of ``texts``, without gathering their vectors.

        What :meth:`embed_with_report` does minus the ``(len(texts), d)`` result: a caller that
        only fills the store (``regime embed``) never holds every vector at once.
        """
        return self._fill(encoder, texts, mode, batch_size, progress)[2]

    def _fill(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        mode: str,
        batch_size: int,
        progress: bool,
    ) -> tuple[list[bytes], _Directory, StoreReport]:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        keys, state, missing, report = self._plan(encoder, texts, mode)
        if missing:
            self._encode_missing(
                encoder, report.directory, state, missing, mode, batch_size, progress
            )
        log_encodes(str(getattr(encoder, "name", "")), report, list(missing))
        return keys, state, report

    def missing(self, encoder: Encoder, texts: Sequence[str], mode: Mode) -> dict[bytes, str]:
        """The distinct texts not yet stored for ``encoder`` in ``mode``: ``{key: text}`` in
        first-seen order. An engine encodes them (see :func:`plan_batches`) and hands the
        vectors to :meth:`add`."""
        _, _, missing, report = self._plan(encoder, texts, mode)
        log_encodes(str(getattr(encoder, "name", "")), report, list(missing))
        return missing

    def _plan(
        self, encoder: Encoder, texts: Sequence[str], mode: str
    ) -> tuple[list[bytes], _Directory, dict[bytes, str], StoreReport]:
        """The keys of ``texts``, the directory's state, what is missing and the report of
        encoding exactly that: where the public calls' mode and texts are checked (a caller's
        own code hands them in, and a number among the texts would otherwise fail deep in the
        hashing with no index)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"texts[{i}] is {type(text).__name__}, not a string")
        path = self.directory(encoder)
        state = self._sync(path, encoder)
        keys = [text_key(mode, t) for t in texts]
        missing: dict[bytes, str] = {}  # first seen first
        for key, text in zip(keys, texts, strict=True):
            if key not in state.index:
                missing.setdefault(key, text)
        n_unique = len(set(keys))
        report = StoreReport(
            identity_hash=path.name,
            directory=path,
            mode=mode,
            n_texts=len(keys),
            n_unique=n_unique,
            n_encoded=len(missing),  # encoded by the store's fill, or an engine that adds them
            n_cached=n_unique - len(missing),
        )
        return keys, state, missing, report

    def add(self, encoder: Encoder, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store ``vectors`` (checked as an encoder's output) under ``keys`` as one new shard.

        Keys come from :meth:`missing` (``text_key(mode, text)``). Rows are validated exactly as
        if the store had encoded them itself: shape, finite, L2-normalised, dimension.
        """
        path = self.directory(encoder)
        state = self._sync(path, encoder)
        matrix = self._checked(encoder, vectors, len(keys), state.dim, path)
        if len(keys):
            self._write_shard(path, state, list(keys), [matrix])

    # -- internals ------------------------------------------------------------------------------
    @staticmethod
    def _by_shard(
        state: _Directory, keys: Sequence[bytes]
    ) -> dict[str, tuple[list[int], list[int]]]:
        """``{shard: (positions in keys, rows in the shard)}``: a gather takes each shard's
        rows with one fancy index, not one row at a time."""
        by_shard: dict[str, tuple[list[int], list[int]]] = {}
        for row, key in enumerate(keys):
            shard, at = state.index[key]
            positions, rows = by_shard.setdefault(shard, ([], []))
            positions.append(row)
            rows.append(at)
        return by_shard

    @classmethod
    def _gather(
        cls,
        state: _Directory,
        keys: Sequence[bytes],
        by_shard: dict[str, tuple[list[int], list[int]]] | None = None,
    ) -> np.ndarray:
        out = np.empty((len(keys), state.dim or 0), dtype=np.float32)
        if by_shard is None:
            by_shard = cls._by_shard(state, keys)
        # Shard by shard, in chunks of about GATHER_BYTES, so that the rows picked (and, for a
        # sparse shard, densified) never add a second copy of the result to the peak.
        chunk = max(1, GATHER_BYTES // max(1, 4 * (state.dim or 1)))
        for shard, (positions, rows) in by_shard.items():
            matrix = state.shards[shard][1]
            for start in range(0, len(rows), chunk):
                picked = matrix[rows[start : start + chunk]]
                out[positions[start : start + chunk]] = (
                    picked if isinstance(picked, np.ndarray) else picked.toarray()
                )
        return out

    @classmethod
    def _gather_compact(cls, state: _Directory, keys: Sequence[bytes]) -> Any:
        """CSR rows in ``keys`` order when every shard holding them is sparse, else dense."""
        by_shard = cls._by_shard(state, keys)
        matrices = [state.shards[shard][1] for shard in by_shard]
        if not keys or any(isinstance(m, np.ndarray) for m in matrices):
            return cls._gather(state, keys, by_shard)  # grouped once
        from scipy.sparse import vstack

        stacked = vstack(
            [m[rows] for m, (_, rows) in zip(matrices, by_shard.values(), strict=True)],
            format="csr",
        )
        order = np.concatenate([np.asarray(p, dtype=np.int64) for p, _ in by_shard.values()])
        inverse = np.empty(len(keys), dtype=np.int64)
        inverse[order] = np.arange(len(keys))
        return stacked[inverse].astype(np.float32, copy=False)

    def _sync(self, path: Path, encoder: Encoder) -> _Directory:
        """Load shards written since the last call (by us or another process); drop gone ones.

        Only this encoder's shards are loaded (module docstring: damaged, foreign and
        non-regular files are reported and never read into results).
        """
        identity = encoder.identity
        first_visit = str(path) not in self._dirs
        if first_visit:
            try:  # by the writers' rule: a dangling link or a file in its place is named
                make_directory(path)
            except ValueError as err:
                raise ValueError(f"embedding store: {err}") from None
            remove_stale_temporaries(path)
            identity_file = path / IDENTITY_FILE
            if not identity_file.exists():
                atomic_write_bytes(identity_file, _identity_bytes(identity))
            elif not _identity_file_matches(identity_file, identity):
                warnings.warn(
                    f"embedding store: {identity_file} does not describe this directory's "
                    "encoder identity (damaged or edited); rewriting it",
                    stacklevel=4,
                )
                atomic_write_bytes(identity_file, _identity_bytes(identity))
        state = self._dirs.setdefault(str(path), _Directory(shards={}, index={}))
        on_disk = {p.name: p for p in sorted(path.glob("*" + SHARD_SUFFIX))}
        gone = [name for name in state.shards if name not in on_disk]
        for name in gone:
            del state.shards[name]
        if gone:
            state.index = {k: v for k, v in state.index.items() if v[0] not in gone}
        new = [
            f
            for name, f in on_disk.items()
            if name not in state.shards and name not in state.refused
        ]
        if new:
            self._load_shards(new, state, path.name, encoder)
        return state

    def _load_shards(
        self, files: list[Path], state: _Directory, identity: str, encoder: Encoder
    ) -> None:
        """Validate ``files`` against ``identity`` and the directory's dimension; load the
        genuine ones, report (and delete, when damaged) the others."""
        decoded: list[tuple[Path, list[bytes], Any]] = []
        for file in files:
            try:
                blob = read_bytes(file)
                if NAMED.match(file.name) and file.name != shard_name(blob):
                    raise CorruptShardError("its content does not match the hash in its name")
                keys, vectors = decode_shard(blob, dense=False, identity=identity)
            except FileNotFoundError as err:  # removed by another process since listed, or
                if file.is_symlink():  # a dangling link: named, never silently skipped
                    self._refuse(file, state, err)
                continue
            except CorruptShardError as err:
                self._drop(file, state, f"is corrupt ({err})")
                continue
            except (OSError, ValueError) as err:  # foreign; a FIFO, a directory, no permission
                self._refuse(file, state, err)
                continue
            decoded.append((file, keys, vectors))
        dims = {vectors.shape[1] for _, _, vectors in decoded if vectors.shape[0]}
        dim = state.dim
        if dim is None and len(dims) > 1:  # the encoder says which dimension is its own
            probe = encoder.encode_queries(["dimension"])
            dim = int(self._checked(encoder, probe, 1, None, files[0].parent).shape[1])
        for file, keys, vectors in decoded:
            if dim is not None and vectors.shape[0] and vectors.shape[1] != dim:
                reason = f"vectors of dimension {vectors.shape[1]}, this encoder's are {dim}"
                self._refuse(file, state, ValueError(reason))  # this identity's, another size
                continue
            self._add(state, file.name, keys, vectors)

    @staticmethod
    def _drop(file: Path, state: _Directory, reason: str) -> None:
        """Report and delete a damaged shard; its texts will be encoded again."""
        warnings.warn(
            f"embedding store: shard {file} {reason}; deleting it, its texts will be encoded again",
            stacklevel=5,
        )
        file.unlink(missing_ok=True)
        state.refused.pop(file.name, None)

    def _refuse(self, file: Path, state: _Directory, err: Exception) -> None:
        """Report a file that is not this encoder's shard, once; it is left where it is."""
        where = ""
        if isinstance(err, ForeignShardError) and err.identity != file.parent.name:
            where = f"; it belongs in {self.root / err.identity}"
        warnings.warn(
            f"embedding store: {file} is not a shard of this encoder ({err}){where}; it is not "
            "used, and left in place: move or delete it",
            stacklevel=5,
        )
        state.refused[file.name] = str(err)

    @staticmethod
    def _add(state: _Directory, name: str, keys: list[bytes], vectors: Any) -> None:
        state.shards[name] = (keys, vectors)
        if vectors.shape[0]:
            state.dim = vectors.shape[1]
        for row, key in enumerate(keys):
            state.index.setdefault(key, (name, row))

    def _encode_missing(
        self,
        encoder: Encoder,
        path: Path,
        state: _Directory,
        missing: dict[bytes, str],
        mode: str,
        batch_size: int,
        progress: bool,
    ) -> None:
        from tqdm.auto import tqdm

        encode = encoder.encode_queries if mode == "query" else encoder.encode_documents
        pending_keys: list[bytes] = []
        pending_vectors: list[Any] = []
        pending_bytes = 0
        bar = tqdm(
            total=len(missing),
            disable=not progress,
            desc=f"encoding {mode}s ({getattr(encoder, 'name', 'encoder')})",
            unit="text",
        )
        with bar:
            for batch in plan_batches(missing, batch_size):
                texts = [text for _, text in batch]
                vectors = self._checked(encoder, encode(texts), len(batch), state.dim, path)
                state.dim = vectors.shape[1]
                pending_keys += [key for key, _ in batch]
                pending_vectors.append(compact_rows(vectors))
                pending_bytes += vectors.nbytes
                bar.update(len(batch))
                if len(pending_keys) >= CHECKPOINT_TEXTS or pending_bytes >= CHECKPOINT_BYTES:
                    self._write_shard(path, state, pending_keys, pending_vectors)
                    pending_keys, pending_vectors, pending_bytes = [], [], 0
            if pending_keys:
                self._write_shard(path, state, pending_keys, pending_vectors)

    @staticmethod
    def _checked(
        encoder: Encoder, vectors: Any, n: int, dim: int | None, directory: Path
    ) -> np.ndarray:
        """The encoder's output, checked against the protocol (shape, finite, normalised) and
        against ``dim``, the dimension its store ``directory`` already holds (if any)."""
        name = getattr(encoder, "name", type(encoder).__name__)
        matrix = np.asarray(vectors)
        if matrix.ndim != 2 or matrix.shape[0] != n:
            raise ValueError(f"encoder {name!r} returned shape {matrix.shape} for {n} texts")
        if dim is not None and n and matrix.shape[1] != dim:
            raise ValueError(
                f"encoder {name!r} returned vectors of dimension {matrix.shape[1]}, but its "
                f"store directory {directory} holds {dim}"
            )
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if not np.isfinite(matrix).all():
            raise ValueError(f"encoder {name!r} returned NaN or infinite vectors")
        bad = unnormalized_rows(matrix)
        if bad.size:
            raise ValueError(
                f"encoder {name!r} returned {bad.size} vectors that are not L2-normalised "
                f"(first at batch row {int(bad[0])})"
            )
        return matrix

    def _write_shard(
        self, path: Path, state: _Directory, keys: list[bytes], vectors: list[Any]
    ) -> None:
        if any(not isinstance(v, np.ndarray) for v in vectors):
            from scipy.sparse import csr_matrix, vstack

            matrix: Any = vstack([csr_matrix(v) for v in vectors], format="csr")
            blob = encode_shard(keys, matrix.toarray(), path.name)
        else:
            matrix = np.concatenate(vectors, axis=0)
            blob = encode_shard(keys, matrix, path.name)
        name = shard_name(blob)
        atomic_write_bytes(path / name, blob)
        self._add(state, name, keys, compact_rows(matrix))
