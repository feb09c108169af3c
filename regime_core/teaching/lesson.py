"""The teaching notebooks' helpers: their parameters, the real-data sample shown next to the toy
world, the exercises' questions and solutions, and the record keys of the knob tables.

The toy-world notebook and the exercises call these so that they hold no logic of their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.sampling import sample_examples
from regime_core.inputs import Items, Nullable, Text
from regime_core.inputs.configs import ALPHA, SHARE, declared, integer
from regime_core.schema import Example, Passage
from regime_core.teaching.demo import (
    SIMILARITY_GRID,
    SWEEP_ARMS,
    DemoConfig,
    hit_columns,
)
from regime_core.teaching.sweeps import _arm_summary


@dataclass(frozen=True)
class LessonConfig(DemoConfig):
    """Parameters of the teaching notebooks (the toy world and the exercises): the demo's, plus
    the knob grids and the optional real dataset shown next to the toy world."""

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size", "real_dataset"})

    similarity_grid: tuple[float, ...] = declared(SIMILARITY_GRID, Items(SHARE, min_items=1))
    alpha_grid: tuple[float, ...] = declared(config.ALPHA_GRID, Items(ALPHA, min_items=1))
    real_dataset: str | None = declared("hotpotqa", Nullable(Text()))
    real_sample_size: int = declared(100, integer(1))
    n_predict: int = declared(10, integer(1))

    def validate(self) -> None:
        from regime_core.data import known_datasets
        from regime_core.data.prepared import PREPARED_DATASETS
        from regime_core.schema import DATASETS

        chosen = self.real_dataset
        if chosen is not None and chosen not in PREPARED_DATASETS:
            # a dataset of one's own once prepared (the manifest is read only for such a name)
            real = [*PREPARED_DATASETS, *(d for d in known_datasets() if d not in DATASETS)]
            if chosen not in real:
                raise ValueError(
                    f"LessonConfig.real_dataset is {chosen!r}: use one of {real} or None"
                )
        super().validate()

    def generated_worlds(self) -> list[list[Example]]:
        """Every toy world the teaching pages generate from this config: the page's own
        (``world()``) and one per value of the distractor-similarity sweep
        (:func:`~regime_core.teaching.sweeps.similarity_world`); ``regime reproduce`` encodes
        their texts up front (:func:`regime_core.encoders.prefill.fill_for_runs`)."""
        from regime_core.data.toyworld import generate
        from regime_core.teaching.sweeps import similarity_world

        worlds = [self.world(), *(similarity_world(self, v) for v in self.similarity_grid)]
        return [generate(world) for world in dict.fromkeys(worlds)]


def load_real_sample(
    cfg: LessonConfig, size: int, *, work: Path | str | None = None
) -> tuple[list[Example] | None, str]:
    """A seeded sample (``cfg.seed``) of ``size`` questions of the prepared dataset
    ``cfg.real_dataset`` (its ``cfg.split``), or ``(None, why not)`` when the data is not
    prepared (the notebooks then skip their real-data part with that message)."""
    dataset = cfg.real_dataset
    if dataset is None:
        return None, "no real dataset requested (parameter real_dataset is None)"
    from regime_core.data import load_examples

    try:
        found = load_examples(dataset, split=cfg.split, work=None if work is None else Path(work))
        sample = sample_examples(found, size, seed=cfg.seed, dataset=dataset, split=cfg.split)
    except ValueError as err:
        return None, f"skipped: {dataset} is not available here ({err})"
    return list(sample.examples), f"{dataset}: {sample.n} of {sample.n_available} dev questions"


def regime_arm_summary(
    examples: Sequence[Example], cfg: DemoConfig, *, context: Context | None = None
) -> pd.DataFrame:
    """hit@k of ``q`` and ``union`` per regime for any examples (the plot the toy world and the
    real data share). Real data also has ``neither`` questions; they are kept here.

    ``context``: the embedding store and the encoders (None: the default
    :class:`~regime_core.experiments.context.Context`)."""
    return _arm_summary(examples, SWEEP_ARMS, cfg, resolve(context))


def knob_key(value: Any) -> str:
    """A record key for a knob value: floats as ``%g`` with ``.`` replaced by ``p`` (record
    keys may not hold dots), anything else as ``str``.

    >>> knob_key(0.25), knob_key(1.0), knob_key("kept")
    ('0p25', '1', 'kept')
    """
    if isinstance(value, float | np.floating):
        return f"{float(value):g}".replace(".", "p")
    return str(value)


def table_numbers(table: pd.DataFrame, keys: Sequence[str]) -> dict[str, Any]:
    """Nest a summary table into record numbers: ``{key1: {key2: {...: {hit@k: value}}}}``, each
    knob value a key by :func:`knob_key`."""
    out: dict[str, Any] = {}
    for row in table.to_dict("records"):
        node = out
        for key in keys:
            node = node.setdefault(knob_key(row[key]), {})
        node["n"] = int(row["n"])
        for col in hit_columns():
            node[col] = float(row[col])
    return out


# --- the exercises ---------------------------------------------------------------------------

#: Answers a reader may type for each regime (case-insensitive).
ANSWERS: dict[str, tuple[str, ...]] = {
    "Q-dominant": ("q", "q-dominant"),
    "B-dominant": ("b", "b-dominant"),
    "neither": ("n", "neither"),
}


def draw_questions(
    examples: Sequence[Example], n: int, prefix: str, *, seed: int = config.SEED
) -> dict[str, Example]:
    """``n`` questions drawn with the seed, labelled ``<prefix>1...`` in a seeded order (ids are
    hidden: they would give hints)."""
    from regime_core.experiments.sampling import sample_ids

    chosen = set(sample_ids([ex.id for ex in examples], n, seed=seed, stream=f"exercise-{prefix}"))
    picked = [ex for ex in examples if ex.id in chosen]
    order = np.random.default_rng([seed, len(prefix)]).permutation(len(picked))
    return {f"{prefix}{i + 1}": picked[j] for i, j in enumerate(order)}


def without_relation_sentences(example: Example) -> Example:
    """The example with every bridge sentence that names the hop-2 entity removed: the same
    question, but the bridge no longer says whom to look for (so P2 fails)."""
    from regime_core.data.regimes import relation_sentences

    drop = set(relation_sentences(example))
    bridge = example.bridge
    kept = tuple(s for i, s in enumerate(bridge.sentences) if i not in drop)
    if not kept or len(kept) == len(bridge.sentences):
        raise ValueError(f"example {example.id}: no relation sentence to remove")
    new_bridge = Passage(pid=bridge.pid, title=bridge.title, sentences=kept)
    pool = tuple(new_bridge if p.pid == bridge.pid else p for p in example.pool)
    return dataclasses.replace(
        example, id=f"{example.id}-no-relation", pool=pool, relation_sentence=None
    )


def neither_question(
    candidates: Sequence[Example], exclude: Sequence[Example] = (), *, seed: int = config.SEED
) -> Example | None:
    """A question whose regime is *neither*, for exercise 1: a seeded pick among the
    ``candidates`` that are neither (``exclude`` left out), else a toy B-dominant question with
    its relation sentence removed (:func:`without_relation_sentences`), else None."""
    from regime_core.data.regimes import p1, p2

    taken = {ex.id for ex in exclude}
    pool = [ex for ex in candidates if ex.id not in taken]
    order = np.random.default_rng([seed, 7]).permutation(len(pool))
    for j in order:
        ex = pool[int(j)]
        if not p1(ex) and not p2(ex):
            return ex
    for j in order:
        ex = pool[int(j)]
        if ex.dataset != "toyworld" or p1(ex) or not p2(ex):
            continue
        try:
            changed = without_relation_sentences(ex)
        except ValueError:
            continue
        if not p1(changed) and not p2(changed):
            return changed
    return None


def exercise_questions(
    toy: Sequence[Example],
    real: Sequence[Example] | None,
    n: int,
    *,
    seed: int = config.SEED,
) -> dict[str, Example]:
    """Exercise 1's questions: ``n`` from the toy world (``T1...``), ``n`` from the real sample
    when there is one (``R1...``), and one *neither* question placed at a seeded position among
    the real ones (among the toy ones when the real sample has none); labels follow the shown
    order."""
    toy_part = draw_questions(toy, n, "T", seed=seed)
    real_part = draw_questions(real, n, "R", seed=seed) if real else {}
    extra = neither_question(real, list(real_part.values()), seed=seed) if real else None
    target, prefix = real_part, "R"
    if extra is None:  # no real data, or no neither question in it: one made from the toy world
        extra = neither_question(toy, list(toy_part.values()), seed=seed)
        target, prefix = toy_part, "T"
    if extra is not None:
        shown = list(target.values())
        at = int(np.random.default_rng([seed, 11]).integers(0, len(shown) + 1))
        shown.insert(at, extra)
        target.clear()
        target.update({f"{prefix}{i + 1}": ex for i, ex in enumerate(shown)})
    return {**toy_part, **real_part}


def question_markdown(label: str, example: Example) -> str:
    """One exercise question as Markdown: the question, the hop-2 entity and the bridge."""
    from regime_core.book.names import dataset
    from regime_core.text import escape_markdown as md

    return (
        f"**{label}** ({dataset(example.dataset)}). *{md(example.question)}*  \n"
        f"hop-2 entity: `{example.hop2_entity}`  \n"
        f"bridge *{md(example.bridge.title)}*: {md(example.bridge.text)}"
    )


#: What a reader is told an answer may be (the words of :data:`ANSWERS`).
ANSWER_WORDS = "Q, B or neither (or Q-dominant, B-dominant)"
#: Longest bridge sentence quoted whole in a reason; longer ones are cut with an ellipsis.
MAX_QUOTED_CHARS = 160


def answer_regime(answer: object) -> str | None:
    """The regime an answer names (:data:`ANSWERS`, case and surrounding spaces ignored), or
    None when it names none.

    >>> answer_regime(" b "), answer_regime("Q-dominant"), answer_regime("X")
    ('B-dominant', 'Q-dominant', None)
    """
    if not isinstance(answer, str):
        return None
    typed = answer.strip().lower()
    return next((regime for regime, words in ANSWERS.items() if typed in words), None)


@dataclass(frozen=True)
class CheckedAnswers:
    """A reader's exercise-1 answers, checked: the valid ones (label -> regime) and a message
    for each answer refused (an unknown question label, a label that names no regime)."""

    answers: dict[str, str]
    problems: tuple[str, ...]


def check_predictions(predictions: object, labels: Sequence[str]) -> CheckedAnswers:
    """Check ``my_predictions`` against the questions shown (``labels``). Never raises on what a
    reader typed: each refused answer becomes a message, and the valid ones are kept.

    >>> checked = check_predictions({"T1": "b", "T2": "X", "Z9": "Q"}, ["T1", "T2"])
    >>> checked.answers
    {'T1': 'B-dominant'}
    >>> for problem in checked.problems:
    ...     print(problem)
    T2: 'X' is not an answer; write Q, B or neither (or Q-dominant, B-dominant). Not scored.
    Z9 is not a question shown here (they are T1, T2). Not scored.
    """
    if predictions is None:
        return CheckedAnswers({}, ())
    if isinstance(predictions, str):  # papermill -p passes text
        import json

        try:
            predictions = json.loads(predictions)
        except ValueError as err:
            return CheckedAnswers(
                {},
                (
                    f"my_predictions is not valid JSON ({err}); write it as "
                    '{"T1": "B", "T2": "Q"}. Nothing scored.',
                ),
            )
    if not isinstance(predictions, Mapping):
        return CheckedAnswers(
            {},
            (
                "my_predictions must map question labels to answers, e.g. "
                f'{{"T1": "B", "T2": "Q"}}; got {type(predictions).__name__}. Nothing scored.',
            ),
        )
    shown = list(labels)
    answers: dict[str, str] = {}
    problems: list[str] = []
    for label, answer in predictions.items():
        if label not in shown:
            problems.append(
                f"{label} is not a question shown here (they are {', '.join(shown)}). Not scored."
            )
            continue
        regime = answer_regime(answer)
        if regime is None:
            problems.append(
                f"{label}: {answer!r} is not an answer; write {ANSWER_WORDS}. Not scored."
            )
            continue
        answers[str(label)] = regime
    return CheckedAnswers(answers, tuple(problems))


def _quoted(sentence: str) -> str:
    if len(sentence) <= MAX_QUOTED_CHARS:
        return sentence
    return sentence[: MAX_QUOTED_CHARS - 1].rstrip() + "…"


def regime_reason(example: Example) -> str:
    """Why the key gives the example its regime, in one sentence: the name of the hop-2 entity
    the question holds (P1), else the bridge sentence that names it (P2), else that neither
    names it, by the rule of :mod:`regime_core.data.regimes`."""
    from regime_core.data.regimes import DEFAULT_REGIME_RULES, p1, p2, predicate_names
    from regime_core.text import compile_names

    norm = DEFAULT_REGIME_RULES.normalization
    names = predicate_names(example)
    target = example.target.title
    if p1(example):
        name = next(n for n in names if compile_names((n,), norm).any(example.question))
        return (
            f"The question names the hop-2 entity ({name}), so the question alone points at "
            "its passage (P1): Q-dominant."
        )
    if p2(example):
        matcher = compile_names(names, norm)
        sentence = next(s for s in example.bridge.sentences if matcher.any(s))
        return (
            f"The question does not name the hop-2 entity ({target}), but the bridge does, in "
            f'"{_quoted(sentence)}" (P2): B-dominant.'
        )
    return (
        f"Neither the question nor any sentence of the bridge names the hop-2 entity ({target}) "
        "by its title or an alias, as the matcher reads names: neither."
    )


def solution_table(
    questions: Mapping[str, Example], predictions: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Exercise 1's solution: per question P1, P2, the regime (computed by
    :mod:`regime_core.data.regimes`) and the reason for it; with the reader's answers
    (:func:`check_predictions`'s valid ones, label -> regime, shown questions only) in ``yours``,
    whether each is right, and for a wrong one the reason it is wrong (``feedback``). A question
    not answered has ``yours`` empty and ``right`` False."""
    from regime_core.data.regimes import regime_table

    table = regime_table(list(questions.values()))
    table.insert(0, "label", list(questions))
    solution = table.loc[:, ["label", "dataset", "native_type", "p1", "p2", "regime"]].copy()
    solution["reason"] = [regime_reason(ex) for ex in questions.values()]
    if predictions:
        solution["yours"] = [str(predictions.get(label, "")) for label in solution["label"]]
        solution["right"] = [
            yours == regime
            for yours, regime in zip(solution["yours"], solution["regime"], strict=True)
        ]
        columns = solution.loc[:, ["yours", "regime", "right", "reason"]]
        solution["feedback"] = [
            "" if right or not yours else f"You said {yours}; the key says {regime}. {reason}"
            for yours, regime, right, reason in columns.itertuples(index=False)
        ]
    return solution


