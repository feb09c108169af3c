"""Every input format, declared once, and the one reader that checks a value against it.

A :class:`Format` lists its :class:`Field` s: a name, a :class:`Kind` (the type and constraint),
whether it is required and its default, and what it means in one line. :meth:`Format.read`
turns parsed JSON or YAML (or a config's parameters) into checked, converted values, and every
refusal is an :class:`InputError` naming where the value came from (the file, the record) and
the field's path in it. ``router.js`` reads the router file's declaration as data
(:func:`regime_core.inputs.router_file.js_table`).

What a declaration cannot say (a value that must agree with another field, a hash over the
whole file) stays with the format's own reader, after :meth:`Format.read`.

>>> point = Format("point", (Field("x", Number()), Field("label", Text(), required=False,
...                                                         default="origin")))
>>> point.read({"x": 1}, where="points.json, record 3")
{'x': 1.0, 'label': 'origin'}
>>> try:
...     point.read({"x": "far"}, where="points.json, record 3")
... except InputError as err:
...     print(err)
points.json, record 3: field 'x' must be a finite number, got 'far'
"""

from __future__ import annotations

import math
import numbers
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]


class InputError(ValueError):
    """A value an input declaration refuses: ``where`` (the file, the record), ``field`` (its
    path in the record, ``"a.b[2]"``) and the ``problem``, in one message."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        self.where, self.field, self.problem = where, field, problem
        at = f"{where}: " if where else ""
        super().__init__(f"{at}field {field!r} {problem}" if field else f"{at}{problem}")


class _Refused(Exception):
    """Raised inside a kind's check; :meth:`Format.read` adds where the value came from."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path, self.problem = path, problem


# --- kinds: a type and its constraint --------------------------------------------------------


class Kind:
    """What a value must be. ``check`` returns the converted value or raises
    ``_Refused``; ``describe`` says what is wanted in the words of a message."""

    def check(self, value: Any, path: Path) -> Any:  # pragma: no cover - every kind overrides
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - every kind overrides
        raise NotImplementedError

    def refuse(self, value: Any, path: Path) -> _Refused:
        return _Refused(path, f"must be {self.describe()}, got {_shown(value)}")


def json_kind(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else "an object"


def json_path(path: tuple[str | int, ...]) -> str:
    """``("context", 3, 1)`` -> ``context[3][1]``; ``(3, "id")`` -> ``[3].id``.

    >>> json_path(("context", 3, 1)), json_path((3, "id"))
    ('context[3][1]', '[3].id')
    """
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def short_repr(value: Any) -> str:
    """``repr(value)``, or its digit count for an integer too long to print whole."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        try:
            digits = str(len(str(abs(int(value)))))
        except ValueError:  # more digits than int() prints
            digits = f"more than {sys.get_int_max_str_digits()}"
        if len(digits) > 2:
            return f"an integer of {digits} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _shown(value: Any) -> str:
    if isinstance(value, dict | list) or value is None:
        return json_kind(value)
    return short_repr(value)


@dataclass(frozen=True)
class Number(Kind):
    """A real number (never a boolean), finite, within ``[low, high]`` (``low_open`` /
    ``high_open`` exclude the end); ``integer`` refuses non-integers. An integer of any size
    is compared as an integer (``float(10**400)`` would raise ``OverflowError``)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.low is None and self.high is None:
            return kind if self.integer else "a finite number"

        # integer bounds exactly: `g` would print int64's bound as 9.22337e+18
        def bound(value: float | None, infinite: str) -> str:
            if value is None:
                return infinite
            return str(value) if isinstance(value, int) else f"{value:g}"

        low, high = bound(self.low, "-inf"), bound(self.high, "inf")
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{kind} in {left}{low}, {high}{right}"

    def check(self, value: Any, path: Path) -> Any:
        wanted = numbers.Integral if self.integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, wanted):
            raise self.refuse(value, path)
        exact: int | float = int(value) if isinstance(value, numbers.Integral) else float(value)
        if isinstance(exact, float) and not math.isfinite(exact):
            raise self.refuse(value, path)
        above = self.low is None or (exact > self.low if self.low_open else exact >= self.low)
        below = self.high is None or (exact < self.high if self.high_open else exact <= self.high)
        if not (above and below):
            raise self.refuse(value, path)
        if self.integer:
            return exact
        if abs(exact) > 1.7976931348623157e308:  # a huge integer inside an unbounded range
            raise self.refuse(value, path)
        return float(exact)


@dataclass(frozen=True)
class Text(Kind):
    """A string; ``blank`` allows an empty or all-space one; at most ``max_chars`` characters."""

    blank: bool = False
    max_chars: int | None = None

    def describe(self) -> str:
        base = "a string" if self.blank else "a non-blank string"
        return base if self.max_chars is None else f"{base} of at most {self.max_chars} characters"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, str) or (not self.blank and not value.strip()):
            raise self.refuse(value, path)
        if self.max_chars is not None and len(value) > self.max_chars:
            raise _Refused(path, f"must be {self.describe()}, got {len(value)} characters")
        return value


