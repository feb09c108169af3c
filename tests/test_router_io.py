"""Saving a router as JSON and loading it back: bit-identical predictions, strict validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import refused

from regime_core.router import (
    FEATURE_SPEC,
    RegimeRouter,
    RouterRules,
    describe_label_rule,
    load_router,
    save_router,
)


def fitted(**params: Any) -> tuple[RegimeRouter, np.ndarray]:
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.normal(size=300) * s for s in (1.0, 0.5, 3.0, 1.0, 2.0)])
    y = (X[:, 4] - X[:, 3] + rng.normal(size=300) > 0).astype(int)
    return RegimeRouter(**params).fit(X, y), X


def save(tmp_path: Path, router: RegimeRouter, **kwargs: Any) -> Path:
    return save_router(
        router,
        tmp_path / "router.json",
        dataset="2wikimultihopqa",
        label_rule=describe_label_rule(),
        **kwargs,
    )


def test_round_trip_is_bit_identical(tmp_path: Path) -> None:
    router, X = fitted(C=0.3, threshold=0.4, class_weight={0: 1.0, 1: 2.0})
    path = save(tmp_path, router, extra={"seed": 0, "folds": 5})
    loaded = load_router(path)
    for method in ("predict", "predict_proba", "decision_function", "predict_action"):
        np.testing.assert_array_equal(getattr(loaded, method)(X), getattr(router, method)(X))
    assert loaded.get_params() == router.get_params()
    assert loaded.training_metadata_["n"] == 300
    assert loaded.training_metadata_["extra"] == {"seed": 0, "folds": 5}
    assert "scikit-learn" in loaded.training_metadata_["package_versions"]
    assert loaded.feature_spec_ == FEATURE_SPEC
    # a loaded router can be saved again to the same bytes (up to package versions)
    again = save_router(
        loaded,
        tmp_path / "again.json",
        dataset="2wikimultihopqa",
        label_rule=describe_label_rule(),
        extra={"seed": 0, "folds": 5},
    )
    assert json.loads(again.read_text()) == json.loads(path.read_text())


def test_route_after_load_matches(tmp_path: Path) -> None:
    router, _ = fitted()
    loaded = load_router(save(tmp_path, router))
    args = ("Who directed Kestrel Bay?", ["Kestrel Bay is a film.", "Odile Marchetti made it."])
    assert loaded.route(*args) == router.route(*args)


def test_the_file_is_plain_json(tmp_path: Path) -> None:
    router, _ = fitted()
    doc = json.loads(save(tmp_path, router).read_text())
    assert doc["format"] == "regime-router" and doc["alpha"] == router.alpha
    assert doc["coef"] == router.coef_[0].tolist()


def test_save_refuses_what_it_cannot_describe(tmp_path: Path) -> None:
    router, X = fitted()
    with refused(ValueError, names=["r.json", "training.dataset"]):
        save_router(router, tmp_path / "r.json", dataset="", label_rule="x")
    narrow = RegimeRouter().fit(X[:, :3], router.predict(X))
    with refused(ValueError, names=["router.json", "scaler.mean"]):  # 3 features, not 5
        save(tmp_path, narrow)
    with pytest.raises(ValueError, match="not finite JSON"):
        save(tmp_path, router, extra={"bad": float("nan")})


def corrupt(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        doc = doc[key]
    if value is KeyError:
        del doc[last]
    else:
        doc[last] = value


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("coef", KeyError, "coef"),
        ("coef", [1.0, 2.0], "coef"),  # as long as the features: no declaration says it
        ("scaler.mean", [0.0, 0.0, float("nan"), 0.0, 0.0], "scaler.mean[2]"),
        ("intercept", float("inf"), "intercept"),
        ("extra_key", 1, "extra_key"),
        ("params.tol", 1e-4, "params.tol"),
        ("rules", None, "rules"),
        ("rules.new_entity_weight", -100, "rules"),
        ("rules.stem_chars", 0, "rules"),
        ("params.class_weight", [[[0], 1.0]], "params.class_weight"),
        ("params.class_weight", [[7, 1.0]], "params.class_weight"),  # 7 is no class
        ("scaler.scale", [1.0, 0.0, 1.0, 1.0, 1.0], "scaler.scale[1]"),
        ("feature_spec", "other-features/9+abc", "feature_spec"),
        ("feature_spec", FEATURE_SPEC[:-1] + "0", "feature_spec"),
        ("feature_names", ["a", "b", "c", "d", "e"], "feature_names"),
        ("format_version", 2, "format_version"),
        ("format", "pickle", "format"),
        ("threshold", 1.5, "threshold"),
        ("classes", [0], "classes"),
        ("classes", [1, 0], "classes"),  # sorted and distinct: no declaration says it
        ("classes", [0, "1"], "classes"),
        ("training.dataset", KeyError, "training.dataset"),
        ("alpha_rule", {"rule": "fixed", "scale": 2.0}, "alpha_rule.scale"),
        ("alpha_rule", {"rule": "calibrated", "scale": 2.0}, "alpha_rule.training_ratio"),
        ("alpha_rule", {"rule": "calibrated", "scale": 2.0, "training_ratio": 1.0}, "alpha"),
    ],
)
def test_malformed_files_raise_naming_file_and_field(
    tmp_path: Path, field: str, value: Any, named: str
) -> None:
    router, _ = fitted()
    path = save(tmp_path, router)
    doc = json.loads(path.read_text())
    corrupt(doc, field, value)
    path.write_text(json.dumps(doc))  # json writes NaN/Infinity, as a careless editor might
    with refused(ValueError, names=[str(path), named]):
        load_router(path)


def test_a_calibrated_rule_whose_product_is_alpha_is_read(tmp_path: Path) -> None:
    router, _ = fitted(alpha=0.5)
    rule = {"rule": "calibrated", "scale": 2.0, "training_ratio": 0.25}
    assert load_router(save(tmp_path, router, alpha_rule=rule)).alpha_rule_ == rule


def test_changed_rules_are_caught_by_the_spec(tmp_path: Path) -> None:
    router, _ = fitted()
    path = save(tmp_path, router)
    doc = json.loads(path.read_text())
    doc["rules"]["overlap_weight"] = 0.75  # valid rules, but not the ones the spec was made from
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="features changed"):
        load_router(path)


def test_non_default_rules_round_trip(tmp_path: Path) -> None:
    router, _ = fitted()
    rules = RouterRules(entity_match_threshold=1.0)
    loaded = load_router(save(tmp_path, router, rules=rules))
    assert loaded.rules_ == rules


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", r"router\.json"),
        ("", "malformed JSON"),
        ("[" * 200_000, "nest more than 100 levels"),
        ('{"format": "regime-router", "format": "regime-router"}', "'format' appears twice"),
    ],
)
def test_unreadable_files_raise(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "router.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_router(path)
