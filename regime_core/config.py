"""Defaults, in exactly one place, and the base of every experiment's frozen config.

Every number a reader might want to change (alpha, k, the seed, the number of bootstrap
resamples, ...) is defined here once; functions take it as a keyword argument whose default
is the constant below, and the book's "Our reading of the paper" page lists them from here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import types
import typing
from typing import Any, ClassVar

# --- data ------------------------------------------------------------------------------------
# The paper's datasets, which `regime data prepare` builds and every experiment reads by default
# ("toyworld", the synthetic world, is accepted wherever a dataset name is: schema.DATASETS).
DATASETS: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")  # the paper's datasets
SPLIT: str = "dev"  # the split every experiment reads (the router is cross-fitted on it)

# --- retrieval -------------------------------------------------------------------------------
ALPHA: float = 0.25  # weight of the bridge-side vector in union/knockout/entity (paper: frozen)
ALPHA_GRID: tuple[float, ...] = tuple(
    sorted({0.0, 0.1, ALPHA, 0.5, 0.75, 1.0})
)  # a sweep's alphas (ablations, demo): 0 (union = q) to 1 (q, B_rel equal), the paper's too
ENCODER: str = "minilm"  # the bundled all-MiniLM-L6-v2
POOL_MODES: tuple[str, ...] = ("question", "corpus")
POOL_MODE: str = "question"  # the question's own distractor pool
EXCLUDE_BRIDGE: bool = True  # the bridge passage is removed from the hop-2 ranking
ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout", "entity")
K_VALUES: tuple[int, ...] = (1, 2, 5, 10)
HEADLINE_K: int = 5  # the paper reports R@5
ENCODE_BATCH_SIZE: int = 64
# A question pool with <= k candidates (after the bridge is excluded) makes hit@k 1 for every
# arm: "exclude" leaves such items out of every hit@k claim (counted in each record), "keep"
# keeps them. Corpus pools are never that small.
TINY_POOL_RULES: tuple[str, ...] = ("exclude", "keep")
TINY_POOLS: str = "exclude"
# The knockout arm of a bridge whose only sentence is B_rel: "title" queries with the bridge's
# title (all that is left once B_rel is knocked out), "drop" leaves the item out of knockout.
KNOCKOUT_SINGLE_RULES: tuple[str, ...] = ("title", "drop")
KNOCKOUT_SINGLE: str = "title"
# What the entity arm adds to the question: the hop-2 entity as the bridge writes it, or the
# dataset's own name for it (regime_core.experiments.outcomes.bridge_entity_mention).
ENTITY_SOURCES: tuple[str, ...] = ("bridge_mention", "example")
ENTITY_SOURCE: str = "bridge_mention"

# Which passage the router and its union query read as the bridge: the gold hop-1 passage
# ("gold"), or the question's top-1 passage in its own pool ("retrieved", the paper's
# pipeline: hop 1 retrieves, hop 2 excludes what hop 1 returned). Items whose top-1 is the
# hop-2 passage itself have no bridge then; they are left out and counted.
BRIDGE_SOURCES: tuple[str, ...] = ("gold", "retrieved")
BRIDGE_SOURCE: str = "gold"

# --- regimes ---------------------------------------------------------------------------------
# Which names of the hop-2 entity count for P1/P2: "title" (the hop-2 passage's title and
# aliases) or "title+linking" (plus the linking entity, which makes P2 true by construction on
# MuSiQue and 2Wiki; see regime_core.data.regimes.PREDICATE_NAMES).
PREDICATE_NAMES: str = "title"
# A predicate true (or false) for at least this share of a dataset's items is degenerate there:
# it is reported, but that dataset is not evidence about it.
DEGENERATE_SHARE: float = 0.95

# --- statistics ------------------------------------------------------------------------------
SEED: int = 0
BOOTSTRAP_RESAMPLES: int = 10_000
PERMUTATION_RESAMPLES: int = 10_000
CONFIDENCE: float = 0.95

# --- router ----------------------------------------------------------------------------------
CV_FOLDS: int = 5
LABEL_TIE_RULE: str = "q"  # a tie between union and q is labelled q (the cheaper action)
# The router *training run* (router_train.RouterConfig, `regime route train`) drops ties:
# a tie carries no signal about which action is better, and on 2Wiki ties are ~2/3 of the items,
# so labelling them q teaches a constant-q router. outcome_labels keeps LABEL_TIE_RULE.
ROUTER_TRAIN_TIE_RULE: str = "drop"


class ConfigMixin:
    """Mixin for frozen dataclass configs: a canonical dict, a stable hash, validation hooks.

    Subclasses are ``@dataclass(frozen=True)`` and may override ``validate`` (raise ValueError
    with an actionable message); it runs in ``__post_init__``.
    """

    #: Fields for which a ``None`` parameter is a value (e.g. ``sample_size=None`` = "all"),
    #: not "use the default". Subclasses annotate their own as ``ClassVar``.
    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        self.validate()

    @classmethod
    def from_parameters(cls, **parameters: Any) -> Any:
        """Build the config from a notebook's papermill parameters.

        Parameters that are not fields (``output_dir``, ``work_dir``, ``profile``, ...) are
        ignored, and ``None`` for a field means "the default" unless the field is listed in
        ``NONE_IS_VALUE``. Each value is checked against its field's annotation first, so a
        bad papermill parameter (``-p alpha abc``) is a ValueError naming the parameter rather
        than an error deep in NumPy.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        chosen = {
            key: value
            for key, value in parameters.items()
            if key in names and (value is not None or key in cls.NONE_IS_VALUE)
        }
        hints = ConfigMixin._field_hints(cls)
        for key, value in chosen.items():
            problem = ConfigMixin._type_problem(value, hints.get(key, Any))
            if problem is not None:
                raise ValueError(
                    f"{cls.__name__}: parameter {key!r} must be {problem}, got "
                    f"{type(value).__name__} {value!r}"
                )
        return cls(**chosen)

    @staticmethod
    def _field_hints(cls: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls)
        except (NameError, TypeError):  # an annotation we cannot resolve is not checked here
            return {}

    @staticmethod
    def _type_problem(value: Any, hint: Any) -> str | None:
        """What ``value`` should have been for annotation ``hint`` (None: it fits).

        Checks the scalar kinds parameters carry (bool, int, float, str), their ``| None`` and
        ``tuple[X, ...]`` forms (a list, as papermill passes YAML lists, or one string for a tuple
        of strings); other annotations are left to the config's ``validate``.
        """
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            options = typing.get_args(hint)
            problems = [ConfigMixin._type_problem(value, option) for option in options]
            if any(p is None for p in problems):
                return None
            return " or ".join(p for p in problems if p)
        if hint is type(None):
            return None if value is None else "null"
        if hint is bool:
            return None if isinstance(value, bool) else "true or false"
        if hint is int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
            return None if ok else "an integer"
        if hint is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
            return None if ok else "a number"
        if hint is str:
            return None if isinstance(value, str) else "a string"
        if origin is tuple:
            args = typing.get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                if args[0] is str and isinstance(value, str):
                    return None
                if not isinstance(value, list | tuple):
                    return f"a list of {ConfigMixin._describe(args[0])}"
                bad = [v for v in value if ConfigMixin._type_problem(v, args[0]) is not None]
                return f"a list of {ConfigMixin._describe(args[0])}" if bad else None
            if not isinstance(value, list | tuple) or len(value) != len(args):
                return f"a list of {len(args)} values"
            fits = all(
                ConfigMixin._type_problem(v, a) is None for v, a in zip(value, args, strict=True)
            )
            return None if fits else f"a list of {len(args)} values of types {args}"
        return None

    @staticmethod
    def _describe(hint: Any) -> str:
        return {bool: "true/false", int: "integers", float: "numbers", str: "strings"}.get(
            hint, str(hint)
        )

    def validate(self) -> None:  # pragma: no cover - overridden where there is something to check
        return None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(dataclasses.asdict(self))  # type: ignore[call-overload]

    def config_hash(self, length: int = 12) -> str:
        """A hash of the canonical JSON of the config; names the artefacts it produces."""
        payload = json.dumps(
            {"kind": type(self).__name__, **self.to_dict()}, sort_keys=True, separators=(",", ":")
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:length]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


