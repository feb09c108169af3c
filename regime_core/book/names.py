"""Display names: how the book writes the package's identifiers, from one table.

The package names things for code (``2wikimultihopqa``, ``b_dominant``, ``union_vs_q``); a reader
should meet one spelling per thing on every page (2WikiMultiHopQA, B-dominant, union − q). Every
figure of :mod:`regime_core.book.figures` and every table of :mod:`regime_core.book.tables` takes
its labels from here; the glossary defines the terms.

>>> dataset("2wikimultihopqa"), regime("b_dominant"), encoder("minilm"), arm("q")
('2WikiMultiHopQA', 'B-dominant', 'MiniLM-L6', 'question only')
>>> arm("union", short=True), comparison("union_vs_q"), display("metric", "hit@5")
('union', 'union − q', 'hit@5')

An identifier without a display name is returned as it is, so a new dataset or arm still shows
(under its code name) until it is added here.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The three prepared datasets, the synthetic world, and the pooled level of the claim tables.
DATASETS: dict[str, str] = {
    "hotpotqa": "HotpotQA",
    "2wikimultihopqa": "2WikiMultiHopQA",
    "musique": "MuSiQue",
    "toyworld": "toy world",
    "all": "pooled",
}

#: The regimes, under each spelling the package uses (record keys, subset rules, labels).
REGIMES: dict[str, str] = {
    "Q-dominant": "Q-dominant",
    "q_dominant": "Q-dominant",
    "B-dominant": "B-dominant",
    "b_dominant": "B-dominant",
    "neither": "neither",
    "not_p1": "not P1 (B-dominant or neither)",
    "non_parallel": "every item with a hop order",
    "every_item": "every item",
}

#: The query arms and routing policies, long names saying what each query is.
ARMS: dict[str, str] = {
    "q": "question only",
    "union": "union (q + α·B_rel)",
    "knockout": "knockout (q + α·bridge without B_rel)",
    "entity": "entity (q + α·hop-2 entity)",
    "bridge": "bridge passage",
    "routed": "routed",
    "router": "router",
    "oracle": "oracle (best of q and union)",
    "soft": "soft routing",
}

#: The metrics. ``hit@5`` is ours, the share of questions whose hop-2 passage ranks in the top
#: 5; with one gold hop-2 passage it equals the paper's R@5 (the glossary says so).
METRICS: dict[str, str] = {
    "hit@1": "hit@1",
    "hit@5": "hit@5",
    "hit@10": "hit@10",
    "mrr": "MRR",
    "auc": "AUC",
    "r2": "R²",
    "margin": "cosine margin",
}

#: The encoders, the two we run and the paper's three.
ENCODERS: dict[str, str] = {
    "minilm": "MiniLM-L6",
    "tfidf": "TF-IDF",
    "nv-embed-v2": "NV-Embed-v2",
    "bge-large": "BGE-large",
    "e5-mistral": "e5-mistral",
}

#: The candidate pools a hop-2 query ranks.
POOLS: dict[str, str] = {
    "question": "question's own pool",
    "corpus": "whole dataset corpus",
}

#: The router's five features.
FEATURES: dict[str, str] = {
    "none": "none (all five)",
    "comparison_cues": "comparison cues",
    "yes_no_opener": "yes/no opener",
    "question_entities": "entities in the question",
    "question_names_b_rel_entity": "question names B_rel's entity",
    "b_rel_has_new_entity": "B_rel has a new entity",
}

#: The (P1, P2) cells in words, by who names the hop-2 entity (P1 the question, P2 the bridge).
CELLS: dict[str, str] = {
    "P1+P2+": "question and bridge name it",
    "P1+P2-": "only the question names it",
    "P1-P2+": "only the bridge names it",
    "P1-P2-": "neither names it",
}

#: The B_rel selectors (the selector knob's values and the learned variants measured beside it).
SELECTORS: dict[str, str] = {
    "rule": "rule",
    "learned": "learned (12 features)",
    "learned_text": "learned, text features only",
    "learned_rule_terms": "learned, the rule's 3 terms",
    "gold": "gold B_rel (oracle)",
    "first": "first sentence",
}

#: Display names of the router's label rules (ablations).
LABEL_RULES: dict[str, str] = {
    "ties_q_by_rank": "ties → q, by rank",
    "ties_union_by_rank": "ties → union, by rank",
    "ties_exclude_by_rank": "ties excluded, by rank",
    "ties_q_by_hit5": "ties → q, by hit@5",
    "ties_union_by_hit5": "ties → union, by hit@5",
    "ties_exclude_by_hit5": "ties excluded, by hit@5",
}

#: The languages the router is timed in (the routing-latency run).
LANGUAGES: dict[str, str] = {
    "python": "Python",
    "javascript": "JavaScript",
}

_KINDS: dict[str, Mapping[str, str]] = {
    "dataset": DATASETS,
    "regime": REGIMES,
    "arm": ARMS,
    "metric": METRICS,
    "encoder": ENCODERS,
    "pool": POOLS,
    "feature": FEATURES,
    "cell": CELLS,
    "label_rule": LABEL_RULES,
    "selector": SELECTORS,
    "language": LANGUAGES,
}


def _lookup(table: Mapping[str, str], name: object) -> str:
    text = str(name)
    return table.get(text, text)


def dataset(name: object) -> str:
    """``"2wikimultihopqa"`` → ``"2WikiMultiHopQA"``."""
    return _lookup(DATASETS, name)


def regime(name: object) -> str:
    """``"b_dominant"`` or ``"B-dominant"`` → ``"B-dominant"``."""
    return _lookup(REGIMES, name)


def arm(name: object, *, short: bool = False) -> str:
    """``"q"`` → ``"question only"`` (``short``: the arm's own name, ``"q"``, for legends and
    headers; the glossary and captions spell it out)."""
    return str(name) if short else _lookup(ARMS, name)


def encoder(name: object) -> str:
    """``"minilm"`` → ``"MiniLM-L6"``, ``"tfidf"`` → ``"TF-IDF"``."""
    return _lookup(ENCODERS, name)


def language(name: object) -> str:
    """``"javascript"`` → ``"JavaScript"``."""
    return _lookup(LANGUAGES, name)


def comparison(name: object) -> str:
    """``"union_vs_q"`` → ``"union − q"`` (arms in their short names)."""
    text = str(name)
    if "_vs_" not in text:
        return text
    a, b = text.split("_vs_", 1)
    return f"{arm(a, short=True)} − {arm(b, short=True)}"


def display(kind: str, name: object) -> str:
    """The display name of ``name`` as a ``kind`` (``dataset``, ``regime``, ``arm``,
    ``metric``, ``encoder``, ``pool``, ``feature``, ``cell``, ``label_rule``, ``selector``,
    ``language``, ``comparison``); the kinds most used have their own function
    (:func:`dataset`, :func:`regime`, :func:`arm`, :func:`encoder`, :func:`language`)."""
    if kind == "comparison":
        return comparison(name)
    return _lookup(_KINDS[kind], name)


#: Table columns whose *values* are identifiers of one kind (``policy`` holds arm names).
VALUE_COLUMNS: dict[str, str] = {
    "dataset": "dataset",
    "encoder": "encoder",
    "regime": "regime",
    "arm": "arm",
    "policy": "arm",
    "pool": "pool",
    "without": "feature",
    "feature": "feature",
    "cell": "cell",
    "label_rule": "label_rule",
    "comparison": "comparison",
    "subset": "regime",
}


#: Config fields whose values have a display name, and the kind of name (:func:`display`).
CONFIG_FIELD_KINDS: dict[str, str] = {
    "dataset": "dataset",
    "datasets": "dataset",
    "train_dataset": "dataset",
    "transfer_datasets": "dataset",
    "encoder": "encoder",
    "encoders": "encoder",
    "subset": "regime",
}  # not the pool: the claims' templates already say "{config.pool} pool"


def config_value(field: str, value: object) -> str:
    """A config value as a reader should see it: a display name for the fields of
    :data:`CONFIG_FIELD_KINDS`, else the value as written.

    >>> config_value("encoder", "minilm"), config_value("subset", "b_dominant")
    ('MiniLM-L6', 'B-dominant')
    >>> config_value("split", "dev"), config_value("alpha", 0.25)
    ('dev', '0.25')
    """
    kind = CONFIG_FIELD_KINDS.get(field)
    return display(kind, value) if kind is not None else str(value)
