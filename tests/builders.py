"""Hand-made examples for tests: one two-hop question, its bridge, its target and a pool."""

from __future__ import annotations

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
