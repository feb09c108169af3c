"""The Ray engine of the embed stage: batches of passages mapped over actor workers.

The driver cuts the missing texts into the batches the local engine would encode
(:func:`~regime_core.encoders.store.plan_batches`), one row per batch; Ray Data's
``map_batches`` sends the rows, one at a time, to a fixed pool of :class:`EncodeBatches` actors
(``concurrency`` = the number of workers), each of which loads the model once in its
constructor. Their vectors come back as float32 bytes and the driver writes them into the
content-addressed store (:meth:`~regime_core.encoders.store.EmbeddingStore.add`), a shard every
few thousand texts. Because the batches and torch's intra-op thread count are the local
engine's, the vectors are bit-identical to it on the same kind of CPU (measured: with 1 thread
instead of 2, 24 of 24 MiniLM passage vectors differed by up to 1.3e-7; on a GPU, cuBLAS has its
own rounding, so compare digests between runs of one kind of device).

Without ``address`` a private local cluster is started (``ray.init(num_cpus=...)``) and stopped
afterwards; with one (``host:port`` of a running head node, ``auto``, or ``ray://host:10001``)
the driver joins that cluster and leaves it running. Every node must have this project
installed (same version) and, for hub models, the weights in its Hugging Face cache or internet
access. Ray is an optional extra: ``pip install -e .[scale]``.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from typing import Any

import numpy as np

from regime_core.encoders.base import Encoder
from regime_core.encoders.store import CHECKPOINT_BYTES, CHECKPOINT_TEXTS, Mode, plan_batches

#: Seconds to wait for a TCP connection to ``--address`` before saying it is unreachable
#: (``ray.init`` itself retries for minutes).
CONNECT_TIMEOUT_S: float = 5.0


def import_ray() -> Any:
    """The ``ray`` module, or a ``ValueError`` naming the extra that installs it."""
    try:
        import ray
        import ray.data  # ray without the [data] extra lacks pyarrow
    except ImportError as err:
        raise ValueError(
            f"--engine ray needs Ray Data, which is not installed ({err}): pip install -e .[scale]"
        ) from err
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port`` or ``ray://host:port``; None for ``auto`` (pure).

    >>> _host_port("ray://10.0.0.5:10001"), _host_port("head:6379"), _host_port("auto")
    (('10.0.0.5', 10001), ('head', 6379), None)
    """
    if address in ("auto", "local"):
        return None
    rest = address.split("://", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(
            f"--address {address!r}: expected host:port (a head node, e.g. 10.0.0.5:6379), "
            "ray://host:port (Ray Client) or auto"
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ``ValueError`` unless a TCP connection to ``address`` opens within ``timeout``."""
    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            return
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ValueError(
            f"--address {address}: cannot reach a Ray cluster there ({reason}). Start one with "
            "`ray start --head` on the head node and pass the address it prints, or omit "
            "--address to start a local cluster"
        ) from err


class EncodeBatches:
    """A Ray Data actor: loads ``encoder`` once, then encodes the batches it is handed.

    Input rows: ``batch`` (id), ``mode`` (``query``/``document``), ``texts`` (a JSON list).
    Output rows: ``batch``, ``n``, ``dim`` and ``blob`` (the float32 vectors' bytes).
    """

    def __init__(self, encoder: Encoder, threads: int | None = None) -> None:
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        self.encoder = encoder
        load = getattr(encoder, "load", None)
        if callable(load):
            load()

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        ids, ns, dims, blobs = [], [], [], []
        for batch_id, mode, texts_json in zip(
            batch["batch"], batch["mode"], batch["texts"], strict=True
        ):
            texts = json.loads(texts_json)
            encode = (
                self.encoder.encode_queries if mode == "query" else self.encoder.encode_documents
            )
            vectors = np.ascontiguousarray(encode(texts), dtype="<f4")
            ids.append(int(batch_id))
            ns.append(vectors.shape[0])
            dims.append(vectors.shape[1])
            blobs.append(vectors.tobytes())
        return {
            "batch": np.asarray(ids, dtype=np.int64),
            "n": np.asarray(ns, dtype=np.int64),
            "dim": np.asarray(dims, dtype=np.int64),
            "blob": np.asarray(blobs, dtype=object),
        }


def _local_threads() -> int:
    """The intra-op thread count the local engine's torch uses in this process."""
    import torch

    return torch.get_num_threads()


def _connect(ray: Any, address: str | None, num_workers: int | None) -> bool:
    """Join or start a cluster; True when this call started it (and must stop it)."""
    if ray.is_initialized():
        return False
    common = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    if address is None:
        ray.init(num_cpus=num_workers or os.cpu_count() or 1, **common)
        return True
    check_reachable(address)
    try:
        ray.init(address=address, **common)
    except (ConnectionError, RuntimeError) as err:
        raise ValueError(f"--address {address}: could not join the Ray cluster ({err})") from err
    return True


def encode_with_ray(
    store: Any,
    encoder: Encoder,
    missing_by_mode: Mapping[Mode, Mapping[bytes, str]],
    *,
    address: str | None = None,
    num_workers: int | None = None,
    device: str | None = None,
    batch_size: int,
    progress: bool = False,
) -> int:
    """Encode ``missing_by_mode`` (mode → {key: text}) on Ray and add the vectors to ``store``.

    Returns the number of actors used. A Ray session already open in this process (a test's,
    or the user's ``ray.init``) is used as it is and left open.
    """
    ray = import_ray()
    started = _connect(ray, address, num_workers)
    try:
        resources = ray.cluster_resources()
        gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
        if device == "cuda" and gpus < 1:
            raise ValueError(
                f"--device cuda: the Ray cluster has no GPU (its resources: {int(cpus)} CPU, 0 GPU)"
            )
        if device == "cuda":
            workers = num_workers or gpus
            per_actor: dict[str, Any] = {"num_gpus": 1, "num_cpus": 1}
            threads = None
        else:
            workers = num_workers or max(1, cpus)
            per_actor = {"num_cpus": max(1, cpus // workers)}
            # torch's CPU kernels round differently with another intra-op thread count (~1e-7),
            # so every actor uses the local engine's count: the vectors are then bit-identical
            # to it, at the price of oversubscribing when workers × threads > cores.
            threads = _local_threads()
        plan: list[tuple[str, list[bytes]]] = []
        rows: list[dict[str, Any]] = []
        for mode, missing in missing_by_mode.items():
            for batch in plan_batches(dict(missing), batch_size):
                rows.append(
                    {
                        "batch": len(plan),
                        "mode": mode,
                        "texts": json.dumps([text for _, text in batch], ensure_ascii=False),
                    }
                )
                plan.append((mode, [key for key, _ in batch]))
        if not rows:
            return workers
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = progress
        dataset = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * workers))
        vectors = dataset.map_batches(
            EncodeBatches,
            fn_constructor_kwargs={"encoder": encoder, "threads": threads},
            batch_size=1,
            concurrency=workers,
            **per_actor,
        )
        _write(store, encoder, plan, vectors.iter_rows())
        return workers
    finally:
        if started:
            ray.shutdown()


def _write(store: Any, encoder: Encoder, plan: list[tuple[str, list[bytes]]], rows: Any) -> None:
    """Add the actors' vectors to the store, a shard per few thousand texts and per mode."""
    pending: dict[str, tuple[list[bytes], list[np.ndarray]]] = {}
    sizes: dict[str, int] = {}
    for row in rows:
        mode, keys = plan[int(row["batch"])]
        matrix = np.frombuffer(row["blob"], dtype="<f4").reshape(int(row["n"]), int(row["dim"]))
        held_keys, held = pending.setdefault(mode, ([], []))
        held_keys += keys
        held.append(matrix)
        sizes[mode] = sizes.get(mode, 0) + matrix.nbytes
        if len(held_keys) >= CHECKPOINT_TEXTS or sizes[mode] >= CHECKPOINT_BYTES:
            store.add(encoder, held_keys, np.concatenate(held))
            pending[mode], sizes[mode] = ([], []), 0
    for held_keys, held in pending.values():
        if held_keys:
            store.add(encoder, held_keys, np.concatenate(held))
