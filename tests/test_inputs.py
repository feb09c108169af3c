"""The input declarations' one reader: what :meth:`Format.read` accepts and converts, and every
refusal naming where the value came from and the field."""

from __future__ import annotations

import math

import pytest

from regime_core.inputs import (
    Choice,
    Data,
    Either,
    Field,
    Flag,
    Format,
    Id,
    InputError,
    Items,
    Nested,
    Nullable,
    Number,
    Object,
    Pattern,
    Table,
    Text,
    Tuple,
    check_value,
)
from regime_core.inputs.configs import INT64_MAX, integer

INNER = Format("inner", (Field("k", Number(low=1, integer=True)),))
SAMPLE = Format(
    "sample",
    (
        Field("share", Number(low=0, high=1, low_open=True)),
        Field("name", Text(max_chars=5)),
        Field("note", Text(blank=True), required=False, default=""),
        Field("on", Flag(), required=False, default=False),
        Field("mode", Choice(("fixed", "calibrated")), required=False, default="fixed"),
        Field("weights", Items(Number(), length=2), required=False, default=(0.0, 0.0)),
        Field("limit", Nullable(Number(low=0, integer=True)), required=False),
        Field("either", Either((Flag(), Text())), required=False),
        Field("inner", Nested(INNER), required=False),
        Field("code", Pattern("[a-z]+", "a code"), required=False),
        Field("table", Table(Number(integer=True), key=Choice(("k",))), required=False),
    ),
)


def test_read_converts_and_fills_defaults() -> None:
    values = SAMPLE.read(
        {"share": 1, "name": "ab", "weights": [1, 2.5], "inner": {"k": 3}}, where="f"
    )
    assert values == {
        "share": 1.0, "name": "ab", "note": "", "on": False, "mode": "fixed",
        "weights": (1.0, 2.5), "limit": None, "either": None, "inner": {"k": 3},
        "code": None, "table": None,
    }  # fmt: skip
    assert type(values["share"]) is float and type(values["inner"]["k"]) is int


@pytest.mark.parametrize(
    ("record", "field", "problem"),
    [
        ({"name": "a"}, "share", "is missing (required)"),
        ({"share": 0, "name": "a"}, "share", "must be a number in (0, 1], got 0"),
        ({"share": True, "name": "a"}, "share", "got True"),
        ({"share": 10**400, "name": "a"}, "share", "an integer of 401 digits"),
        ({"share": 0.5, "name": " "}, "name", "non-blank"),
        ({"share": 0.5, "name": "abcdef"}, "name", "got 6 characters"),
        ({"share": 0.5, "name": "a", "mode": "x"}, "mode", "is 'x', not one of"),
        ({"share": 0.5, "name": "a", "weights": [1]}, "weights", "has 1 items, expected 2"),
        ({"share": 0.5, "name": "a", "weights": [1, "x"]}, "weights[1]", "got 'x'"),
        ({"share": 0.5, "name": "a", "inner": {"k": 0}}, "inner.k", "an integer in [1, inf]"),
        ({"share": 0.5, "name": "a", "inner": {"j": 1}}, "inner.j", "not a field of inner"),
        ({"share": 0.5, "name": "a", "extra": 1}, "extra", "not a field of sample"),
        ({"share": 0.5, "name": "a", "limit": 1.5}, "limit", "null or an integer"),
        ({"share": 0.5, "name": "a", "code": "a1"}, "code", "a code (matching [a-z]+)"),
        ({"share": 0.5, "name": "a", "table": {"j": 1}}, "table.j", "is 'j', not one of"),
        ({"share": 0.5, "name": "a", "table": {"k": "x"}}, "table.k", "an integer, got 'x'"),
    ],
)
def test_every_refusal_names_the_file_record_and_field(record, field, problem) -> None:
    with pytest.raises(InputError) as info:
        SAMPLE.read(record, where="runs.yml, run 'x'")
    assert info.value.where == "runs.yml, run 'x'" and info.value.field == field
    assert str(info.value).startswith(f"runs.yml, run 'x': field {field!r} ")
    assert problem in str(info.value)


def test_a_record_that_is_no_object_is_named() -> None:
    with pytest.raises(InputError, match=r"^f: must be an object \(sample\), got an array$"):
        SAMPLE.read([], where="f")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 2e308])
def test_numbers_are_finite(value: float) -> None:
    with pytest.raises(InputError, match="'alpha'"):
        check_value(Number(low=0), value, where="--set", field="alpha")


