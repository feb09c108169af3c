"""The canonical two-hop example: the one schema every stage after `prepare` reads.

Every reader (HotpotQA, 2WikiMultiHopQA, MuSiQue, the synthetic ``toyworld``) emits
:class:`Example` objects; retrieval, the regime predicates, the router and the notebooks read
nothing else. Examples serialise to one JSON object per line (``to_dict``), read back by
:func:`regime_core.data.prepared.read_example` through their declaration
(:mod:`regime_core.inputs.prepared_example`), so that a hand-edited or truncated file fails
with the record and field named.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from regime_core import config

DATASETS: tuple[str, ...] = (*config.DATASETS, "toyworld")
SPLITS: tuple[str, ...] = ("dev", "train")

HOP_ORDER_RULES: dict[str, str] = {
    "musique_decomposition": "MuSiQue: step i's gold paragraph is "
    "paragraphs[paragraph_support_idx]",
    "2wiki_evidence_chain": "2Wiki: hop 1 is the paragraph of evidences[0][0], hop 2 of "
    "evidences[1][0] (the bridge entity)",
    "hotpot_mention": "HotpotQA bridge: hop 1 is the supporting paragraph whose text mentions "
    "the other's title",
    "hotpot_answer_tiebreak": "HotpotQA bridge, mention rule ambiguous (neither or both mention "
    "the other): the paragraph containing the answer is hop 2",
    "hotpot_supporting_order": "HotpotQA bridge, mention and answer rules both ambiguous: the "
    "order of supporting_facts",
    "parallel": "comparison question: both entities are named, no hop order exists; the first "
    "supporting paragraph is stored as 'bridge' only so that every arm can run",
    "synthetic": "toyworld: the order is known by construction",
    "given": "a file of one's own (regime-twohop/1): its line names the bridge and the target",
}
"""how a question's bridge (hop 1) and target (hop 2) passages were put in order; every example
records its rule
"""

RELATION_SOURCES: tuple[str, ...] = (
    "supporting_facts",
    "supporting_facts_first",
    "entity_mention",
    "synthetic",
    "given",
    "none",
)
"""where an example's gold relation sentence B_rel came from

- supporting_facts: a supporting sentence of the bridge that mentions the hop-2 entity
- supporting_facts_first: supporting sentences exist, none mentions it: the first one
- entity_mention: no sentence labels: the first bridge sentence that mentions it
- synthetic: toy world: known by construction
- given: a file of one's own (regime-twohop/1) marks it, naming no other source
- none: no sentence could be identified
"""


def passage_id(title: str, text: str) -> str:
    """Stable, content-addressed passage id: the same passage gets the same id in every file.

    Whitespace is collapsed first, so a paragraph stored as a sentence list (HotpotQA original)
    and as one string (IRCoT) gets one id.

    >>> a = passage_id("Paris", "Paris is  the capital.")
    >>> a == passage_id("Paris", "Paris is the capital.")
    True
    """
    canonical = title.strip() + "\n" + " ".join(text.split())
    return "p" + hashlib.sha1(canonical.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Passage:
    """A Wikipedia-like paragraph: a title and its sentences (stripped of edge whitespace)."""

    pid: str
    title: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    @classmethod
    def make(cls, title: str, sentences: list[str] | tuple[str, ...]) -> Passage:
        clean = tuple(s.strip() for s in sentences if s.strip())
        return cls(pid=passage_id(title, " ".join(clean)), title=title.strip(), sentences=clean)

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "title": self.title, "sentences": list(self.sentences)}


@dataclass(frozen=True)
class Example:
    """One two-hop question in canonical form.

    ``bridge_pid`` is hop 1 (the passage that names the linking entity) and ``target_pid`` hop 2
    (the passage the paper's R@k is about). ``hop2_entity`` is the entity that links the hops as
    it is *mentioned* (MuSiQue: the answer of decomposition step 1; 2Wiki: the object of the first
    evidence triple; HotpotQA: the target's title), with ``hop2_aliases`` holding the target
    title and other surface forms. ``relation_sentence`` indexes the bridge's sentences (gold
    ``B_rel``) when the data gives or implies it.
    """

    id: str
    dataset: str
    split: str
    native_type: str
    question: str
    answer: str
    answer_aliases: tuple[str, ...]
    pool: tuple[Passage, ...]
    bridge_pid: str
    target_pid: str
    gold_pids: tuple[str, ...]
    hop_order_rule: str
    parallel: bool
    hop2_entity: str
    hop2_aliases: tuple[str, ...]
    relation_sentence: int | None
    relation_source: str
    source_files: tuple[str, ...] = field(default=())

    def passage(self, pid: str) -> Passage:
        for p in self.pool:
            if p.pid == pid:
                return p
        raise KeyError(f"example {self.id}: no passage {pid} in its pool")

    @property
    def bridge(self) -> Passage:
        return self.passage(self.bridge_pid)

    @property
    def target(self) -> Passage:
        return self.passage(self.target_pid)

    @property
    def b_rel(self) -> str | None:
        """The gold relation sentence of the bridge, or None where the data gives none."""
        if self.relation_sentence is None:
            return None
        return self.bridge.sentences[self.relation_sentence]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pool"] = [p.to_dict() for p in self.pool]
        for key in ("answer_aliases", "gold_pids", "hop2_aliases", "source_files"):
            d[key] = list(d[key])
        return d

    def validate(self, where: str = "example") -> None:
        """Check the cross-field invariants; raise ValueError naming the field."""
        pids = [p.pid for p in self.pool]
        for name in ("bridge_pid", "target_pid"):
            if getattr(self, name) not in pids:
                raise ValueError(f"{where}: field {name!r} is not the pid of a pool passage")
        if self.bridge_pid == self.target_pid:
            raise ValueError(f"{where}: bridge_pid and target_pid are the same passage")
        for pid in self.gold_pids:
            if pid not in pids:
                raise ValueError(f"{where}: field 'gold_pids' names {pid}, absent from the pool")
        if self.relation_sentence is not None:
            n = len(self.bridge.sentences)
            if not (0 <= self.relation_sentence < n):
                raise ValueError(
                    f"{where}: field 'relation_sentence' is {self.relation_sentence}, but the "
                    f"bridge has {n} sentences"
                )
