"""Defaults, in exactly one place, the base of every run's frozen config, and where the meaning
of each knob is read from.

Every number a reader might want to change (alpha, k, the seed, the number of bootstrap
resamples, ...) is defined here once, as the default of a field of a run's config
(:class:`regime_core.experiments.common.RunConfig`); the book's "Our reading of the paper" page
lists them from here. What a knob, a field or a named constant means is written once, as its
attribute docstring (the string right after it), read by :func:`meaning`; a default without one
means what the config field it is the default of means (``ALPHA``: ``RunConfig.alpha``).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import textwrap
import typing
from typing import Any, ClassVar

from regime_core.inputs.configs import read_config, wants_items

# --- data ------------------------------------------------------------------------------------
DATASETS: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")
"""the paper's three datasets, which every experiment reads by default"""
SPLIT: str = "dev"

# --- retrieval -------------------------------------------------------------------------------
ALPHA: float = 0.25
ALPHA_GRID: tuple[float, ...] = tuple(sorted({0.0, 0.1, ALPHA, 0.5, 0.75, 1.0}))
"""the α values of the sweep, 0 (union is q) to 1, the paper's among them"""
ENCODER: str = "minilm"
"""the default encoder, minilm: the bundled all-MiniLM-L6-v2 model"""
POOL_MODES: tuple[str, ...] = ("question", "corpus")
"""where the hop-2 candidates come from

- question: the question's own pool: its gold passages and the dataset's distractors
- corpus: every passage of the dataset's questions
"""
POOL_MODE: str = "question"
"""the default pool mode: each question's own pool of candidates"""
EXCLUDE_BRIDGE: bool = True
SCORERS: tuple[str, ...] = ("numpy", "faiss")
"""the scoring backends of the ranking (identical rankings; each query picks the faster)"""
ARMS: tuple[str, ...] = ("q", "bridge", "union", "knockout", "entity")
"""the query arms of the hop-2 retrieval, each a query vector

- q: the question alone
- bridge: the bridge passage alone
- union: the question plus α times the bridge's relation sentence B_rel
- knockout: the question plus α times the bridge without B_rel
- entity: the question plus α times the hop-2 entity as it is mentioned
"""
K_VALUES: tuple[int, ...] = (1, 2, 5, 10)
"""the cutoffs k at which hit@k and recall@k are computed for every query"""
HEADLINE_K: int = 5
"""the k of the headline metric, hit@5 (the paper's R@5)"""
ENCODE_BATCH_SIZE: int = 64
"""texts the encoder embeds at once when it fills the store"""
TINY_POOL_RULES: tuple[str, ...] = ("exclude", "keep")
"""what tiny_pools may be (a pool of at most k hop-2 candidates)

- exclude: left out of every hit@k claim, and counted in each record
- keep: kept, although every arm then scores hit@k = 1 on it
"""
TINY_POOLS: str = "exclude"
ITEM_SETS: tuple[str, ...] = ("all", "strict")
"""what item_set may be: which of a dataset's two-hop items a run reads (regime_core.data.item_sets)

- all: every two-hop item regime data prepare keeps (the exclusions of data_regimes only)
- strict: only the items whose bridge passage mentions the target passage's title exactly once
  (the title with and without its "(film)"-style tail, normalised, whole words, in the bridge's
  text) and whose answer is not yes or no; the items removed are counted per clause
"""
ITEM_SET: str = "all"
"""the default item_set: all, every two-hop item (the number every claim page reports)"""
KNOCKOUT_SINGLE_RULES: tuple[str, ...] = ("title", "exclude")
"""what knockout_single may be (a bridge that is only B_rel)

- title: the knockout arm queries with the bridge's title, all that is left
- exclude: the question is left out of the knockout arm, and counted
"""
KNOCKOUT_SINGLE: str = "title"
ENTITY_SOURCES: tuple[str, ...] = ("bridge_mention", "example")
"""what entity_source may be: the text the entity arm adds

- bridge_mention: the hop-2 entity as the bridge writes it
- example: the dataset's own name for the hop-2 entity
"""
ENTITY_SOURCE: str = "bridge_mention"
BRIDGE_SOURCES: tuple[str, ...] = ("gold", "retrieved")
"""what bridge_source may be: the passage read as the bridge

- gold: the gold hop-1 passage
- retrieved: the question's top-1 passage in its pool, as a two-hop pipeline has it; a question
  whose top-1 is the hop-2 passage is left out and counted
"""
BRIDGE_SOURCE: str = "gold"