def problems_markdown(checked: CheckedAnswers) -> str:
    """The refused answers' messages as a Markdown list under a heading; empty when none."""
    from regime_core.text import escape_markdown as md

    if not checked.problems:
        return ""
    return "\n".join(["**Answers refused:**", *(f"- {md(p)}" for p in checked.problems)])


def score_markdown(solution: pd.DataFrame) -> str:
    """The reader's score and feedback as Markdown: right out of answered and shown, then the
    reason for each wrong answer. Empty when nothing was answered."""
    from regime_core.text import escape_markdown as md

    lines: list[str] = []
    if "yours" in solution and (solution["yours"] != "").any():
        answered = solution[solution["yours"] != ""]
        lines.append(
            f"**Your score: {int(answered['right'].sum())} right of {len(answered)} answered** "
            f"({len(solution)} questions shown)."
        )
        lines += [
            f"- **{label}**: {md(text)}"
            for label, text in zip(answered["label"], answered["feedback"], strict=True)
            if text
        ]
    return "\n".join(lines)


def reasons_markdown(solution: pd.DataFrame) -> str:
    """The key with the reason for each answer, one list item per question."""
    from regime_core.text import escape_markdown as md

    return "\n".join(
        f"- **{label}**: {md(reason)}"
        for label, reason in zip(solution["label"], solution["reason"], strict=True)
    )


