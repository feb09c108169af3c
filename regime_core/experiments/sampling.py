"""Seeded sampling of a dataset's examples: a function of (seed, dataset, ids) only.

A run draws its sample from the ids of a split, sorted first, so the sample depends on the id
*set*, the seed and the dataset's name, never on file order; the record keeps the sample's size
and the hash of its ids (:func:`sample_numbers`). Questions whose own pool is too small for hit@k
to mean anything (:meth:`~regime_core.retrieval.settings.RetrievalSettings.is_tiny_pool`) can be
left out before sampling, and are counted.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from regime_core.data.item_sets import ALL, filter_item_set
from regime_core.retrieval.settings import RetrievalSettings
from regime_core.schema import Example, Passage

if TYPE_CHECKING:
    from regime_core.router.training import SampleLike


def ids_hash(ids: Sequence[str]) -> str:
    """sha256 (16 hex digits) of the sorted id list: names a sample independent of its order.

    >>> ids_hash(["b", "a"]) == ids_hash(["a", "b"])
    True
    """
    payload = "\n".join(sorted(ids)).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()[:16]


def sample_ids(ids: Sequence[str], size: int | None, *, seed: int, stream: str = "") -> list[str]:
    """A seeded sample of ``size`` ids without replacement, returned sorted; pure.

    The ids are sorted first, so the sample depends on the id *set*, the seed and ``stream``
    (the dataset name, so two datasets get independent draws) and not on file order.
    ``size=None`` or ``size >= len(ids)`` returns every id.

    >>> sample_ids(["c", "a", "b"], 2, seed=0) == sample_ids(["b", "c", "a"], 2, seed=0)
    True
    """
    ordered = sorted(ids)
    if len(set(ordered)) != len(ordered):
        raise ValueError("sample_ids: the ids are not unique; check the prepared examples")
    if size is None or size >= len(ordered):
        return ordered
    rng = np.random.default_rng([seed, zlib.crc32(stream.encode("utf-8"))])
    chosen = rng.choice(len(ordered), size=size, replace=False)
    return [ordered[i] for i in sorted(chosen)]


@dataclass(frozen=True)
class Sample:
    """The examples of one dataset a run uses, and how they were drawn."""

    dataset: str
    split: str
    n_available: int  # the split's questions, before any is left out
    examples: tuple[Example, ...]  # the sample, sorted by id
    ids_hash: str  # names the sample (:func:`ids_hash`)
    corpus: tuple[Passage, ...]  # every passage of the split (fits TF-IDF; corpus-mode pool)
    n_tiny_pool: int = 0  # items of the split left out before sampling: pool <= k candidates
    item_set: str = ALL  # the item set read (regime_core.data.item_sets)
    #: items of the split the item set left out before sampling, per first failing clause
    item_set_removed: Mapping[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.examples)


def sample_numbers(sample: SampleLike) -> dict[str, Any]:
    """What a record keeps of a sample: sizes, the tiny-pool exclusions and the ids' hash; a
    sample of another item set than ``all`` adds its name and its exclusions per clause."""
    out: dict[str, Any] = {
        "n_available": sample.n_available,
        "n": sample.n,
        "n_tiny_pool": sample.n_tiny_pool,
        "ids_hash": sample.ids_hash,
    }
    item_set = getattr(sample, "item_set", ALL)
    if item_set != ALL:
        removed = getattr(sample, "item_set_removed", {})
        out["item_set"] = item_set
        out["n_item_set_removed"] = int(sum(removed.values()))
        out["item_set_removed"] = {k: int(v) for k, v in removed.items()}
    return out


def sample_examples(
    examples: Sequence[Example],
    size: int | None,
    *,
    seed: int,
    dataset: str,
    split: str,
    settings: RetrievalSettings | None = None,
    item_set: str = ALL,
) -> Sample:
    """Seeded sample (see :func:`sample_ids`) of the ``split`` examples of ``dataset``.

    Under ``settings`` whose ``tiny_pools`` is ``"exclude"``, the items whose pool offers at
    most ``k`` hop-2 candidates (:meth:`RetrievalSettings.is_tiny_pool`) are left out *before*
    sampling and counted in ``Sample.n_tiny_pool``; without ``settings`` (the teaching kit)
    every item is eligible. Before that, ``item_set`` (:mod:`regime_core.data.item_sets`) leaves
    out the items it does not keep, counted per clause in ``Sample.item_set_removed``
    (``n_available`` stays the split's count). The corpus (TF-IDF's vocabulary, the corpus-mode
    pool) is always the whole split's: an item set chooses questions, never passages.
    """
    from regime_core.data import corpus_passages

    pool_items = [ex for ex in examples if ex.dataset == dataset and ex.split == split]
    if not pool_items:
        raise ValueError(
            f"no {split} examples of {dataset!r}; run `regime data prepare` or check the split"
        )
    chosen_items = filter_item_set(pool_items, item_set)
    if not chosen_items.kept:
        raise ValueError(
            f"the item set {item_set!r} keeps none of the {len(pool_items)} {split} examples of "
            f"{dataset!r} ({chosen_items.removed}); use item_set='all'"
        )
    eligible = list(chosen_items.kept)
    if settings is not None and settings.tiny_pools == "exclude":
        eligible = [ex for ex in eligible if not settings.is_tiny_pool(ex)]
    if not eligible:
        k = settings.k if settings is not None else None
        raise ValueError(
            f"every {split} example of {dataset!r} has a pool of at most {k} candidates; "
            "use tiny_pools='keep' or a smaller k"
        )
    chosen = set(sample_ids([ex.id for ex in eligible], size, seed=seed, stream=dataset))
    picked = tuple(sorted((ex for ex in eligible if ex.id in chosen), key=lambda ex: ex.id))
    return Sample(
        dataset=dataset,
        split=split,
        n_available=len(pool_items),
        examples=picked,
        ids_hash=ids_hash([ex.id for ex in picked]),
        corpus=tuple(corpus_passages(pool_items)),
        n_tiny_pool=chosen_items.n_kept - len(eligible),
        item_set=item_set,
        item_set_removed={k: v for k, v in chosen_items.removed.items() if item_set != ALL},
    )