# --- what each knob, field and named constant means ---------------------------------------------
# "Our reading of the paper" shows each name below with its default and this meaning (never read
# from docstrings or comments); a test fails when a name the page shows has none. A key is a
# constant or field name, or "Owner.name" where one owner (a config class, or the last part of a
# module's name) means something else by it. A default constant with no entry of its own shares
# the meaning of the field it is the default of (ALPHA -> alpha).


@dataclasses.dataclass(frozen=True)
class Meaning:
    """What a knob, a config field or a named constant means, in one line of plain English;
    for a constant that lists the values of a knob, what each value does (``alternatives``)."""

    text: str
    alternatives: typing.Mapping[str, str] = dataclasses.field(default_factory=dict)


MEANINGS: dict[str, Meaning] = {
    # data
    "DATASETS": Meaning("the paper's three datasets, which every experiment reads by default"),
    # retrieval
    "ENCODER": Meaning("the default encoder, minilm: the bundled all-MiniLM-L6-v2 model"),
    "POOL_MODES": Meaning("where the hop-2 candidates come from", {
        "question": "the question's own pool: its gold passages and the dataset's distractors",
        "corpus": "every passage of the dataset's questions",
    }),
    "POOL_MODE": Meaning("the default pool mode: each question's own pool of candidates"),
    "ARMS": Meaning("the query arms of the hop-2 retrieval, each a query vector", {
        "q": "the question alone",
        "bridge": "the bridge passage alone",
        "union": "the question plus α times the bridge's relation sentence B_rel",
        "knockout": "the question plus α times the bridge without B_rel",
        "entity": "the question plus α times the hop-2 entity as it is mentioned",
    }),
    "K_VALUES": Meaning("the cutoffs k at which hit@k and recall@k are computed for every query"),
    "HEADLINE_K": Meaning("the k of the headline metric, hit@5 (the paper's R@5)"),
    "ENCODE_BATCH_SIZE": Meaning("texts the encoder embeds at once when it fills the store"),
    "TINY_POOL_RULES": Meaning("what tiny_pools may be (a pool of at most k hop-2 candidates)", {
        "exclude": "left out of every hit@k claim, and counted in each record",
        "keep": "kept, although every arm then scores hit@k = 1 on it",
    }),
    "KNOCKOUT_SINGLE_RULES": Meaning("what knockout_single may be (a bridge that is only B_rel)", {
        "title": "the knockout arm queries with the bridge's title, all that is left",
        "drop": "the question is left out of the knockout arm",
    }),
    "ENTITY_SOURCES": Meaning("what entity_source may be: the text the entity arm adds", {
        "bridge_mention": "the hop-2 entity as the bridge writes it",
        "example": "the dataset's own name for the hop-2 entity",
    }),
    "BRIDGE_SOURCES": Meaning("what bridge_source may be: the passage read as the bridge", {
        "gold": "the gold hop-1 passage",
        "retrieved": "the question's top-1 passage in its pool, as a two-hop pipeline has it; "
        "a question whose top-1 is the hop-2 passage is left out and counted",
    }),
    "DEGENERATE_SHARE": Meaning(
        "a predicate (P1 or P2) true, or false, for at least this share of a dataset's questions "
        "is degenerate there: reported, but that dataset is no evidence about the regimes"
    ),
    # statistics
    "PERMUTATION_RESAMPLES": Meaning(
        "random sign flips of the paired permutation test; with at most 20 non-zero differences "
        "every sign pattern is enumerated instead"
    ),
    "TESTS": Meaning("the paired tests a comparison of two arms can use", {
        "mcnemar": "exact McNemar test, for binary outcomes such as hit@5",
        "sign": "exact sign test, for any ordinal outcome",
        "permutation": "sign-flip permutation test, for real values such as AUC or margins",
    }),
    # router
    "CV_FOLDS": Meaning(
        "folds of the router's cross-fitting: each question is routed by a router trained on the "
        "other folds"
    ),
    "LABEL_TIE_RULE": Meaning(
        "the router label where q and union rank the hop-2 target alike, unless a run says "
        "otherwise: q, the cheaper action"
    ),
    "ROUTER_TRAIN_TIE_RULE": Meaning(
        "the router training run's tie rule: drop, since a tie says nothing about which action "
        "is better (on 2WikiMultiHopQA about two thirds of the questions tie)"
    ),
    "TIE_RULES": Meaning("what a tie between q and union may be labelled", {
        "q": "labelled q, the cheaper action",
        "union": "labelled union",
        "drop": "no label: the question is left out of training, and counted",
    }),
    "COMPARISONS": Meaning("the paired comparisons of the router chapter: a policy minus another", {
        "routed_vs_q": "routed minus always-q",
        "union_vs_q": "always-union minus always-q",
        "oracle_vs_q": "the oracle (the better of q and union per question) minus always-q",
        "oracle_vs_routed": "the oracle gap: what a perfect router would add",
        "routed_vs_union": "routed minus always-union, the policy that needs no router",
    }),
    # data and regimes
    "HOP_ORDER_RULES": Meaning(
        "how a question's bridge (hop 1) and target (hop 2) passages were put in order; every "
        "example records its rule"
    ),
    "RELATION_SOURCES": Meaning("where an example's gold relation sentence B_rel came from", {
        "supporting_facts": "a supporting sentence of the bridge that mentions the hop-2 entity",
        "supporting_facts_first": "supporting sentences exist, none mentions it: the first one",
        "entity_mention": "no sentence labels: the first bridge sentence that mentions it",
        "synthetic": "toy world: known by construction",
        "none": "no sentence could be identified",
    }),
    "IRCOT_TYPE_RULES": Meaning(
        "how an IRCoT-processed HotpotQA question, which carries no type, is typed: the first "
        "rule that applies"
    ),
    "regimes.PREDICATE_NAMES": Meaning(
        "which names of the hop-2 entity may count for P1 and P2; finding B_rel uses every name"
    ),
    "RELATION_SENTENCE_DEFINITIONS": Meaning("what makes a bridge sentence relation-bearing"),
    "FEATURE_DOCS": Meaning("the router's five features, from the question and its chosen B_rel"),
    "MARGINS": Meaning("the margins T1 can fit AUC on", {
        "margin": "the target's cosine minus the mean distractor cosine, the theorem's form",
        "std_margin": "that margin divided by the spread of the distractors' cosines",
    }),
    "SUBSET_RULES": Meaning("the questions T3's knockout can be measured on"),
    "ALPHA_GRID": Meaning("the α values of the sweep, 0 (union is q) to 1, the paper's among them"),
    # judging the paper's claims
    "SIGNIFICANCE_LEVEL": Meaning(
        "a p-value below it is significant, for the paper and for us alike; one minus CONFIDENCE"
    ),
    "VERDICT_RULES": Meaning("how a kind of claim turns the paper's value and ours into a verdict"),
    "EXPECTED_PROFILE": Meaning("the profile whose numbers expected_numbers.yml freezes"),
    # the fields the experiments' configs share (and the defaults named after them)
    "datasets": Meaning("the datasets the claim is judged on, pooled and each on its own"),
    "encoders": Meaning("the encoders retrieval runs with; the claim is judged under each"),
    "encoder": Meaning("the encoder whose vectors retrieval uses"),
    "pool": Meaning(
        "where the hop-2 candidates come from: question (each question's own pool) or corpus "
        "(every passage of the dataset)"
    ),
    "alpha": Meaning(
        "weight α of the bridge side in the union, knockout and entity queries (question + α × "
        "bridge side); the paper freezes it at 0.25"
    ),
    "k": Meaning("the cutoff k of every hit@k claim; 5 makes it hit@5, the paper's R@5"),
    "seed": Meaning("seed of the question sample and of every bootstrap and permutation draw"),
    "sample_size": Meaning("questions drawn per dataset, seeded; None takes every two-hop one"),
    "split": Meaning("the split of each dataset that is read: dev or train"),
    "bootstrap_resamples": Meaning("bootstrap resamples behind every confidence interval"),
    "confidence": Meaning("level of every confidence interval; one minus it is the test level"),
    "exclude_bridge": Meaning("the bridge passage is removed from the hop-2 candidates"),
    "entity_source": Meaning(
        "what the entity arm adds to the question: bridge_mention (the hop-2 entity as the "
        "bridge writes it) or example (the dataset's own name for it)"
    ),
    "tiny_pools": Meaning(
        "a pool of at most k hop-2 candidates, where every arm scores hit@k = 1: exclude (left "
        "out of hit@k claims, counted) or keep"
    ),
    "knockout_single": Meaning(
        "the knockout query of a bridge whose only sentence is B_rel: title (the bridge's title) "
        "or drop (the question leaves the knockout arm)"
    ),
    "predicate_names": Meaning(
        "which names of the hop-2 entity make P1 and P2: title (the hop-2 passage's title and "
        "aliases) or title+linking (also the linking entity)"
    ),
    "regime_rules": Meaning("the rules behind P1, P2 and the gold B_rel (RegimeRules)"),
    "bridge_source": Meaning(
        "the passage the router and its union query read as the bridge: gold (the gold hop-1 "
        "passage) or retrieved (the question's top-1 passage)"
    ),
    # T1, T2, T3
    "arm": Meaning("the query arm whose per-query AUC and margin T1 fits"),
    "margin": Meaning(
        "T1's margin: margin (target minus mean distractor cosine) or std_margin (divided by the "
        "distractors' spread)"
    ),
    "T1Config.tiny_pools": Meaning("keep: T1 is about AUC, where a tiny pool is no special case"),
    "T1Config.min_cell_n": Meaning("a cell with fewer questions is listed, not fitted"),
    "r2_threshold": Meaning("the R² a cell's fitted curve must reach to pass (the paper's bar)"),
    "T2Config.significance": Meaning(
        "a union gain is significant when positive with a Holm-adjusted McNemar p below this"
    ),
    "T2Config.min_cell_n": Meaning(
        "the smallest Q-dominant cell whose gain must be non-significant for T2 to hold; smaller "
        "cells are reported but cannot refute it"
    ),
    "subset": Meaning("the questions T3's knockout is measured on (a key of SUBSET_RULES)"),
    "T3Config.significance": Meaning(
        "a knockout loss is significant when positive with a Holm-adjusted p below this"
    ),
    # the router's training, its transfer, the ablations
    "dataset": Meaning("the dataset the router is trained on"),
    "tie_rule": Meaning("the label where q and union rank the target alike: q, union or drop"),
    "label_k": Meaning(
        "None labels by rank (union wins when it ranks the target higher); a number k labels by "
        "hit@k (union wins when it hits and q misses)"
    ),
    "n_splits": Meaning("folds of the router's cross-fitting"),
    "TransferConfig.datasets": Meaning("the datasets the frozen router is applied to, zero-shot"),
    "TransferConfig.alpha": Meaning(
        "None keeps the router's own frozen α (the paper's setting); a number replaces the union "
        "weight at evaluation, as an ablation"
    ),
    "train_dataset": Meaning("the dataset the router of every ablation is trained on"),
    "transfer_datasets": Meaning("the datasets every ablated router is applied to, zero-shot"),
    "AblationConfig.encoders": Meaning("the encoders compared; the first is the main setting's"),
    "paper_encoders": Meaning(
        "the paper's encoders, run only when their weights are already in the local Hugging Face "
        "cache (never downloaded)"
    ),
    "AblationConfig.pool": Meaning("the pool mode of the main setting"),
    "pools": Meaning("the pool modes compared"),
    "AblationConfig.alpha": Meaning("the α of the main setting: every ablation but the sweep"),
    "alphas": Meaning("the α values of the sweep"),
    # the multiverse
    "RobustnessConfig.encoders": Meaning("the encoders the claims are judged under"),
    "primary_encoder": Meaning(
        "the encoder of every routing reading, of T2's plotted estimate and of T3's primary one"
    ),
    "RobustnessConfig.pools": Meaning("the pool modes the readings take"),
    "RobustnessConfig.tiny_pool_rules": Meaning("the tiny-pool rules the readings take"),
    "RobustnessConfig.predicate_name_rules": Meaning("the predicate names the readings take"),
    "RobustnessConfig.knockout_single_rules": Meaning(
        "the one-sentence knockouts the readings take"
    ),
    "margins": Meaning("the T1 margins the readings take"),
    "tie_rules": Meaning("the router tie rules the readings take"),
    "bridge_sources": Meaning("the bridges the routing readings read"),
    "t2_resamples": Meaning(
        "bootstrap resamples of each T2 reading; fewer suffice, as its verdict reads only the "
        "difference and the exact McNemar p (its intervals are coarser)"
    ),
    "t1_min_cell_n": Meaning("T1's min_cell_n in every reading"),
    "t2_min_cell_n": Meaning("T2's min_cell_n in every reading"),
    # P1, P2 and name matching
    "normalization": Meaning("how names and texts are normalised before they are matched"),
    "use_title": Meaning("the hop-2 passage's title counts as a name of the hop-2 entity"),
    "use_aliases": Meaning("the hop-2 entity's aliases count as names (its mention always does)"),
    "relation_sentence": Meaning(
        "which bridge sentences are relation-bearing (a key of RELATION_SENTENCE_DEFINITIONS)"
    ),
    "lowercase": Meaning("names and texts are compared in lower case"),
    "strip_accents": Meaning("accents are dropped, so Misérables matches Miserables"),
    "strip_punctuation": Meaning("punctuation becomes a word break"),
    "strip_possessive": Meaning(
        "a possessive 's is dropped (with punctuation stripped, Paris's already splits into "
        "paris and s)"
    ),
    "strip_articles": Meaning("the words listed in articles are dropped"),
    "articles": Meaning("the words strip_articles drops"),
    "strip_disambiguator": Meaning(
        "names only: one trailing parenthesis is dropped, so Amélie (film) matches Amélie"
    ),
    "strip_comma_qualifier": Meaning(
        "names only: the form before a trailing comma qualifier counts too (Boston, Lincolnshire "
        "matches Boston); off, since it also turns Paris, Texas into Paris"
    ),
    # the router's sentence selector and its features
    "new_entity_weight": Meaning(
        "selector score of a bridge sentence that names an entity neither in the question nor "
        "the bridge's own subject"
    ),
    "overlap_weight": Meaning("selector score per relation word the question and sentence share"),
    "position_weight": Meaning("selector score of the first sentence; sentence i gets it/(1 + i)"),
    "stem_chars": Meaning("relation words match when their first this-many characters do"),
    "min_word_chars": Meaning("question words shorter than this are never relation words"),
    "entity_match_threshold": Meaning(
        "the share of an entity's content words a text must hold to name the entity"
    ),
    "comparison_cues": Meaning("words that mark a comparison question, outside entity spans"),
    "yes_no_openers": Meaning("first words that make a question a yes/no question"),
    # the toy world and the demo
    "ToyWorldConfig.seed": Meaning("the world (geography, names, questions) follows from it"),
    "ToyWorldConfig.split": Meaning("dev or train: they share the geography, not the questions"),
    "ToyWorldConfig.n_questions": Meaning("questions in the world, from 1 to 100,000"),
    "b_dominant_share": Meaning(
        "share of compositional (B-dominant) questions; the rest are comparison or yes/no "
        "questions (Q-dominant)"
    ),
    "distractors_per_question": Meaning("passages added to the two gold ones in each pool"),
    "distractor_similarity": Meaning(
        "from 0 to 1: the share of distractors stating the target's kind of facts in its words, "
        "and the share of those also carrying a near name of the target"
    ),
    "relation_sentence_position": Meaning(
        "where the relation sentence sits in the bridge: first, second, last or random"
    ),
    "min_sentences": Meaning("the fewest sentences a passage has"),
    "max_sentences": Meaning("the most sentences a passage has"),
    "DemoConfig.n_questions": Meaning("questions in the demo's toy world, half B-dominant"),
    "DemoConfig.seed": Meaning("seed of the demo's toy world and of its router's folds"),
    "DemoConfig.encoder": Meaning("the encoder the demo retrieves with: minilm or tfidf"),
    "arms": Meaning("the query arms the demo compares; q and union are required"),
    "router": Meaning(
        "the router: auto (the packaged one when present, else one cross-fitted on the toy "
        "world), packaged, or toy"
    ),
}  # fmt: skip


def meaning_key(name: str, owners: typing.Sequence[str] = ()) -> str | None:
    """The key of :data:`MEANINGS` that explains ``name`` (``None``: it has no meaning yet).

    ``owners`` are where the name is defined, most specific first (a config class and its bases,
    or the last part of a module's name); ``Owner.name`` wins over ``name``, and ``name`` over its
    lower case (``TINY_POOLS`` -> ``tiny_pools``).

    >>> meaning_key("ALPHA"), meaning_key("seed", ["ToyWorldConfig"]), meaning_key("seed", ["X"])
    ('alpha', 'ToyWorldConfig.seed', 'seed')
    """
    for key in (*(f"{owner}.{name}" for owner in owners), name, name.lower()):
        if key in MEANINGS:
            return key
    return None
