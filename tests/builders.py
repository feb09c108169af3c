"""Hand-made examples for tests: one two-hop question, its bridge, its target and a pool."""

from __future__ import annotations

from pathlib import Path

from regime_core.data.prepared import (
    MANIFEST_NAME,
    new_manifest,
    read_manifest_if_compatible,
    write_manifest,
)
from regime_core.integrity import sha256_hex
from regime_core.schema import Example, Passage


def two_hop_example(
    question: str,
    bridge: Passage,
    target: Passage,
    *others: Passage,
    hop2_entity: str,
    hop2_aliases: tuple[str, ...] = (),
    relation_sentence: int | None = None,
    relation_source: str = "none",
    parallel: bool = False,
    native_type: str = "bridge",
    dataset: str = "toyworld",
    example_id: str = "ex",
    answer: str = "answer",
) -> Example:
    """A validated example whose pool is the bridge, the target and ``others``, in that order."""
    example = Example(
        id=example_id,
        dataset=dataset,
        split="dev",
        native_type=native_type,
        question=question,
        answer=answer,
        answer_aliases=(),
        pool=(bridge, target, *others),
        bridge_pid=bridge.pid,
        target_pid=target.pid,
        gold_pids=(bridge.pid, target.pid),
        hop_order_rule="parallel" if parallel else "synthetic",
        parallel=parallel,
        hop2_entity=hop2_entity,
        hop2_aliases=hop2_aliases,
        relation_sentence=relation_sentence,
        relation_source=relation_source,
    )
    example.validate()
    return example


def numbered_example(i: int) -> Example:
    """The ``i``-th of a family of distinct two-hop examples (Bridge i was founded by Person i,
    born in Town i; one distractor), for tests that need a few of them as a prepared dataset."""
    bridge = Passage.make(f"Bridge {i}", [f"Bridge {i} was founded by Person{i}.", "It is old."])
    target = Passage.make(f"Person{i}", [f"Person{i} was born in Town{i}, a river port."])
    distractor = Passage.make(f"Other {i}", [f"Nothing to see here at all, {i} times over."])
    return two_hop_example(
        f"Where was the founder of Bridge {i} born?",
        bridge,
        target,
        distractor,
        hop2_entity=f"Person{i}",
        relation_sentence=0,
        relation_source="synthetic",
        example_id=f"t{i}",
        answer=f"Town{i}",
    )


def write_prepared_examples(out_dir: Path, dataset: str, payload: bytes) -> Path:
    """Write ``<dataset>.jsonl`` as given and record its sha256 in the manifest (examples built
    by hand; ``prepare`` is the package's writer). The manifest keeps its other entries."""
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / MANIFEST_NAME
    manifest = read_manifest_if_compatible(manifest_path) or new_manifest()
    target = out_dir / f"{dataset}.jsonl"
    target.write_bytes(payload)
    entry = manifest["datasets"].setdefault(dataset, {})
    entry["examples_file"] = {"path": target.name, "sha256": sha256_hex(payload)}
    write_manifest(manifest_path, manifest)
    return target
