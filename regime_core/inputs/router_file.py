"""The router model file, declared once: :func:`regime_core.router.io.save_router` writes it,
:func:`~regime_core.router.io.load_router` reads it through :data:`ROUTER_FILE`, and ``router.js``
(the book's in-browser router) reads the same declaration from one generated line
(:func:`regime_core.inputs.router_file.router_js_line`; ``python -m
regime_core.inputs.router_file`` prints it).

The feature names and the length of every vector (the number of features) are declared here, so
the reader refuses a file of other features. What no field says alone is checked by
``load_router`` after the read (and by router.js alike): the rules (``RouterRules``) and the
feature spec recomputed from them, the two classes sorted and distinct,
the class weights' labels among them, the keys and the product of a calibrated α rule, and last
the ``sha256`` seal over the other keys.
"""

from __future__ import annotations

import json
from typing import Any

from regime_core.config import ALPHA_RULES
from regime_core.inputs import (
    Choice,
    Either,
    Field,
    Flag,
    Format,
    Items,
    Kind,
    Nested,
    Nullable,
    Number,
    Object,
    Text,
    Tuple,
)
from regime_core.limits import ALPHA

FORMAT = "regime-router"
FORMAT_VERSION = 1
HASH_KEY = "sha256"

FEATURE_NAMES: tuple[str, ...] = (
    "comparison_cues",
    "yes_no_opener",
    "question_entities",
    "question_names_b_rel_entity",
    "b_rel_has_new_entity",
)
"""the router's features in every vector's order (:mod:`regime_core.router.features` computes
them): declared here, where a model file's vectors are checked against their number"""

_POSITIVE = Number(low=0, low_open=True)
_PER_FEATURE = Items(Number(), len(FEATURE_NAMES))
_LABEL = Either((Number(integer=True), Text(blank=True)))

PARAMS = Format(
    "router params",
    (
        Field("C", _POSITIVE, meaning="the inverse strength of the L2 penalty"),
        Field(
            "class_weight",
            Nullable(Either((Choice(("balanced",)), Items(Items(Either((_LABEL, Number())), 2))))),
            meaning="null, 'balanced' or [label, weight] pairs, one per class weighted",
        ),
        Field("random_state", Nullable(Number(low=0, integer=True)), meaning="the fit's seed"),
        Field("max_iter", Number(low=1, integer=True), meaning="the solver's iteration cap"),
    ),
)
SCALER = Format(
    "router scaler",
    (
        Field("mean", _PER_FEATURE, meaning="each feature's training mean"),
        Field("scale", Items(_POSITIVE, len(FEATURE_NAMES)),
              meaning="each feature's training standard deviation"),
    ),
)  # fmt: skip
TRAINING = Format(
    "router training",
    (
        Field("dataset", Text(), meaning="the dataset the router was trained on"),
        Field("n", Number(low=2, integer=True), meaning="how many questions it was fit on"),
        Field("label_rule", Text(), meaning="how the training questions were labelled"),
        Field(
            "package_versions",
            Object(Text(blank=True)),
            meaning="the versions that can change a fitted model or its features",
        ),
        Field("extra", Object(), meaning="any metadata of the fit (seed, folds, data hash)"),
    ),
)
ALPHA_RULE = Format(
    "router alpha rule",
    (
        Field("rule", Choice(ALPHA_RULES), meaning="how alpha was chosen (config.ALPHA_RULES)"),
        Field(
            "scale",
            _POSITIVE,
            required=False,
            meaning="calibrated only: the deployment scale c",
        ),
        Field(
            "training_ratio",
            _POSITIVE,
            required=False,
            meaning="calibrated only: the training questions' median spread ratio",
        ),
    ),
)
ROUTER_FILE = Format(
    "regime-router file",
    (
        Field("format", Choice((FORMAT,)), meaning="what the file is"),
        Field("format_version", Choice((FORMAT_VERSION,)), meaning="the version of its format"),
        Field("feature_spec", Text(), meaning="the features' definition: version + hash"),
        Field(
            "feature_names",
            Tuple(tuple(Choice((name,)) for name in FEATURE_NAMES)),
            meaning="the features, in every vector's order",
        ),
        Field("rules", Object(), meaning="the RouterRules the features are computed with"),
        Field("classes", Items(_LABEL, 2), meaning="the two labels, sorted"),
        Field(
            "threshold",
            Number(low=0, high=1, low_open=True, high_open=True),
            meaning="the probability of the second class above which it is chosen",
        ),
        Field("alpha", ALPHA, meaning="the bridge weight α of q + α·b"),
        Field("params", Nested(PARAMS), meaning="the estimator's hyperparameters"),
        Field("scaler", Nested(SCALER), meaning="the standardisation fitted on the features"),
        Field("coef", _PER_FEATURE, meaning="the logistic regression's weights"),
        Field("intercept", Number(), meaning="the logistic regression's intercept"),
        Field("n_iter", Number(low=0, integer=True), meaning="the solver's iterations"),
        Field(
            "fitted_with_feature_names",
            Flag(),
            meaning="whether it was fitted on a data frame with named columns",
        ),
        Field(
            "alpha_rule",
            Nested(ALPHA_RULE),
            required=False,
            meaning="how alpha was chosen (absent: fixed, the paper's constant)",
        ),
        Field("training", Nested(TRAINING), meaning="what the router was trained on"),
        Field(
            HASH_KEY,
            Text(),
            required=False,
            meaning="sha256 of the canonical JSON of every other key (checked last)",
        ),
    ),
)

ROUTER_JS_LINE_PREFIX = "  const ROUTER_FILE = "


def js_table(item: Any) -> Any:
    """A format or kind as router.js reads it: each kind's parameters and the words of its
    messages (``wanted``; a choice's values as Python's ``repr``, which tells 1 from 1.0 and
    True), so that router.js refuses with Python's very message."""
    if isinstance(item, Format):
        fields = [
            {"name": f.name, "required": f.required, "kind": js_table(f.kind)} for f in item.fields
        ]
        return {"name": item.name, "closed": item.closed, "fields": fields}
    if isinstance(item, Choice):
        return {"kind": "Choice", "reprs": [repr(v) for v in item.values],
                "listed": repr(list(item.values))}  # fmt: skip
    if isinstance(item, Kind):
        out = {"kind": type(item).__name__, "wanted": item.describe()}
        return out | {name: js_table(value) for name, value in vars(item).items()}
    if isinstance(item, tuple):
        return [js_table(part) for part in item]
    return item


def router_js_line() -> str:
    """The line of ``router.js`` that holds :data:`ROUTER_FILE` (JSON, a JavaScript literal)."""
    return ROUTER_JS_LINE_PREFIX + json.dumps(js_table(ROUTER_FILE), separators=(",", ":")) + ";"


if __name__ == "__main__":  # pragma: no cover
    print(router_js_line())
