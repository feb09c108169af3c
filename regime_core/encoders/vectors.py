"""Small array kernels shared by the encoders and the store (pure: arrays in, arrays out)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

# A row whose norm is this far from 1 is not L2-normalised (fp32 rounding stays far below it).
NORM_TOLERANCE: float = 1e-3


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit Euclidean norm, as float32; all-zero rows stay zero.

    ``x̂_i = x_i / ‖x_i‖₂`` (computed in float32, so the result does not depend on the input
    dtype's extra precision).

    >>> l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    m = np.asarray(matrix, dtype=np.float32)  # (n, d): every caller's rows are vectors
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, np.float32(1.0)).astype(np.float32)
    return np.ascontiguousarray(m / safe, dtype=np.float32)


def unnormalized_rows(matrix: np.ndarray, tolerance: float = NORM_TOLERANCE) -> np.ndarray:
    """Indices of rows that are neither unit-norm (within ``tolerance``) nor all zero."""
    norms = np.linalg.norm(np.asarray(matrix, dtype=np.float64), axis=1)
    bad = (np.abs(norms - 1.0) > tolerance) & (norms != 0.0)
    return np.flatnonzero(bad)


def identity_hash(identity: dict[str, Any], length: int = 16) -> str:
    """A stable hash of an encoder identity: sha256 of its canonical (sorted-key) JSON.

    >>> identity_hash({"model": "m", "n": 1}) == identity_hash({"n": 1, "model": "m"})
    True
    """
    payload = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:length]
