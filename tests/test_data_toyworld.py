"""Tests of the synthetic two-regime world: determinism, schema, regimes by construction, knobs."""

from __future__ import annotations

import dataclasses
import doctest
import hashlib
import json
import math
import os
import re
import subprocess
import sys

import pytest
from helpers import refused

import regime_core.data.toyworld as toyworld
from regime_core.data.prepared import read_example
from regime_core.data.toyworld import (
    B_DOMINANT,
    Q_DOMINANT,
    ToyWorldConfig,
    generate,
    is_b_dominant_slot,
    load_examples,
    true_regime,
)
from regime_core.data.toyworld import generator as generator_module
from regime_core.schema import Example
from regime_core.text import normalize


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole-token phrase, after ``normalize``."""
    return f" {normalize(name)} " in f" {normalize(text, strip_disambiguator=False)} "


def tokens(text: str) -> set[str]:
    return set(normalize(text, strip_disambiguator=False).split())


@pytest.fixture(scope="module")
def examples() -> list[Example]:
    return generate(ToyWorldConfig(seed=3, n_questions=400))


# --- determinism ----------------------------------------------------------------------------
def test_same_seed_gives_identical_dicts() -> None:
    config = ToyWorldConfig(seed=11, n_questions=60)
    assert [e.to_dict() for e in generate(config)] == [e.to_dict() for e in generate(config)]


def test_different_seed_gives_different_questions() -> None:
    a = generate(ToyWorldConfig(seed=1, n_questions=30))
    b = generate(ToyWorldConfig(seed=2, n_questions=30))
    assert [e.question for e in a] != [e.question for e in b]
    assert [e.to_dict() for e in a] != [e.to_dict() for e in b]


def test_output_does_not_depend_on_the_hash_seed() -> None:
    """Set or dict-order leaks would make two interpreters disagree; run two of them."""
    code = (
        "import hashlib, json;"
        "from regime_core.data.toyworld import ToyWorldConfig, generate;"
        "ex = generate(ToyWorldConfig(seed=5, n_questions=40));"
        "print(hashlib.sha256(json.dumps([e.to_dict() for e in ex]).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(out.stdout.strip())
    local = generate(ToyWorldConfig(seed=5, n_questions=40))
    digests.add(hashlib.sha256(json.dumps([e.to_dict() for e in local]).encode()).hexdigest())
    assert len(digests) == 1


def test_smaller_config_is_a_prefix_of_a_larger_one() -> None:
    small = generate(ToyWorldConfig(seed=4, n_questions=25))
    large = generate(ToyWorldConfig(seed=4, n_questions=80))
    assert [e.to_dict() for e in small] == [e.to_dict() for e in large[:25]]


# --- schema ---------------------------------------------------------------------------------
def test_examples_round_trip_and_validate(examples: list[Example]) -> None:
    for ex in examples:
        again = read_example(json.loads(json.dumps(ex.to_dict())), "toy.jsonl, line 1")
        assert again == ex
        ex.validate()
        assert ex.dataset == "toyworld"
        assert ex.split == "dev"
        assert ex.hop_order_rule == "synthetic"
        assert ex.relation_source == "synthetic"
        assert ex.relation_sentence is not None
        assert ex.gold_pids == (ex.bridge_pid, ex.target_pid)
        assert ex.hop2_aliases == (ex.target.title,)
        pids = [p.pid for p in ex.pool]
        assert len(pids) == len(set(pids)) == 2 + ToyWorldConfig().distractors_per_question
        for passage in ex.pool:
            assert ToyWorldConfig().min_sentences <= len(passage.sentences)
            assert len(passage.sentences) <= ToyWorldConfig().max_sentences


def test_ids_are_sorted_unique_and_formatted(examples: list[Example]) -> None:
    ids = [e.id for e in examples]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"toy-dev-\d{6}", i) for i in ids)


def test_no_article_disagreement(examples: list[Example]) -> None:
    texts = [s for e in examples for p in e.pool for s in p.sentences]
    assert not [s for s in texts if re.search(r"\ba [aeiou]", s)]


# --- regimes by construction ----------------------------------------------------------------
def test_b_dominant_questions_hide_the_hop2_entity(examples: list[Example]) -> None:
    b_dominant = [e for e in examples if true_regime(e) == B_DOMINANT]
    assert len(b_dominant) == round(0.5 * len(examples))
    for ex in b_dominant:
        assert ex.native_type == "compositional"
        assert not ex.parallel
        assert not mentions(ex.question, ex.hop2_entity), ex.id
        assert mentions(ex.question, ex.bridge.title), ex.id
        assert ex.b_rel is not None and mentions(ex.b_rel, ex.hop2_entity), ex.id
        # The relation sentence is the bridge's only mention: knockout removes the link.
        others = [s for i, s in enumerate(ex.bridge.sentences) if i != ex.relation_sentence]
        assert not any(mentions(s, ex.hop2_entity) for s in others), ex.id
        assert ex.target.title == ex.hop2_entity
        # The answer is a fact of the target passage.
        assert mentions(ex.target.text, ex.answer), ex.id


def test_q_dominant_questions_name_both_entities(examples: list[Example]) -> None:
    q_dominant = [e for e in examples if true_regime(e) == Q_DOMINANT]
    assert q_dominant
    answers = set()
    for ex in q_dominant:
        assert ex.native_type == "comparison"
        assert ex.parallel
        assert mentions(ex.question, ex.hop2_entity), ex.id
        assert mentions(ex.question, ex.bridge.title), ex.id
        assert ex.answer in {"yes", "no", ex.bridge.title, ex.hop2_entity}, ex.id
        answers.add(ex.answer if ex.answer in ("yes", "no") else "entity")
    assert answers == {"yes", "no", "entity"}


def test_every_question_template_occurs(examples: list[Example]) -> None:
    templates = [t for c in toyworld.COMPOSITIONAL for t in c.questions]
    templates += [c.question for c in toyworld.COMPARISONS]
    patterns = [re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t))) for t in templates]
    for pattern in patterns:
        assert any(pattern.fullmatch(ex.question) for ex in examples), pattern.pattern
    # and every question comes from one of them
    assert all(any(p.fullmatch(ex.question) for p in patterns) for ex in examples)


@pytest.mark.parametrize("share", [0.0, 0.1, 0.5, 0.77, 1.0])
def test_b_dominant_share_is_exact_in_every_prefix(share: float) -> None:
    exs = generate(
        ToyWorldConfig(n_questions=40, b_dominant_share=share, distractors_per_question=2)
    )
    regimes = [true_regime(e) for e in exs]
    for n in (1, 7, 40):
        assert regimes[:n].count(B_DOMINANT) == math.floor(n * share + 0.5)


def test_true_regime_rejects_other_datasets(examples: list[Example]) -> None:
    with refused(ValueError, names=("hotpotqa",)):
        true_regime(dataclasses.replace(examples[0], dataset="hotpotqa"))


def test_b_dominant_slot_rule() -> None:
    assert [is_b_dominant_slot(i, 0.5) for i in range(4)] == [True, False, True, False]
    assert not any(is_b_dominant_slot(i, 0.0) for i in range(10))
    assert all(is_b_dominant_slot(i, 1.0) for i in range(10))


# --- knobs ----------------------------------------------------------------------------------
def _is_near(title: str, target_title: str) -> bool:
    """A word in common, or one word the prefix of another ("Ventra" and "Ventrao")."""
    words = tokens(title) - {"of"}
    target = tokens(target_title) - {"of"}
    return any(
        a == b or (min(len(a), len(b)) >= 4 and a[:4] == b[:4]) for a in words for b in target
    )


def _distractor_measures(similarity: float) -> tuple[float, float]:
    """Mean Jaccard token overlap of distractor passages with the target passage, and the share
    of distractors whose title is near the target's title."""
    exs = generate(ToyWorldConfig(seed=9, n_questions=100, distractor_similarity=similarity))
    overlaps, near = [], []
    for ex in exs:
        target = tokens(ex.target.text)
        for p in ex.pool:
            if p.pid in ex.gold_pids:
                continue
            words = tokens(p.text)
            overlaps.append(len(words & target) / len(words | target))
            near.append(_is_near(p.title, ex.target.title))
    return sum(overlaps) / len(overlaps), sum(near) / len(near)