# --- regimes ---------------------------------------------------------------------------------
PREDICATE_NAMES: str = "title"
DEGENERATE_SHARE: float = 0.95
"""a predicate (P1 or P2) true, or false, for at least this share of a dataset's questions is
degenerate there: reported, but that dataset is no evidence about the regimes
"""

# --- statistics ------------------------------------------------------------------------------
SEED: int = 0
BOOTSTRAP_RESAMPLES: int = 10_000
PERMUTATION_RESAMPLES: int = 10_000
"""random sign flips of the paired permutation test; with at most 20 non-zero differences every sign
pattern is enumerated instead
"""
CONFIDENCE: float = 0.95
CONTINUITY_CORRECTION: bool = False
"""whether the interval of a paired difference of hit@5 (Tango's score interval) and the McNemar
test it inverts carry Edwards' continuity correction. Without it, as Fagerland, Lydersen and Laake
(2013, 2014) recommend, the interval covers the true difference close to the nominal level on
average, rarely far below it, and is shorter; with it (the book's interval before) it covers more
often than it claims everywhere and is wider (benchmarks/bench_interval_coverage.py measures
both). True restores the corrected interval and test
"""

# --- router ----------------------------------------------------------------------------------
CV_FOLDS: int = 5
"""folds of the router's cross-fitting: each question is routed by a router trained on the other
folds
"""
LABEL_TIE_RULE: str = "q"
"""the router label where q and union rank the hop-2 target alike, unless a run says otherwise: q,
the cheaper action
"""
ROUTER_TRAIN_TIE_RULE: str = "exclude"
"""the router training run's tie rule: exclude, since a tie says nothing about which action is
better (on 2WikiMultiHopQA about two thirds of the questions tie)
"""
SELECTORS: tuple[str, ...] = ("rule", "learned", "gold", "first")
"""what selector may be: which sentence of the bridge the router reads and adds as B_rel

- rule: the hand-weighted rule of regime_core.router.select_b_rel (new entity, relation words,
  position); reads nothing gold
- learned: a logistic regression over twelve per-sentence features, trained on
  2WikiMultiHopQA's gold relation sentences: cross-fitted there (the router's folds), fitted on
  all of them and applied unchanged elsewhere; reads nothing gold at inference
- gold: the dataset's gold B_rel (its relation sentence, else the first sentence naming the
  hop-2 entity; the rule's choice where there is neither, counted): an oracle, for comparison
- first: always the bridge's first sentence
"""
SELECTOR: str = "rule"
"""the default selector: the rule, which the learned selector does not beat on union retrieval
(the router chapter's section "How much of the gain is selection")
"""
ALPHA_RULES: tuple[str, ...] = ("fixed", "calibrated")
"""what alpha_rule may be: how the bridge weight α of the union query is chosen per dataset

- fixed: α = alpha on every dataset and encoder (0.25 by default), the paper's rule
- calibrated: α = c·R(S), R(S) the median ratio σ_q/σ_B of the question-side and bridge-side
  score spreads of the questions S (regime_core.retrieval.alpha_rule); c fitted once on the
  training dataset's union hit@5, cross-fitted per fold there (5 folds, the router's seed), and
  applied unchanged, label-free, to every other dataset and encoder
"""
ALPHA_RULE: str = "fixed"
"""the default alpha_rule: fixed, the paper's rule (calibrated is ours: a statement of ours in
paper_claims.yml judges it)
"""
ORACLE_DATASETS: tuple[str, ...] = ("2wikimultihopqa", "musique", "hotpotqa")
"""what oracle_dataset may be: the dataset whose oracle − routed gap the paper's oracle gap
describes (the abstract names none)

- 2wikimultihopqa: the training set, routed out of fold (cross-fitted)
- musique: zero-shot, the frozen router
- hotpotqa: zero-shot, the frozen router
"""
ORACLE_DATASET: str = "2wikimultihopqa"
"""the default oracle_dataset: the training set, 2WikiMultiHopQA, routed out of fold (our primary
reading)
"""