@dataclass(frozen=True)
class Flag(Kind):
    """``true`` or ``false``."""

    def describe(self) -> str:
        return "true or false"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, bool):
            raise self.refuse(value, path)
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of ``values`` (compared with ``==``, booleans never equal to numbers)."""

    values: tuple[Any, ...]

    def describe(self) -> str:
        return f"one of {list(self.values)}"

    def check(self, value: Any, path: Path) -> Any:
        if not any(type(v) is type(value) and v == value for v in self.values):
            raise _Refused(path, f"is {_shown(value)}, not one of {list(self.values)}")
        return value


@dataclass(frozen=True)
class Items(Kind):
    """A list (a tuple once read) of ``of``; exactly ``length`` items, or at least ``min_items``."""

    of: Kind
    length: int | None = None
    min_items: int = 0

    def describe(self) -> str:
        count = f"{self.length} " if self.length is not None else ""
        return f"a list of {count}items, each {self.of.describe()}"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, list | tuple):
            raise self.refuse(value, path)
        if self.length is not None and len(value) != self.length:
            raise _Refused(path, f"has {len(value)} items, expected {self.length}")
        if len(value) < self.min_items:
            raise _Refused(path, f"has {len(value)} items, expected at least {self.min_items}")
        return tuple(self.of.check(item, (*path, i)) for i, item in enumerate(value))


@dataclass(frozen=True)
class Nullable(Kind):
    """``null`` (``None``) or ``of``."""

    of: Kind

    def describe(self) -> str:
        return f"null or {self.of.describe()}"

    def check(self, value: Any, path: Path) -> Any:
        if value is None:
            return None
        try:
            return self.of.check(value, path)
        except _Refused as refused:
            if refused.path != path:  # a problem inside a list or record names its own place
                raise
            raise self.refuse(value, path) from None


@dataclass(frozen=True)
class Either(Kind):
    """The first of ``kinds`` that takes the value."""

    kinds: tuple[Kind, ...]

    def describe(self) -> str:
        return " or ".join(kind.describe() for kind in self.kinds)

    def check(self, value: Any, path: Path) -> Any:
        for kind in self.kinds:
            try:
                return kind.check(value, path)
            except _Refused:
                continue
        raise self.refuse(value, path)


@dataclass(frozen=True)
class Pattern(Kind):
    """A string matching ``regex`` whole (an id, a key), described as ``what``."""

    regex: str
    what: str

    def describe(self) -> str:
        return f"{self.what} (matching {self.regex})"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, str) or re.fullmatch(self.regex, value) is None:
            raise self.refuse(value, path)
        return value


@dataclass(frozen=True)
class Table(Kind):
    """An object whose keys are free (each one ``key``) and whose values are each ``of``, at
    least ``min_items`` of them; a ``tree`` nests: a value may also be a table of the same kind
    (a record's numbers)."""

    of: Kind
    key: Kind = Text()
    tree: bool = False
    min_items: int = 0

    def describe(self) -> str:
        nested = " or such objects" if self.tree else ""
        return f"an object of {self.key.describe()} keys, each {self.of.describe()}{nested}"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, Mapping):
            raise self.refuse(value, path)
        if len(value) < self.min_items:
            raise _Refused(path, f"has {len(value)} keys, expected at least {self.min_items}")
        out: dict[str, Any] = {}
        for key, item in value.items():
            self.key.check(key, (*path, str(key)))
            nested = self.tree and isinstance(item, Mapping)
            out[key] = (self if nested else self.of).check(item, (*path, key))
        return out


@dataclass(frozen=True)
class Data(Kind):
    """Any plain JSON value: null, true or false, a finite number, a string, or lists and
    objects (string keys) of them (a notebook parameter)."""

    def describe(self) -> str:
        return "plain JSON data"

    def check(self, value: Any, path: Path) -> Any:
        if isinstance(value, list | tuple):
            return [self.check(item, (*path, i)) for i, item in enumerate(value)]
        if isinstance(value, Mapping):
            return {Text(blank=True).check(k, (*path, str(k))): self.check(v, (*path, k))
                    for k, v in value.items()}  # fmt: skip
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
            return value
        raise self.refuse(value, path)


@dataclass(frozen=True)
class Object(Kind):
    """A JSON object kept whole (a dict once read), each value ``values`` (any value if None):
    for free-form metadata and for a record a class of its own checks (``RouterRules``)."""

    values: Kind | None = None

    def describe(self) -> str:
        return "an object" if self.values is None else f"an object of {self.values.describe()}"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, Mapping):
            raise self.refuse(value, path)
        if self.values is None:
            return dict(value)
        return {key: self.values.check(item, (*path, key)) for key, item in value.items()}