def test_distractor_similarity_raises_overlap_with_the_target() -> None:
    low, mid, high = (_distractor_measures(s) for s in (0.0, 0.5, 1.0))
    assert low[0] + 0.05 < mid[0] < high[0] - 0.05
    assert low[1] < 0.1 < mid[1] < high[1]
    assert high[1] > 0.95  # at similarity 1 every distractor carries a near name


def _lexical_hit_at_1(similarity: float) -> dict[tuple[str, str], float]:
    """hit@1 of the q and union arms (alpha from config) with a TF-IDF cosine fitted on the
    corpus of all pools; the bridge is excluded from the ranking, as in the paper."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from regime_core.config import ALPHA

    exs = generate(ToyWorldConfig(seed=2, n_questions=150, distractor_similarity=similarity))
    corpus = {p.pid: f"{p.title}. {p.text}" for e in exs for p in e.pool}
    vectorizer = TfidfVectorizer().fit(list(corpus.values()))
    hits: dict[tuple[str, str], list[bool]] = {}
    for ex in exs:
        candidates = [p.pid for p in ex.pool if p.pid != ex.bridge_pid]
        docs = vectorizer.transform([corpus[pid] for pid in candidates])
        q, b_rel = vectorizer.transform([ex.question, ex.b_rel or ""]).toarray()
        for arm, query in (("q", q), ("union", q + ALPHA * b_rel)):
            best = candidates[int(np.argmax(docs @ query))]
            hits.setdefault((true_regime(ex), arm), []).append(best == ex.target_pid)
    return {key: sum(v) / len(v) for key, v in hits.items()}


def test_the_two_regimes_show_with_a_lexical_retriever() -> None:
    """The point of the kit: with hard distractors the question alone fails on B-dominant
    questions and the relation sentence rescues it; on Q-dominant ones the question suffices.
    Guards against leaks that let the question find the target (e.g. the target being the
    lexical centre of its near-name cluster)."""
    hit = _lexical_hit_at_1(1.0)
    assert hit[(B_DOMINANT, "q")] < 0.5
    assert hit[(B_DOMINANT, "union")] > 0.9
    assert hit[(Q_DOMINANT, "q")] > 0.75


@pytest.mark.parametrize(("position", "expected"), [("first", 0), ("second", 1), ("last", -1)])
def test_relation_sentence_position(position: str, expected: int) -> None:
    exs = generate(ToyWorldConfig(n_questions=30, relation_sentence_position=position))
    for ex in exs:
        want = expected % len(ex.bridge.sentences)
        assert ex.relation_sentence == want


def test_random_position_varies() -> None:
    exs = generate(ToyWorldConfig(n_questions=60, relation_sentence_position="random"))
    assert len({e.relation_sentence for e in exs}) >= 3


def test_sentence_range_and_distractor_count() -> None:
    config = ToyWorldConfig(
        n_questions=50, min_sentences=5, max_sentences=5, distractors_per_question=0
    )
    for ex in generate(config):
        assert len(ex.pool) == 2
        assert all(len(p.sentences) == 5 for p in ex.pool)


@pytest.mark.parametrize("n", [1, 2, 7, 300])
def test_sizes(n: int) -> None:
    exs = generate(ToyWorldConfig(n_questions=n))
    assert len(exs) == n
    assert len({e.id for e in exs}) == n


@pytest.mark.slow
def test_twenty_thousand_questions() -> None:
    exs = generate(ToyWorldConfig(n_questions=20_000, distractors_per_question=2))
    assert len(exs) == 20_000
    assert len({e.id for e in exs}) == 20_000
    titles = {}
    for ex in exs:
        for p in ex.pool:
            # one title, one passage: the world stays consistent at scale
            assert titles.setdefault(p.title, p.pid) == p.pid
        assert not (true_regime(ex) == B_DOMINANT and mentions(ex.question, ex.hop2_entity))


# --- loading --------------------------------------------------------------------------------
def test_load_examples_defaults_and_split() -> None:
    default = load_examples()
    assert [e.to_dict() for e in default] == [e.to_dict() for e in generate(ToyWorldConfig())]
    small = ToyWorldConfig(n_questions=20)
    train = load_examples(split="train", config=small)
    dev = load_examples(config=small)
    assert all(e.split == "train" and e.id.startswith("toy-train-") for e in train)
    assert {e.question for e in train}.isdisjoint({e.question for e in dev})
    train.clear()  # a caller mutating its list must not touch the cache
    assert len(load_examples(split="train", config=small)) == 20


# --- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_questions", 0),
        ("n_questions", -3),
        ("n_questions", 2.5),
        ("n_questions", True),
        ("n_questions", toyworld.MAX_QUESTIONS + 1),
        ("b_dominant_share", -0.1),
        ("b_dominant_share", 1.5),
        ("b_dominant_share", float("nan")),
        ("b_dominant_share", "0.5"),
        ("distractors_per_question", -1),
        ("distractors_per_question", toyworld.MAX_DISTRACTORS + 1),
        ("distractor_similarity", 1.01),
        ("relation_sentence_position", "middle"),
        ("split", "test"),
        ("seed", -1),
        ("seed", "0"),
        ("min_sentences", toyworld.MIN_SENTENCES - 1),
        ("max_sentences", toyworld.MAX_SENTENCES + 1),
    ],
)
def test_bad_parameters_raise_value_error(field: str, value: object) -> None:
    with refused(ValueError, names=(field,)):
        ToyWorldConfig(**{field: value})  # type: ignore[arg-type]


def test_max_below_min_sentences_is_rejected() -> None:
    with refused(ValueError, names=("max_sentences",)):
        ToyWorldConfig(min_sentences=5, max_sentences=4)


def test_config_hash_names_the_parameters() -> None:
    assert ToyWorldConfig().config_hash() == ToyWorldConfig().config_hash()
    assert ToyWorldConfig().config_hash() != ToyWorldConfig(distractor_similarity=0.9).config_hash()


def test_docstring_examples() -> None:
    for module in (toyworld, generator_module):
        result = doctest.testmod(module)
        assert result.attempted >= 2 and result.failed == 0, module.__name__
