"""Save and load a fitted :class:`~regime_core.router.estimator.RegimeRouter` as plain JSON.

Never pickle: a model file is data anyone can read, diff and validate. Floats are written with
Python's shortest round-trip representation, so a loaded router predicts bit-identically. The
file records what is needed to apply the model and to know what it is::

    {"format": "regime-router", "format_version": 1,
     "feature_spec": "regime-router-features/1+<hash>", "feature_names": [...5 names...],
     "rules": {...RouterRules...},
     "classes": [0, 1], "threshold": 0.5, "alpha": 0.25,
     "params": {"C": 1.0, "class_weight": null, "random_state": 0, "max_iter": 1000},
     "scaler": {"mean": [...], "scale": [...]}, "coef": [...], "intercept": -0.3,
     "n_iter": 7, "fitted_with_feature_names": false,
     "alpha_rule": {"rule": "fixed"},
     "training": {"dataset": "2wikimultihopqa", "n": 1000, "label_rule": "...",
                  "package_versions": {...}, "extra": {...}}}

:func:`load_router` validates every field and raises ValueError naming the file and the field;
the file is read strictly (:func:`regime_core.strict_json.read_json_file`: no duplicate key, no
NaN, bounded nesting, a regular file only) and a key the format does not define is refused.
``sha256`` (the hash of the canonical JSON of every other key, recorded by :func:`save_router`)
must match: a bit flip that keeps the file valid JSON would otherwise change the model.
The feature spec is recomputed from the stored rules with the current code and must match the
stored one: a model is never applied to features whose definition has changed since it was fit.

``alpha_rule`` (optional; absent: ``{"rule": "fixed"}``) says how the bridge weight ``alpha`` the
router was trained with was chosen: ``fixed`` (the paper's constant) or ``calibrated``
(``regime_core.retrieval.alpha_rule``: ``alpha = scale · training_ratio``, the deployment scale
``c`` times the median spread ratio σ_q/σ_B of the training questions; ``alpha`` must equal that
product exactly). A single routed question gets ``alpha``: the calibrated rule needs a set of
questions to measure a ratio on, and one question's ratio rests on its 8 to 19 candidates only,
so a lone question is weighted as the training questions were; a run over a dataset applies
``scale`` times that dataset's own ratio (``regime_core.experiments.zero_shot_transfer``).
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from regime_core.integrity import atomic_write_bytes, canonical_bytes, sha256_hex
from regime_core.limits import check_alpha, short_repr
from regime_core.router.estimator import RegimeRouter
from regime_core.router.features import FEATURE_NAMES, FEATURE_SPEC_VERSION, feature_spec
from regime_core.router.rules import RouterRules
from regime_core.strict_json import DamagedFileError, read_json_file

FORMAT = "regime-router"
FORMAT_VERSION = 1
HASH_KEY = "sha256"
REBUILD = "retrain it with `regime route train --out FILE` (or save_router)"
_TOP_LEVEL = (
    "format",
    "format_version",
    "feature_spec",
    "feature_names",
    "rules",
    "classes",
    "threshold",
    "alpha",
    "params",
    "scaler",
    "coef",
    "intercept",
    "n_iter",
    "fitted_with_feature_names",
    "training",
)
#: Top-level keys a file may hold or not: ``alpha_rule`` (files written before the knob: fixed).
_OPTIONAL = ("alpha_rule",)
#: The keys of ``alpha_rule`` under each rule (``regime_core.config.ALPHA_RULES``).
ALPHA_RULE_KEYS: dict[str, tuple[str, ...]] = {
    "fixed": ("rule",),
    "calibrated": ("rule", "scale", "training_ratio"),
}


def package_versions() -> dict[str, str]:
    """Versions that can change a fitted model or its features."""
    versions = {"python": platform.python_version()}
    for dist in ("regime-core", "numpy", "scikit-learn"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def _jsonable_label(label: Any) -> int | str:
    if isinstance(label, np.integer | int) and not isinstance(label, bool | np.bool_):
        return int(label)
    if isinstance(label, str | np.str_):
        return str(label)
    raise ValueError(f"save_router: class labels must be integers or strings, got {label!r}")


def save_router(
    router: RegimeRouter,
    path: str | os.PathLike[str],
    *,
    dataset: str,
    label_rule: str,
    rules: RouterRules | None = None,
    extra: Mapping[str, Any] | None = None,
    alpha_rule: Mapping[str, Any] | None = None,
) -> Path:
    """Write a fitted router to ``path`` (JSON, written atomically); returns the path.

    ``dataset`` and ``label_rule`` (e.g. :func:`~regime_core.router.labels.describe_label_rule`)
    describe the training data; ``rules`` are the feature rules the training features were
    computed with (default: the router's ``rules_`` if loaded, else the defaults); ``extra`` is
    any JSON-serialisable metadata (seed, folds, data hash, ...); ``alpha_rule`` the α rule the
    router was trained under (the module docstring; None: the key is not written).
    """
    if not isinstance(router, RegimeRouter):
        raise ValueError(f"save_router expects a RegimeRouter, got {type(router).__name__}")
    check_is_fitted(router)
    if router.n_features_in_ != len(FEATURE_NAMES):
        raise ValueError(
            f"save_router: the router has {router.n_features_in_} features; only routers on "
            f"the {len(FEATURE_NAMES)} features {FEATURE_NAMES} can be saved"
        )
    names_in = getattr(router, "feature_names_in_", None)
    if names_in is not None and tuple(names_in) != FEATURE_NAMES:
        raise ValueError(
            f"save_router: the router was fitted on columns {list(names_in)}, "
            f"not {list(FEATURE_NAMES)}"
        )
    for name, value in (("dataset", dataset), ("label_rule", label_rule)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"save_router: {name} must be a non-empty string, got {value!r}")
    if rules is None:
        rules = getattr(router, "rules_", RouterRules())
    if not isinstance(rules, RouterRules):
        raise ValueError(f"save_router: rules must be a RouterRules, got {type(rules).__name__}")
    class_weight: object = router.class_weight  # its JSON form: pairs stand for a mapping
    if isinstance(router.class_weight, Mapping):
        class_weight = [[_jsonable_label(k), float(v)] for k, v in router.class_weight.items()]
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "feature_spec": feature_spec(rules),
        "feature_names": list(FEATURE_NAMES),
        "rules": rules.to_dict(),
        "classes": [_jsonable_label(c) for c in router.classes_],
        "threshold": float(router.threshold),
        "alpha": float(router.alpha),
        "params": {
            "C": float(router.C),
            "class_weight": class_weight,
            "random_state": router.random_state,
            "max_iter": int(router.max_iter),
        },
        "scaler": {"mean": _floats(router.scaler_mean_), "scale": _floats(router.scaler_scale_)},
        "coef": _floats(router.coef_),
        "intercept": float(router.intercept_[0]),
        "n_iter": int(np.max(router.n_iter_)),
        "fitted_with_feature_names": names_in is not None,
        **({} if alpha_rule is None else {"alpha_rule": dict(alpha_rule)}),
        "training": {
            "dataset": dataset,
            "n": int(router.n_samples_fit_),
            "label_rule": label_rule,
            "package_versions": package_versions(),
            "extra": dict(extra or {}),
        },
    }
    try:
        document[HASH_KEY] = document_hash(document)
        text = json.dumps(document, indent=2, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"save_router: the model or `extra` is not finite JSON: {exc}") from None
    path = Path(path)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))
    return path


def document_hash(document: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a router document without its ``sha256`` key."""
    body = {k: v for k, v in document.items() if k != HASH_KEY}
    return sha256_hex(canonical_bytes(body))


# --- loading ---------------------------------------------------------------------------------


class _Fields:
    """Field readers that raise ValueError naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, field: str, problem: str) -> ValueError:
        return ValueError(f"{self.path}: field {field!r} {problem}")

    def obj(
        self, value: Any, field: str, keys: tuple[str, ...], optional: tuple[str, ...] | None = ()
    ) -> dict[str, Any]:
        """``value`` as an object with every key of ``keys``; one not in ``keys + optional``
        is refused too (``optional=None``: any other key is allowed)."""
        if not isinstance(value, dict):
            raise self.error(field, f"must be a JSON object, got {type(value).__name__}")
        missing = [k for k in keys if k not in value]
        if missing:
            raise self.error(field, f"is missing key(s) {missing}")
        if optional is not None:
            unknown = sorted(set(value) - set(keys) - set(optional))
            if unknown:
                raise self.error(field, f"has key(s) {unknown} the format does not define")
        return value

    def number(self, value: Any, field: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(field, f"must be a number, got {short_repr(value)}")
        # an integer beyond a float's range is compared, not converted (OverflowError)
        too_big = isinstance(value, int) and abs(value) > sys.float_info.max
        if too_big or not math.isfinite(value):
            raise self.error(field, f"must be finite, got {short_repr(value)}")
        return float(value)

    def integer(self, value: Any, field: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(field, f"must be an integer >= {minimum}, got {short_repr(value)}")
        return value

    def string(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(field, f"must be a non-empty string, got {value!r}")
        return value

    def vector(self, value: Any, field: str, length: int) -> np.ndarray:
        if not isinstance(value, list):
            raise self.error(field, f"must be a list of {length} numbers")
        if len(value) != length:
            raise self.error(field, f"has {len(value)} numbers, expected {length}")
        return np.array([self.number(v, f"{field}[{i}]") for i, v in enumerate(value)])


def load_router(path: str | os.PathLike[str]) -> RegimeRouter:
    """Read and validate a router written by :func:`save_router`.

    The returned router predicts bit-identically to the saved one and carries ``rules_``,
    ``feature_spec_`` and ``training_metadata_``. Raises ValueError naming the file and the
    field for any malformed, incomplete, non-finite or incompatible content.
    """
    path = Path(path)
    f = _Fields(path)
    document = read_json_file(path)  # ValueError naming the file: not JSON, NaN, too deep, ...
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(document).__name__}")
    if document.get("format") != FORMAT:
        raise f.error("format", f"is {document.get('format')!r}, expected {FORMAT!r}")
    if document.get("format_version") != FORMAT_VERSION:
        raise f.error(
            "format_version",
            f"is {document.get('format_version')!r}; this code reads version {FORMAT_VERSION}",
        )
    f.obj(document, "(top level)", _TOP_LEVEL, (HASH_KEY, *_OPTIONAL))
    n = len(FEATURE_NAMES)

    # Features: the names, the rules and the spec recomputed from them with the current code.
    if document["feature_names"] != list(FEATURE_NAMES):
        raise f.error(
            "feature_names", f"is {document['feature_names']!r}, expected {list(FEATURE_NAMES)}"
        )
    raw_rules = f.obj(document["rules"], "rules", (), None)  # RouterRules refuses unknown ones
    try:
        fields: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in raw_rules.items()
        }
        rules = RouterRules(**fields)
    except (TypeError, ValueError) as exc:
        raise f.error("rules", f"is not a valid RouterRules: {exc}") from None
    spec = f.string(document["feature_spec"], "feature_spec")
    if not spec.startswith(FEATURE_SPEC_VERSION + "+"):
        raise f.error("feature_spec", f"is the unknown feature spec {spec!r}")
    current = feature_spec(rules)
    if spec != current:
        raise f.error(
            "feature_spec",
            f"is {spec!r} but the current code computes {current!r} for these rules: the "
            "features changed since this router was fitted; refit it",
        )

    # The model.
    classes = document["classes"]
    if (
        not isinstance(classes, list)
        or len(classes) != 2
        or not all(isinstance(c, int | str) and not isinstance(c, bool) for c in classes)
        or type(classes[0]) is not type(classes[1])
        or not classes[0] < classes[1]
    ):
        raise f.error("classes", f"must be two sorted distinct integers or strings: {classes!r}")
    threshold = f.number(document["threshold"], "threshold")
    if not 0 < threshold < 1:
        raise f.error("threshold", f"must be in (0, 1), got {threshold}")
    alpha = f.number(document["alpha"], "alpha")
    try:
        check_alpha(alpha)
    except ValueError as exc:  # "alpha must be ..." -> "field 'alpha' must be ..."
        raise f.error("alpha", str(exc).removeprefix("alpha ")) from None
    params = f.obj(document["params"], "params", ("C", "class_weight", "random_state", "max_iter"))
    C = f.number(params["C"], "params.C")
    if C <= 0:
        raise f.error("params.C", f"must be > 0, got {C}")
    class_weight = params["class_weight"]
    if isinstance(class_weight, list):
        if not all(isinstance(p, list) and len(p) == 2 and p[0] in classes for p in class_weight):
            raise f.error(
                "params.class_weight", "must be null, 'balanced' or [label, w] pairs of classes"
            )
        class_weight = {
            p[0]: f.number(p[1], f"params.class_weight[{i}]") for i, p in enumerate(class_weight)
        }
    elif class_weight not in (None, "balanced"):
        raise f.error(
            "params.class_weight", f"must be null, 'balanced' or pairs, got {class_weight!r}"
        )
    random_state = params["random_state"]
    if random_state is not None:
        random_state = f.integer(random_state, "params.random_state", 0)
    max_iter = f.integer(params["max_iter"], "params.max_iter", 1)
    scaler = f.obj(document["scaler"], "scaler", ("mean", "scale"))
    mean = f.vector(scaler["mean"], "scaler.mean", n)
    scale = f.vector(scaler["scale"], "scaler.scale", n)
    if (scale <= 0).any():
        raise f.error("scaler.scale", f"must be > 0 everywhere, got {scale.tolist()}")
    coef = f.vector(document["coef"], "coef", n)
    intercept = f.number(document["intercept"], "intercept")
    n_iter = f.integer(document["n_iter"], "n_iter", 0)
    with_names = document["fitted_with_feature_names"]
    if not isinstance(with_names, bool):
        raise f.error("fitted_with_feature_names", f"must be true or false, got {with_names!r}")

    # Training metadata.
    training = f.obj(
        document["training"],
        "training",
        ("dataset", "n", "label_rule", "package_versions"),
        ("extra",),
    )
    if not isinstance(training.get("extra", {}), dict):
        raise f.error("training.extra", "must be a JSON object")
    f.string(training["dataset"], "training.dataset")
    n_train = f.integer(training["n"], "training.n", 2)
    f.string(training["label_rule"], "training.label_rule")
    versions = training["package_versions"]
    if not isinstance(versions, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in versions.items()
    ):
        raise f.error("training.package_versions", "must be an object of strings")

    alpha_rule = _alpha_rule(f, document, alpha)

    # Last, so that a hand-edited field is reported by name above; a change no field check
    # sees (a flipped digit in a coefficient) is caught here.
    recorded = document.get(HASH_KEY)
    if recorded is None:
        raise DamagedFileError(f"{path}: no {HASH_KEY!r} recorded by save_router; {REBUILD}")
    if recorded != document_hash(document):
        raise DamagedFileError(
            f"{path} is damaged or edited: its content does not match the {HASH_KEY} "
            f"save_router recorded; {REBUILD}"
        )

    hyper = dict(C=C, class_weight=class_weight, random_state=random_state, max_iter=max_iter)
    router = RegimeRouter(threshold=threshold, alpha=alpha, **hyper)
    router.classes_ = np.asarray(classes)
    router.n_features_in_ = n
    if with_names:
        router.feature_names_in_ = np.asarray(FEATURE_NAMES, dtype=object)
    router.scaler_mean_ = mean
    router.scaler_scale_ = scale
    router.coef_ = coef.reshape(1, n)
    router.intercept_ = np.array([intercept])
    router.n_iter_ = np.array([n_iter], dtype=np.int32)
    router.n_samples_fit_ = n_train
    router.rules_ = rules
    router.feature_spec_ = spec
    router.training_metadata_ = training
    router.alpha_rule_ = alpha_rule
    return router


def _alpha_rule(f: _Fields, document: Mapping[str, Any], alpha: float) -> dict[str, Any]:
    """The file's ``alpha_rule`` checked (absent: fixed); router.js checks it alike."""
    if "alpha_rule" not in document:
        return {"rule": "fixed"}
    raw = f.obj(document["alpha_rule"], "alpha_rule", ("rule",), None)
    rule = f.string(raw["rule"], "alpha_rule.rule")
    if rule not in ALPHA_RULE_KEYS:
        raise f.error("alpha_rule.rule", f"must be fixed or calibrated, got {rule!r}")
    f.obj(raw, "alpha_rule", ALPHA_RULE_KEYS[rule])
    out: dict[str, Any] = {"rule": rule}
    if rule == "calibrated":
        for key in ("scale", "training_ratio"):
            value = f.number(raw[key], f"alpha_rule.{key}")
            if not value > 0:
                raise f.error(f"alpha_rule.{key}", f"must be > 0, got {value!r}")
            out[key] = value
        if out["scale"] * out["training_ratio"] != alpha:
            raise f.error(
                "alpha",
                f"is {alpha!r}, but the calibrated rule deploys scale × training_ratio = "
                f"{out['scale'] * out['training_ratio']!r} on the training questions",
            )
    return out
