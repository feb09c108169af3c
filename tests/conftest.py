"""Shared fixtures. Real-data tests read REGIME_DATA_DIR; CI sets it and fails if it is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The shared dataset subsets; tests using it are skipped when REGIME_DATA_DIR is unset."""
    env = os.environ.get("REGIME_DATA_DIR")
    if not env:
        if os.environ.get("REGIME_REQUIRE_DATA") == "1":
            raise RuntimeError("REGIME_REQUIRE_DATA=1 but REGIME_DATA_DIR is not set")
        pytest.skip("REGIME_DATA_DIR is not set")
    path = Path(env)
    if not path.is_dir():
        raise RuntimeError(f"REGIME_DATA_DIR={env} is not a directory")
    return path