@dataclass(frozen=True)
class Id(Kind):
    """A name of one thing (a question, a passage): a non-blank string without a control,
    format or line-separator character and, unless ``spaces``, without whitespace (ids become
    columns of TREC files); ``integer`` also takes an integer, as its decimal string."""

    spaces: bool = False
    integer: bool = False

    def describe(self) -> str:
        kind = "an id (a string or an integer)" if self.integer else "an id (a string)"
        return f"{kind} without {'control' if self.spaces else 'whitespace or control'} characters"

    def check(self, value: Any, path: Path) -> Any:
        if self.integer and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str) or not value.strip():
            raise self.refuse(value, path)
        for c in value:
            if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") or (
                c.isspace() and not self.spaces
            ):
                raise _Refused(path, f"must be {self.describe()}, got {value!r} holding {c!r}")
        return value


@dataclass(frozen=True)
class Tuple(Kind):
    """A list (a tuple once read) of ``len(kinds)`` items, the i-th of ``kinds[i]`` (a pair
    ``[title, [sentence, ...]]``, a triple)."""

    kinds: tuple[Kind, ...]

    def describe(self) -> str:
        return f"a list [{', '.join(kind.describe() for kind in self.kinds)}]"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, list | tuple) or len(value) != len(self.kinds):
            raise self.refuse(value, path)
        return tuple(
            kind.check(item, (*path, i))
            for i, (kind, item) in enumerate(zip(self.kinds, value, strict=True))
        )


@dataclass(frozen=True)
class Instance(Kind):
    """An object of class ``of`` already built (a config nested in a config), kept as it is."""

    of: type

    def describe(self) -> str:
        return f"a {self.of.__name__}"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, self.of):
            raise _Refused(path, f"must be {self.describe()}, got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Word(Kind):
    """One word: a string without whitespace, not empty; ``lowercase`` refuses an upper-case
    letter."""

    lowercase: bool = False

    def describe(self) -> str:
        return "a lowercase single word" if self.lowercase else "a single word"

    def check(self, value: Any, path: Path) -> Any:
        if not isinstance(value, str) or not re.fullmatch(r"\S+", value):
            raise self.refuse(value, path)
        if self.lowercase and value != value.lower():
            raise self.refuse(value, path)
        return value


# --- fields and formats ----------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of a format: its name, kind, default (absent: required) and meaning."""

    name: str
    kind: Kind
    required: bool = True
    default: Any = None
    meaning: str = ""


@dataclass(frozen=True)
class Nested(Kind):
    """An object whose keys are the fields of ``format`` (nested formats are records)."""

    format: Format

    def describe(self) -> str:
        return f"an object ({self.format.name})"

    def check(self, value: Any, path: Path) -> Any:
        return self.format.check(value, path)


@dataclass(frozen=True)
class Format:
    """A named set of fields. ``closed``: a key that is not a field is refused."""

    name: str
    fields: tuple[Field, ...]
    closed: bool = True
    meaning: str = ""

    def check(self, value: Any, path: Path = ()) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise _Refused(path, f"must be an object ({self.name}), got {_shown(value)}")
        names = [field.name for field in self.fields]
        if self.closed:
            unknown = [key for key in value if key not in names]
            if unknown:
                raise _Refused(
                    (*path, str(unknown[0])), f"is not a field of {self.name} (fields: {names})"
                )
        out: dict[str, Any] = {}
        for field in self.fields:
            if field.name in value:
                out[field.name] = field.kind.check(value[field.name], (*path, field.name))
            elif field.required:
                raise _Refused((*path, field.name), "is missing (required)")
            else:
                out[field.name] = field.default
        return out

    def read(self, value: Any, *, where: str) -> dict[str, Any]:
        """``value`` checked against every field and converted (lists become tuples, numbers
        floats or ints, absent optional fields their defaults); :class:`InputError` naming
        ``where`` and the field otherwise."""
        try:
            return self.check(value)
        except _Refused as refused:
            raise InputError(where, json_path(refused.path), refused.problem) from None


def check_value(kind: Kind, value: Any, *, where: str, field: str) -> Any:
    """One value outside a format (a CLI option, a config parameter): ``kind.check`` with the
    refusal as an :class:`InputError` naming ``where`` and ``field``."""
    try:
        return kind.check(value, ())
    except _Refused as refused:
        raise InputError(where, json_path((field, *refused.path)), refused.problem) from None


__all__: Sequence[str] = (
    "Choice",
    "Data",
    "Either",
    "Field",
    "Flag",
    "Format",
    "Id",
    "InputError",
    "Instance",
    "Items",
    "Kind",
    "Nested",
    "Nullable",
    "Number",
    "Object",
    "Pattern",
    "Table",
    "Text",
    "Tuple",
    "Word",
    "check_value",
    "json_kind",
    "json_path",
    "short_repr",
)  # fmt: skip