def test_check_value_names_a_nested_position() -> None:
    with pytest.raises(InputError) as info:
        check_value(Items(Number()), [1, None], where="params", field="alphas")
    assert info.value.field == "alphas[1]"


def test_a_tree_table_nests_and_data_is_plain_json() -> None:
    numbers = Table(Number(), key=Pattern("[a-z]+", "a key"), tree=True)
    assert check_value(numbers, {"a": {"b": 1}}, where="r", field="numbers") == {"a": {"b": 1.0}}
    with pytest.raises(InputError) as info:
        check_value(numbers, {"a": {"b.c": 1}}, where="r", field="numbers")
    assert info.value.field == "numbers.a.b.c"
    assert check_value(Data(), {"a": [1, None, "x"]}, where="r", field="p") == {"a": [1, None, "x"]}
    with pytest.raises(InputError) as info:
        check_value(Data(), {"a": [math.nan]}, where="r", field="p")
    assert info.value.field == "p.a[0]"


def test_an_object_is_kept_whole_each_value_checked() -> None:
    versions = Object(Text())
    assert check_value(Object(), {"a": [1]}, where="f", field="extra") == {"a": [1]}
    assert check_value(versions, {"numpy": "2.0"}, where="f", field="v") == {"numpy": "2.0"}
    with pytest.raises(InputError) as info:
        check_value(versions, {"numpy": 2}, where="f", field="v")
    assert info.value.field == "v.numpy"
    with pytest.raises(InputError, match="must be an object, got an array"):
        check_value(Object(), [], where="f", field="extra")


@pytest.mark.parametrize(
    ("kind", "value", "taken"),
    [
        (Id(), "q1", "q1"), (Id(), "q 1", None), (Id(), "", None), (Id(), "a\u200bb", None),
        (Id(), 7, None), (Id(), True, None), (Id(spaces=True, integer=True), "q 1", "q 1"),
        (Id(spaces=True, integer=True), 7, "7"), (Id(spaces=True, integer=True), "a\x85", None),
        (Id(spaces=True, integer=True), " ", None), (Id(spaces=True, integer=True), False, None),
    ],
)  # fmt: skip
def test_an_id_is_a_non_blank_string_without_control_characters(kind, value, taken) -> None:
    if taken is None:
        with pytest.raises(InputError) as info:
            check_value(kind, value, where="f.jsonl, line 2", field="id")
        assert str(info.value).startswith("f.jsonl, line 2: field 'id' must be an id")
    else:
        assert check_value(kind, value, where="f.jsonl, line 2", field="id") == taken


def test_a_tuple_reads_each_position_with_its_own_kind() -> None:
    pair = Tuple((Text(), Items(Text())))
    assert check_value(pair, ["Paris", ["A.", "B."]], where="f", field="context[0]") == (
        "Paris",
        ("A.", "B."),
    )
    for bad, field in ((["Paris", "A."], "context[0][1]"), (["Paris"], "context[0]")):
        with pytest.raises(InputError) as info:
            check_value(pair, bad, where="f", field="context[0]")
        assert info.value.field == field


def test_an_instance_is_kept_and_another_class_named() -> None:
    from regime_core.inputs import Instance

    marker = InputError("w", "f", "p")
    assert check_value(Instance(InputError), marker, where="cfg", field="rules") is marker
    with pytest.raises(InputError) as info:
        check_value(Instance(InputError), {"where": "w"}, where="cfg", field="rules")
    assert (info.value.field, "InputError" in info.value.problem) == ("rules", True)


@pytest.mark.parametrize(
    ("value", "lowercase", "taken"),
    [("the", True, True), ("The", False, True), ("The", True, False), ("a b", False, False),
     ("", False, False), (" a", False, False), (3, False, False)],
)  # fmt: skip
def test_a_word_is_one_token_without_whitespace(
    value: object, lowercase: bool, taken: bool
) -> None:
    from regime_core.inputs import Word

    try:
        assert check_value(Word(lowercase), value, where="rules", field="cues[0]") == value
    except InputError as err:
        assert not taken and err.field == "cues[0]"
    else:
        assert taken


def test_an_integer_range_prints_its_bounds_exactly() -> None:
    # `g` formatting printed int64's bound as 9.22337e+18, a number the user cannot type back
    assert integer(low=1).describe() == f"an integer in [1, {INT64_MAX}]"
    assert Number(low=0, high=1e18).describe() == "a number in [0, 1e+18]"
