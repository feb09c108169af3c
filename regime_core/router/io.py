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

:func:`load_router` reads every field through the file's declaration
(:mod:`regime_core.inputs.router_file`, which router.js reads too) and raises ValueError naming
the file and the field;
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
import os
import platform
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from regime_core.inputs import InputError
from regime_core.inputs.router_file import FORMAT, FORMAT_VERSION, HASH_KEY, ROUTER_FILE
from regime_core.integrity import atomic_write_bytes, canonical_bytes, sha256_hex
from regime_core.router.estimator import RegimeRouter
from regime_core.router.features import FEATURE_NAMES, feature_spec
from regime_core.router.rules import RouterRules
from regime_core.strict_json import DamagedFileError, read_json_file

REBUILD = "retrain it with `regime route train --out FILE` (or save_router)"


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


def _jsonable_label(label: Any) -> Any:
    """A label as JSON holds it (the declaration refuses one that is no integer or string)."""
    return label.item() if isinstance(label, np.generic) else label


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
    router was trained under (the module docstring; None: the key is not written). The document
    is read as :func:`load_router` reads it before it is written: a file save_router writes is
    one load_router reads.
    """
    check_is_fitted(router)
    names_in = getattr(router, "feature_names_in_", None)
    if names_in is not None and tuple(names_in) != FEATURE_NAMES:
        raise ValueError(
            f"save_router: the router was fitted on columns {list(names_in)}, "
            f"not {list(FEATURE_NAMES)}"
        )
    if rules is None:
        rules = getattr(router, "rules_", RouterRules())
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
    path = Path(path)
    _read(document, where=f"save_router, {path}")
    try:
        document[HASH_KEY] = document_hash(document)
        text = json.dumps(document, indent=2, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"save_router: the model or `extra` is not finite JSON: {exc}") from None
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))
    return path


def document_hash(document: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a router document without its ``sha256`` key."""
    body = {k: v for k, v in document.items() if k != HASH_KEY}
    return sha256_hex(canonical_bytes(body))


# --- loading ---------------------------------------------------------------------------------


def load_router(path: str | os.PathLike[str]) -> RegimeRouter:
    """Read and validate a router written by :func:`save_router`.

    The returned router predicts bit-identically to the saved one and carries ``rules_``,
    ``feature_spec_`` and ``training_metadata_``. Every field is read through the declaration
    (:data:`regime_core.inputs.router_file.ROUTER_FILE`); what no field says alone is checked
    here, and router.js checks it alike. Raises ValueError naming the file and the field.
    """
    path = Path(path)
    document = read_json_file(path)  # ValueError naming the file: not JSON, NaN, too deep, ...
    file, rules, class_weight, alpha_rule = _read(document, where=str(path))

    # Last, so that a hand-edited field is reported by name above; a change no field check
    # sees (a flipped digit in a coefficient) is caught here.
    if file[HASH_KEY] is None:
        raise DamagedFileError(f"{path}: no {HASH_KEY!r} recorded by save_router; {REBUILD}")
    if file[HASH_KEY] != document_hash(document):
        raise DamagedFileError(
            f"{path} is damaged or edited: its content does not match the {HASH_KEY} "
            f"save_router recorded; {REBUILD}"
        )

    n = len(FEATURE_NAMES)
    params = file["params"]
    router = RegimeRouter(
        threshold=file["threshold"],
        alpha=file["alpha"],
        C=params["C"],
        class_weight=class_weight,
        random_state=params["random_state"],
        max_iter=params["max_iter"],
    )
    router.classes_ = np.asarray(file["classes"])
    router.n_features_in_ = n
    if file["fitted_with_feature_names"]:
        router.feature_names_in_ = np.asarray(FEATURE_NAMES, dtype=object)
    router.scaler_mean_ = np.array(file["scaler"]["mean"])
    router.scaler_scale_ = np.array(file["scaler"]["scale"])
    router.coef_ = np.array(file["coef"]).reshape(1, n)
    router.intercept_ = np.array([file["intercept"]])
    router.n_iter_ = np.array([file["n_iter"]], dtype=np.int32)
    router.n_samples_fit_ = file["training"]["n"]
    router.rules_ = rules
    router.feature_spec_ = file["feature_spec"]
    router.training_metadata_ = file["training"]
    router.alpha_rule_ = alpha_rule
    return router


def _read(document: Any, *, where: str) -> tuple[dict[str, Any], RouterRules, Any, dict[str, Any]]:
    """A router document read through the declaration (the feature names, every vector's
    length), then checked for what no field says alone; returns the read fields, the rules,
    the class weight and the α rule."""
    file = ROUTER_FILE.read(document, where=where)

    def refuse(field: str, problem: str) -> InputError:
        return InputError(where, field, problem)

    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in file["rules"].items()
    }
    try:
        rules = RouterRules(**fields)
    except (TypeError, ValueError) as exc:
        raise refuse("rules", f"is not a valid RouterRules: {exc}") from None
    spec = file["feature_spec"]  # another version's spec differs from the current one too
    current = feature_spec(rules)
    if spec != current:
        raise refuse(
            "feature_spec",
            f"is {spec!r} but the current code computes {current!r} for these rules: the "
            "features changed since this router was fitted; refit it",
        )
    classes = file["classes"]
    if type(classes[0]) is not type(classes[1]) or not classes[0] < classes[1]:
        raise refuse("classes", f"must be two sorted distinct integers or strings: {list(classes)}")
    params = file["params"]
    class_weight = params["class_weight"]
    if isinstance(class_weight, tuple):
        if not all(label in classes and not isinstance(w, str) for label, w in class_weight):
            raise refuse("params.class_weight", "must hold [label, weight] pairs of the classes")
        class_weight = {label: float(w) for label, w in class_weight}
    alpha_rule = _alpha_rule(file["alpha_rule"], file["alpha"], refuse)
    return file, rules, class_weight, alpha_rule


def _alpha_rule(
    raw: Mapping[str, Any] | None, alpha: float, refuse: Callable[[str, str], InputError]
) -> dict[str, Any]:
    """The file's ``alpha_rule`` (absent: fixed): a calibrated rule holds its scale and
    training ratio, whose product is ``alpha`` exactly; a fixed one holds neither."""
    if raw is None:
        return {"rule": "fixed"}
    keys = ("scale", "training_ratio")
    for key in keys:
        if (raw[key] is None) == (raw["rule"] == "calibrated"):
            state = "missing (required)" if raw[key] is None else "not a field"
            raise refuse(f"alpha_rule.{key}", f"is {state} under the {raw['rule']} rule")
    if raw["rule"] == "fixed":
        return {"rule": "fixed"}
    product = raw["scale"] * raw["training_ratio"]
    if product != alpha:
        raise refuse(
            "alpha",
            f"is {alpha!r}, but the calibrated rule deploys scale × training_ratio = "
            f"{product!r} on the training questions",
        )
    return {"rule": "calibrated", **{key: raw[key] for key in keys}}