def answer_key_numbers(questions: Mapping[str, Example], solution: pd.DataFrame) -> dict[str, Any]:
    """Exercise 1's answer key for the record (the teachers' page renders it): per label the
    question, the hop-2 entity, the bridge's title, the regime, P1, P2 and the reason."""
    rows = solution.set_index("label")
    return {
        label: {
            "question": ex.question,
            "hop2_entity": ex.hop2_entity,
            "bridge_title": ex.bridge.title,
            "bridge": ex.bridge.text,
            "regime": str(rows.at[label, "regime"]),
            "p1": bool(rows.at[label, "p1"]),
            "p2": bool(rows.at[label, "p2"]),
            "reason": str(rows.at[label, "reason"]),
        }
        for label, ex in questions.items()
    }


def solution_counts(solution: pd.DataFrame) -> dict[str, dict[str, int]]:
    """``{dataset: {regime: questions}}`` of exercise 1 (the record's ``exercise1``)."""
    counts = solution.groupby(["dataset", "regime"]).size()
    return {
        ds: {regime: int(n) for (d, regime), n in counts.items() if d == ds}
        for ds in solution["dataset"].unique()
    }


def regime_example_markdown(example: Example) -> str:
    """A question with its regime, P1, P2 (computed), the hop-2 entity and the bridge, the
    relation sentence in bold."""
    from regime_core.data.regimes import p1, p2, regime_label

    sentences = [
        f"**{s}**" if i == example.relation_sentence else s
        for i, s in enumerate(example.bridge.sentences)
    ]
    regime = regime_label(p1(example), p2(example))
    return (
        f"**{regime}** (P1 = {p1(example)}, P2 = {p2(example)})\n\n"
        f"- question: *{example.question}*\n- hop-2 entity: `{example.hop2_entity}`\n"
        f"- bridge *{example.bridge.title}*: {' '.join(sentences)}"
    )


def one_per_regime(examples: Sequence[Example]) -> list[Example]:
    """The first example of each demo regime (B-dominant, then Q-dominant), as the generator
    labels them."""
    from regime_core.data.toyworld import true_regime
    from regime_core.teaching.demo import DEMO_REGIMES

    return [next(ex for ex in examples if true_regime(ex) == wanted) for wanted in DEMO_REGIMES]


def encoder_note(encoder: str, *, other_page: str) -> str:
    """The sentence saying which encoder a teaching page's numbers come from, and that the other
    teaching page, run on the same toy world with the same encoder, shows the same numbers."""
    from regime_core.book import names

    return (
        f"The numbers on this page come from the **{names.encoder(encoder)}** encoder (the "
        f"parameter `encoder`). {other_page} runs the same toy world with the same encoder "
        "(the runs' declarations keep the two `encoder` parameters equal), so the same arms "
        "show the same hit rates on both pages; rerun one with another encoder and they part: "
        "a lexical and a dense encoder rank the same passages differently."
    )
