"""Two-hop questions of both regimes over the invented world, as canonical ``Example`` objects.

- **B-dominant** (``native_type="compositional"``): "Where was the director of <Film> born?".
  The hop-2 entity (the director) is named only in the bridge passage's relation sentence, never
  in the question, so the bridge is needed to find the target.
- **Q-dominant** (``native_type="comparison"``, ``parallel=True``): "Which film was released
  first, <A> or <B>?" or "Are <A> and <B> located in the same country?". Both entities are named
  in the question; the first one's passage is stored as the bridge so that every arm can run.

Questions are generated one after another from a per-question random stream, and the regime of
question ``i`` is fixed by a low-discrepancy rule, so the first ``n`` questions of a larger
configuration are the questions of the smaller one (ids, texts, pools and all).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from dataclasses import dataclass

from regime_core.config import SEED, SPLIT, ConfigMixin
from regime_core.data.toyworld import vocabulary as voc
from regime_core.data.toyworld.world import (
    MAX_SENTENCES,
    MIN_SENTENCES,
    Entity,
    World,
    _pick,
    like_style,
    make_style,
)
from regime_core.inputs import Choice
from regime_core.inputs.configs import SHARE, declared, integer
from regime_core.schema import SPLITS, Example, Passage

Q_DOMINANT = "Q-dominant"
B_DOMINANT = "B-dominant"
REGIME_OF_NATIVE_TYPE: dict[str, str] = {"compositional": B_DOMINANT, "comparison": Q_DOMINANT}

RELATION_POSITIONS: tuple[str, ...] = ("random", "first", "second", "last")
MAX_QUESTIONS = 100_000  # ids have six digits; larger worlds are beyond the classroom use
MAX_DISTRACTORS = 50


@dataclass(frozen=True)
class ToyWorldConfig(ConfigMixin):
    """Parameters of a synthetic two-regime dataset. Each field is a knob a teacher can turn.

    Precisely: exactly ``round(b_dominant_share * n_questions)`` questions are B-dominant. Of
    the ``d`` distractors of a pool, ``round(s * d)`` (halves up, ``s`` the
    ``distractor_similarity``) are of the target's kind and state its facts in the target's
    words (same relation types, same templates, same occupation for people; fillers and order
    of their own); ``round(s * that)`` of these also carry a near name of the target ("Mira
    Korrin" for "Tavel Korrin", "Ventrao" for "Ventra"). The others are passages of other kinds.
    """

    seed: int = declared(SEED, integer())
    """the world (geography, names, questions) follows from it"""
    split: str = declared(SPLIT, Choice(SPLITS))
    """dev or train: they share the geography, not the questions"""
    n_questions: int = declared(200, integer(1, MAX_QUESTIONS))
    """questions in the world, from 1 to 100,000"""
    b_dominant_share: float = declared(0.5, SHARE)
    """share of compositional (B-dominant) questions; the rest are comparison or yes/no questions
    (Q-dominant)
    """
    distractors_per_question: int = declared(8, integer(0, MAX_DISTRACTORS))
    """passages added to the two gold ones in each pool"""
    distractor_similarity: float = declared(0.5, SHARE)
    """from 0 to 1: the share of distractors stating the target's kind of facts in its words, and
    the share of those also carrying a near name of the target
    """
    relation_sentence_position: str = declared("random", Choice(RELATION_POSITIONS))
    """where the relation sentence sits in the bridge: first, second, last or random"""
    min_sentences: int = declared(3, integer(MIN_SENTENCES, MAX_SENTENCES))
    """the fewest sentences a passage has"""
    max_sentences: int = declared(6, integer(MIN_SENTENCES, MAX_SENTENCES))
    """the most sentences a passage has"""

    def validate(self) -> None:
        if self.max_sentences < self.min_sentences:
            raise ValueError(
                f"ToyWorldConfig: field 'max_sentences' is {self.max_sentences}, below "
                f"min_sentences ({self.min_sentences})"
            )


# --- question templates ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Compositional:
    """bridge --relation--> hop-2 entity, whose ``answer_attr`` answers the question."""

    bridge_kind: str
    relation: str  # fact of the bridge kind; its sentence is B_rel
    link_attr: str  # the bridge attribute holding the hop-2 entity's name
    hop2_kind: str
    answer_attr: str
    questions: tuple[str, ...]
    hop2_occupation: str | None = None


@dataclass(frozen=True)
class _Comparison:
    """Two entities of one kind compared on ``attr`` (stated in the ``relation`` sentence)."""

    kind: str
    relation: str
    attr: str
    rule: str  # "earlier": the entity with the smaller attr; "same"/"both": yes or no
    question: str


COMPOSITIONAL: tuple[_Compositional, ...] = (
    _Compositional(
        "film", "directed_by", "director", "person", "city",
        ("Where was the director of {bridge} born?",
         "In which city was the director of {bridge} born?"),
        hop2_occupation="film director",
    ),
    _Compositional(
        "film", "directed_by", "director", "person", "year",
        ("In what year was the director of {bridge} born?",),
        hop2_occupation="film director",
    ),
    _Compositional(
        "company", "founded_by", "founder", "person", "city",
        ("Where was the founder of {bridge} born?",),
        hop2_occupation="entrepreneur",
    ),
    _Compositional(
        "band", "lead_singer", "singer", "person", "year",
        ("When was the lead singer of {bridge} born?",),
        hop2_occupation="singer",
    ),
    _Compositional(
        "band", "formed_in", "city", "city", "country",
        ("In which country is the city where {bridge} were formed?",),
    ),
    _Compositional(
        "company", "headquartered_in", "city", "city", "country",
        ("In which country is the city where {bridge} is headquartered?",),
    ),
    _Compositional(
        "person", "born", "city", "city", "country",
        ("In which country is the city where {bridge} was born?",),
    ),
    _Compositional(
        "city", "located_in", "country", "country", "capital",
        ("What is the capital of the country where {bridge} is located?",),
    ),
)  # fmt: skip

COMPARISONS: tuple[_Comparison, ...] = (
    _Comparison(
        "film", "released", "year", "earlier", "Which film was released first, {a} or {b}?"
    ),
    _Comparison("person", "born", "year", "earlier", "Who was born first, {a} or {b}?"),
    _Comparison(
        "band", "formed_in", "year", "earlier", "Which band was formed earlier, {a} or {b}?"
    ),
    _Comparison(
        "company", "founded_by", "year", "earlier", "Which company was founded first, {a} or {b}?"
    ),
    _Comparison(
        "city", "located_in", "country", "same", "Are {a} and {b} located in the same country?"
    ),
    _Comparison("band", "formed_in", "city", "same", "Were {a} and {b} formed in the same city?"),
    _Comparison("person", "lead", "occupation", "both", "Are {a} and {b} both {attr}s?"),
)


# --- public API -----------------------------------------------------------------------------
def true_regime(example: Example) -> str:
    """The regime of a toyworld question by construction: ``"B-dominant"`` or ``"Q-dominant"``.

    Compositional questions never name the hop-2 entity (B-dominant); comparison and yes/no
    questions name both entities (Q-dominant).
    """
    if example.dataset != "toyworld":
        raise ValueError(
            f"example {example.id}: true_regime is known by construction only for toyworld "
            f"examples, this one is from {example.dataset!r}"
        )
    return REGIME_OF_NATIVE_TYPE[example.native_type]


def is_b_dominant_slot(index: int, share: float) -> bool:
    """Whether question ``index`` is B-dominant: a low-discrepancy rule.

    Question ``i`` is B-dominant when ``floor((i+1)s + 1/2) > floor(i s + 1/2)``, so every prefix
    of ``n`` questions holds exactly ``floor(n s + 1/2)`` B-dominant ones (``round`` with halves
    up):

    >>> [is_b_dominant_slot(i, 0.5) for i in range(4)]
    [True, False, True, False]
    >>> sum(is_b_dominant_slot(i, 0.3) for i in range(10))
    3
    """
    return math.floor((index + 1) * share + 0.5) > math.floor(index * share + 0.5)


def generate(config: ToyWorldConfig) -> list[Example]:
    """The questions of ``config``, sorted by id (``toy-dev-000000``, ...). Pure and seeded."""
    world = World(config.seed, config.min_sentences, config.max_sentences)
    return [_question(world, config, i) for i in range(config.n_questions)]


def load_examples(
    *, split: str | None = None, config: ToyWorldConfig | None = None
) -> list[Example]:
    """The toyworld examples of ``config`` (default: ``ToyWorldConfig()``), ``split`` overriding
    its split. Cached in memory per configuration, so notebooks may call it freely."""
    config = config if config is not None else ToyWorldConfig()
    if split is not None:
        config = dataclasses.replace(config, split=split)
    return list(_cached(config))


@functools.lru_cache(maxsize=8)
def _cached(config: ToyWorldConfig) -> tuple[Example, ...]:
    return tuple(generate(config))


# --- one question ---------------------------------------------------------------------------
def _question(world: World, config: ToyWorldConfig, index: int) -> Example:
    rng = random.Random(f"toyworld:{config.seed}:{config.split}:{index}")
    qid = f"toy-{config.split}-{index:06d}"
    if is_b_dominant_slot(index, config.b_dominant_share):
        return _compositional(world, config, rng, qid)
    return _comparison(world, config, rng, qid)


def _n_sentences(config: ToyWorldConfig, rng: random.Random) -> int:
    return rng.randint(config.min_sentences, config.max_sentences)


def _plain(
    world: World, config: ToyWorldConfig, rng: random.Random, kind: str, **attrs: str
) -> Entity:
    """An entity of ``kind`` in a fresh style with the lead sentence first."""
    return world.entity(kind, rng, make_style(kind, _n_sentences(config, rng), rng), **attrs)


def _bridge_entity(
    world: World, config: ToyWorldConfig, rng: random.Random, kind: str, relation: str, **kw: str
) -> Entity:
    style = make_style(
        kind,
        _n_sentences(config, rng),
        rng,
        relation=relation,
        position=config.relation_sentence_position,
    )
    avoid = [v for k, v in kw.items() if k != "name"]
    return world.entity(kind, rng, style, avoid=avoid, **kw)


def _compositional(world: World, config: ToyWorldConfig, rng: random.Random, qid: str) -> Example:
    template = _pick(rng, COMPOSITIONAL)
    if template.hop2_kind == "person":
        hop2 = _plain(world, config, rng, "person", occupation=template.hop2_occupation or "")
    elif template.hop2_kind == "city":
        hop2 = _pick(rng, world.cities)
    else:
        hop2 = _pick(rng, world.countries)
    bridge = _bridge_entity(
        world,
        config,
        rng,
        template.bridge_kind,
        template.relation,
        **{template.link_attr: hop2.name},
    )
    question = _pick(rng, template.questions).format(bridge=bridge.name)
    answer = hop2.attrs[template.answer_attr]
    return _example(
        world,
        config,
        rng,
        qid,
        native_type="compositional",
        question=question,
        answer=answer,
        bridge=bridge,
        target=hop2,
        relation=template.relation,
    )


def _comparison(world: World, config: ToyWorldConfig, rng: random.Random, qid: str) -> Example:
    template = _pick(rng, COMPARISONS)
    first = _bridge_entity(world, config, rng, template.kind, template.relation)
    value = first.attrs[template.attr]
    overrides: dict[str, str] = {}
    if template.rule == "earlier":
        # distinct values so that exactly one entity is earlier
        other = str(int(value) + _pick(rng, (-1, 1)) * rng.randint(1, 30))
        overrides[template.attr] = other
    elif rng.random() < 0.5:  # yes/no questions: half of them "yes"
        overrides[template.attr] = value
    else:
        overrides[template.attr] = _other_value(world, rng, template.attr, value)
    second = _plain(world, config, rng, template.kind, **overrides)
    question = template.question.format(a=first.name, b=second.name, attr=value)
    if template.rule == "earlier":
        earlier = first if int(value) < int(second.attrs[template.attr]) else second
        answer = earlier.name
    else:
        answer = "yes" if second.attrs[template.attr] == value else "no"
    return _example(
        world,
        config,
        rng,
        qid,
        native_type="comparison",
        question=question,
        answer=answer,
        bridge=first,
        target=second,
        relation=template.relation,
    )


def _other_value(world: World, rng: random.Random, attr: str, value: str) -> str:
    choices: dict[str, list[str]] = {
        "country": [c.name for c in world.countries],
        "city": world.city_names,
        "occupation": list(voc.OCCUPATIONS),
    }
    while True:
        other = _pick(rng, choices[attr])
        if other != value:
            return other


def _distractors(
    world: World, config: ToyWorldConfig, rng: random.Random, bridge: Entity, target: Entity
) -> list[Passage]:
    """``round(s d)`` same-kind distractors worded like the target (``round(s * that)`` of them
    with a near name of the target), the rest of other kinds in their own styles."""
    d, s = config.distractors_per_question, config.distractor_similarity
    n_same = math.floor(s * d + 0.5)  # halves round up, as in is_b_dominant_slot
    n_near = math.floor(s * n_same + 0.5)
    taken = {bridge.passage.pid, target.passage.pid}
    out: list[Passage] = []

    def add(entity: Entity) -> None:
        taken.add(entity.passage.pid)
        out.append(entity.passage)

    same_kind_attrs: dict[str, str] = {}
    if target.kind == "person":  # same occupation: the lead sentence reads alike too
        same_kind_attrs["occupation"] = target.attrs["occupation"]
    for j in range(n_same):
        if j < n_near:
            add(world.near_entity(target, j, rng, **same_kind_attrs))
        else:
            style = like_style(target.kind, target.style, rng)
            add(world.entity(target.kind, rng, style, **same_kind_attrs))
    other_kinds = [k for k in voc.FACTS if k != target.kind]
    for _ in range(d - n_same):
        kind = _pick(rng, other_kinds)
        if kind in ("city", "country"):
            # the shared geography: the same passages recur across pools, as in a corpus
            shared = world.cities if kind == "city" else world.countries
            for _ in range(20):  # rejection sampling: a pool takes few of the shared passages
                entity = _pick(rng, shared)
                if entity.passage.pid not in taken:
                    break
            else:
                entity = _plain(world, config, rng, kind)
            add(entity)
            continue
        add(_plain(world, config, rng, kind))
    return out


def _example(
    world: World,
    config: ToyWorldConfig,
    rng: random.Random,
    qid: str,
    *,
    native_type: str,
    question: str,
    answer: str,
    bridge: Entity,
    target: Entity,
    relation: str,
) -> Example:
    pool = [bridge.passage, target.passage, *_distractors(world, config, rng, bridge, target)]
    rng.shuffle(pool)  # gold passages at random pool positions: no rank ties in their favour
    # bridge and target are two entities' passages of the pool and B_rel the bridge's own
    # sentence, by construction (tests/test_data_toyworld.py validates every example)
    return Example(
        id=qid,
        dataset="toyworld",
        split=config.split,
        native_type=native_type,
        question=question,
        answer=answer,
        answer_aliases=(),
        pool=tuple(pool),
        bridge_pid=bridge.passage.pid,
        target_pid=target.passage.pid,
        gold_pids=(bridge.passage.pid, target.passage.pid),
        hop_order_rule="synthetic",
        parallel=native_type == "comparison",
        hop2_entity=target.name,
        hop2_aliases=(target.passage.title,),
        relation_sentence=bridge.sentence_of(relation),
        relation_source="synthetic",
    )
