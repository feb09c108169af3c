"""Saving a router as JSON and loading it back: bit-identical predictions, strict validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

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
    with pytest.raises(ValueError, match="dataset"):
        save_router(router, tmp_path / "r.json", dataset="", label_rule="x")
    narrow = RegimeRouter().fit(X[:, :3], router.predict(X))
    with pytest.raises(ValueError, match="3 features"):
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
    ("field", "value", "match"),
    [
        ("coef", KeyError, r"missing key\(s\) \['coef'\]"),
        ("coef", [1.0, 2.0], "'coef' has 2 numbers, expected 5"),
        ("scaler.mean", [0.0, 0.0, float("nan"), 0.0, 0.0], r"scaler\.mean\[2\]: NaN is not"),
        ("intercept", float("inf"), "at intercept: Infinity is not a JSON number"),
        ("intercept", 1e308 * 10, "at intercept: Infinity"),
        ("alpha", 1e39, "'alpha' must be a finite number in"),
        ("extra_key", 1, r"has key\(s\) \['extra_key'\] the format does not define"),
        ("params.tol", 1e-4, r"'params' has key\(s\) \['tol'\]"),
        ("rules", None, "'rules' must be a JSON object"),
        ("rules.new_entity_weight", -100, "'rules' is not a valid RouterRules"),
        ("params.class_weight", [[[0], 1.0]], "pairs of classes"),
        ("intercept", "0.1", "'intercept' must be a number"),
        ("scaler.scale", [1.0, 0.0, 1.0, 1.0, 1.0], "'scaler.scale' must be > 0"),
        ("feature_spec", "other-features/9+abc", "unknown feature spec"),
        ("feature_spec", FEATURE_SPEC[:-1] + "0", "features changed"),
        ("feature_names", ["a", "b", "c", "d", "e"], "'feature_names'"),
        ("format_version", 2, "'format_version' is 2"),
        ("format", "pickle", "'format'"),
        ("threshold", 1.5, "'threshold' must be in"),
        ("classes", [0], "'classes'"),
        ("training.n", 0, "'training.n'"),
        ("training.dataset", KeyError, "'training' is missing"),
        ("rules.stem_chars", 0, "'rules' is not a valid RouterRules"),
        ("params.C", -1, "'params.C'"),
    ],
)
def test_malformed_files_raise_naming_file_and_field(
    tmp_path: Path, field: str, value: Any, match: str
) -> None:
    router, _ = fitted()
    path = save(tmp_path, router)
    doc = json.loads(path.read_text())
    corrupt(doc, field, value)
    path.write_text(json.dumps(doc))  # json writes NaN/Infinity, as a careless editor might
    with pytest.raises(ValueError, match=match) as info:
        load_router(path)
    assert str(path) in str(info.value)


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
        ("[1, 2]", "expected a JSON object"),
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