# --- execution -------------------------------------------------------------------------------
KERNEL_START_SECONDS: int = 60
"""how long a run's notebook kernel may take to start and answer before the run fails"""
CELL_SECONDS: int | None = None
"""how long one cell of a run's notebook may run before the run fails; ``None``, the default, sets
no limit, as papermill's own default does: a full-size profile on a slow machine has cells of
hours, and a kernel that dies is noticed by nbclient without one"""


class ConfigMixin:
    """Mixin for frozen dataclass configs: every field checked against its declared kind when the
    config is built (:mod:`regime_core.inputs.configs`), a canonical dict, a stable hash.

    Subclasses are ``@dataclass(frozen=True)``, each field ``declared(default, kind)``; a
    subclass's ``validate`` (raise ValueError naming the field) holds only what a kind cannot
    say, and runs after the fields are read.
    """

    #: Fields for which a ``None`` parameter is a value (e.g. ``sample_size=None`` = "all"),
    #: not "use the default". Subclasses annotate their own as ``ClassVar``.
    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        read_config(self)
        self.validate()

    @classmethod
    def from_parameters(cls, **parameters: Any) -> Any:
        """Build the config from a notebook's papermill parameters.

        Parameters that are not fields (``output_dir``, ``work_dir``, ``profile``, ...) are
        ignored, and ``None`` for a field means "the default" unless the field is listed in
        ``NONE_IS_VALUE``; one name where a list is wanted is a list of one (``-p encoders
        minilm`` passes text); every value is then read as the config reads its fields.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        chosen = {
            key: value
            for key, value in parameters.items()
            if key in names and (value is not None or key in cls.NONE_IS_VALUE)
        }
        for key, value in chosen.items():
            if isinstance(value, str) and value.strip().startswith("["):
                # papermill's -p passes text: a list written there arrives as "[a, b]"
                raise ValueError(
                    f"{cls.__name__}: parameter {key!r} is the text {value!r}, a list written "
                    f"for papermill's -p, which passes text; pass a list with -y "
                    f'"{key}: {value.strip()}" (YAML)'
                )
            if isinstance(value, str) and wants_items(cls, key):
                chosen[key] = (value,)
        return cls(**chosen)

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


@dataclasses.dataclass(frozen=True)
class Meaning:
    """What a knob, a config field or a named constant means, in one line of plain English;
    for a constant that lists the values of a knob, what each value does (``alternatives``): its
    attribute docstring's first paragraph, and the lines ``- value: what it does`` after it."""

    text: str
    alternatives: typing.Mapping[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def parse(cls, doc: str) -> Meaning:
        """The meaning an attribute docstring states.

        >>> Meaning.parse("where from\\n\\n- a: the first\\n- b: the second, which\\n  wraps")
        Meaning(text='where from', alternatives={'a': 'the first', 'b': 'the second, which wraps'})
        """
        first, _, rest = inspect.cleandoc(doc).partition("\n\n")
        alternatives: dict[str, str] = {}
        name = None
        for line in rest.splitlines():
            if line.startswith("- ") and ": " in line:
                name, _, text = line[2:].partition(": ")
                alternatives[name] = text.strip()
            elif name is not None and line.strip():
                alternatives[name] += " " + line.strip()
        return cls(" ".join(first.split()), alternatives)


@functools.cache
def attribute_docs(owner: Any) -> dict[str, str]:
    """The attribute docstrings of ``owner``'s own body (a module, or a class without its bases):
    the string literal right after an assignment, by the assigned name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(owner)))
    body = tree.body
    if isinstance(owner, type):
        body = next(node for node in body if isinstance(node, ast.ClassDef)).body
    docs: dict[str, str] = {}
    for statement, after in itertools.pairwise(body):
        targets = (
            [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else statement.targets
            if isinstance(statement, ast.Assign)
            else []
        )
        value = after.value if isinstance(after, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            docs.update((t.id, value.value) for t in targets if isinstance(t, ast.Name))
    return docs


def meaning(owners: typing.Sequence[Any], name: str) -> Meaning | None:
    """What ``name`` means: the attribute docstring of ``name`` in the first of ``owners`` (a
    module, a class and its bases, most specific first) that has one (``None``: none has)."""
    for owner in owners:
        for klass in owner.__mro__ if isinstance(owner, type) else (owner,):
            if getattr(klass, "__module__", "regime_core").startswith("regime_core"):
                doc = attribute_docs(klass).get(name)
                if doc is not None:
                    return Meaning.parse(doc)
    return None
