"""The shared table of ``regime route`` / ``router.js`` cases: ``tests/route_refusals.json``.

Each case is one command line (question, bridge, optional title, optional model file) and what
both implementations must do with it: the exit status and, for a refusal, the one error line
(after ``regime: error: `` / ``router.js: error: ``; ``{model}`` stands for the model file's
path). ``tests/test_route_refusals.py`` runs every case through ``regime route``, and
``tests/js/route_refusals.test.js`` through ``node router.js``, so the two refuse exactly alike.

The cases are generated here, in classes (sizes, nesting, numbers, fields, seals), and the
expected lines were taken from ``regime route`` once and written to the JSON file:
``python tests/route_refusals.py`` writes it again (the test then checks that nothing moved).

Texts too long to write out are ``{"first": f, "repeat": s, "times": n, "then": t}``
(``f + s * n + t``); a model file is the packaged model with text replacements
(``{"replace": [[old, new], ...]}``, first occurrence each, ``new`` a text), a nest of
brackets (``{"nest": n, "open": "[", "close": "]"}``) or
literal text (``{"text": ...}``).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("route_refusals.json")
QUESTION = "Who is the mother of the director of Kestrel Bay?"
BRIDGE = "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti."
TITLE = "Kestrel Bay (film)"
CAP = 10_000  # regime_core.limits.MAX_QUESTION_CHARS / MAX_TITLE_CHARS (checked by the test)


def expand(text: Any) -> str:
    """A case's text: a string, or ``{"repeat", "times", "then"}``."""
    if isinstance(text, str):
        return text
    return text.get("first", "") + text["repeat"] * text["times"] + text.get("then", "")


def model_text(spec: dict[str, Any], packaged: str) -> str:
    """The model file a case names (see the module docstring)."""
    if "text" in spec:
        return str(spec["text"])
    if "nest" in spec:
        n = spec["nest"]
        return spec["open"] * n + spec.get("inner", "") + spec.get("close", "") * n
    out = packaged
    for old, new in spec["replace"]:
        if old not in out:
            raise ValueError(f"replacement {old!r} is not in the packaged model")
        out = out.replace(old, expand(new), 1)
    return out


def _size_cases() -> list[dict[str, Any]]:
    """Questions and titles at, just over and far over the cap, of characters that count
    differently (ASCII, accented, astral: two UTF-16 units each, "(" that made a regular
    expression backtrack)."""
    cases = []
    for field in ("question", "title"):
        for char in ("a", "é", "🎬", "(", "a (", " ("):
            # an argument holds at most 128 kB (Linux): 30,000 of "🎬" are 120 kB of UTF-8
            for n in (CAP, CAP + 1, CAP + 7, 2 * CAP + 3, 3 * CAP):
                times, rest = divmod(n, len(char))
                text = {"repeat": char, "times": times, "then": "x" * rest}
                cases.append(
                    {
                        "class": "sizes",
                        "name": f"{field} of {n} characters of {char!r}",
                        field: text,
                    }
                )
    return cases


def _nesting_cases() -> list[dict[str, Any]]:
    """Model files nested around the cap (100), and far beyond (Python's parser gives up at
    its recursion limit, about 1,000: the band around it is left out, as it moves with the
    stack)."""
    cases = []
    for n in (2, 99, 100, 101, 102, 150, 300, 700, 5_000, 200_000):
        for kind, open_, close, inner in (
            ("arrays", "[", "]", ""),
            ("objects", '{"a": ', "}", "1"),
            ("unclosed arrays", "[", "", ""),
        ):
            if kind == "unclosed arrays" and n in (99, 101, 102):
                continue
            cases.append(
                {
                    "class": "nesting",
                    "name": f"a model of {n} nested {kind}",
                    "model": {"nest": n, "open": open_, "close": close, "inner": inner},
                }
            )
    for n in (99, 100, 101, 150):  # deep inside a real model, in a free-form field
        deep = "[" * n + "]" * n
        cases.append(
            {
                "class": "nesting",
                "name": f"training.extra nested {n} deep",
                "model": {"replace": [['"extra": {', f'"extra": {{"deep": {deep}, ']]},
            }
        )
    return cases


def _number_cases() -> list[dict[str, Any]]:
    """Numbers at the edge in the model's numeric fields: huge integers, beyond a float,
    beyond Python's 4,300 digits, negative, fractional where an integer is due."""
    values: list[Any] = [
        {"first": "1", "repeat": "0", "times": 400},
        {"first": "-1", "repeat": "0", "times": 400},
        {"first": "1", "repeat": "0", "times": 4299},
        {"first": "1", "repeat": "0", "times": 4300},
        {"first": "1", "repeat": "0", "times": 5000},
        "1e400",
        "-1e400",
        "1e18",
        "1000000000000000001",
        "2e18",
        "-0.0",
        "5e-324",
    ]
    fields = {
        "alpha": '"alpha": 0.25',
        "threshold": '"threshold": 0.5',
        "max_iter": '"max_iter": 1000',
        "intercept": '"intercept": 0.9396492252673648',
        "training.n": '"n": 173',
    }
    cases = []
    for field, old in fields.items():
        for value in values:
            key = old.split(":")[0]
            shown = value if isinstance(value, str) else f"{value['first']}e{value['times']}"
            new = (
                f"{key}: {value}"
                if isinstance(value, str)
                else {**value, "first": f"{key}: {value['first']}"}
            )
            cases.append(
                {
                    "class": "numbers",
                    "name": f"{field} = {shown} ({'integer' if '{' in str(value) else 'literal'})",
                    "model": {"replace": [[old, new]]},
                }
            )
    return cases


def _field_cases() -> list[dict[str, Any]]:
    """Fields of the wrong type, missing, duplicated, or of text that was not text."""
    edits = {
        "format a number": ['"format": "regime-router"', '"format": 1'],
        "format_version a string": ['"format_version": 1', '"format_version": "1"'],
        "feature_names empty": [
            '"feature_names": [',
            '"feature_names": [], "x_feature_names": [',
        ],
        "classes null": ['"classes": [', '"classes": null, "x_classes": ['],
        "threshold true": ['"threshold": 0.5', '"threshold": true'],
        "threshold null": ['"threshold": 0.5', '"threshold": null'],
        "threshold a list": ['"threshold": 0.5', '"threshold": [0.5]'],
        "threshold an object": ['"threshold": 0.5', '"threshold": {"v": 0.5}'],
        "alpha a string": ['"alpha": 0.25', '"alpha": "0.25"'],
        "alpha negative": ['"alpha": 0.25', '"alpha": -0.25'],
        "alpha NaN": ['"alpha": 0.25', '"alpha": NaN'],
        "alpha Infinity": ['"alpha": 0.25', '"alpha": Infinity'],
        "C zero": ['"C": 1.0', '"C": 0'],
        "C a string": ['"C": 1.0', '"C": "1"'],
        "random_state a float": ['"random_state": 0', '"random_state": 0.5'],
        "max_iter true": ['"max_iter": 1000', '"max_iter": true'],
        "intercept a string": ['"intercept": 0.9396492252673648', '"intercept": "0.9"'],
        "n_iter a float": ['"n_iter": 7', '"n_iter": 7.5'],
        "training.n zero": ['"n": 173', '"n": 0'],
        "training.n a string": ['"n": 173', '"n": "173"'],
        "duplicate alpha": ['"alpha": 0.25', '"alpha": 0.25, "alpha": 0.25'],
        "duplicate threshold": ['"threshold": 0.5', '"threshold": 0.5, "threshold": 0.4'],
        "lone surrogate in format": ['"format": "regime-router"', '"format": "\\ud800"'],
        "escaped NUL in format": ['"format": "regime-router"', '"format": "\\u0000"'],
        "stem_chars huge": ['"stem_chars": 5', '"stem_chars": 1' + "0" * 30],
        "min_word_chars negative": ['"min_word_chars": 3', '"min_word_chars": -3'],
        "new_entity_weight 1e400": ['"new_entity_weight": 1.0', '"new_entity_weight": 1e400'],
        "overlap_weight a string": ['"overlap_weight": 0.5', '"overlap_weight": "0.5"'],
        "position_weight null": ['"position_weight": 0.25', '"position_weight": null'],
        "entity_match_threshold 1e18": [
            '"entity_match_threshold": 0.5',
            '"entity_match_threshold": 1e18',
        ],
        "comparison_cues a number": ['"comparison_cues": [', '"comparison_cues": 1, "x": ['],
        "a cue of 200 characters": ['"both"', '"' + "b" * 200 + '"'],
    }
    return [
        {"class": "fields", "name": name, "model": {"replace": [edit]}}
        for name, edit in edits.items()
    ]


def _seal_cases() -> list[dict[str, Any]]:
    """The seal: missing, of the wrong type or form, or not the document's."""
    seal = '"sha256": "b2a118fe5c6e9dcb1242884c5dd6f74e09c5667ecc866be6694b6b318964ab62"'
    forms = {
        "seal missing": [[",\n  " + seal, ""]],
        "seal null": [[seal, '"sha256": null']],
        "seal a number": [[seal, '"sha256": 7']],
        "seal a list": [[seal, '"sha256": ["b2"]']],
        "seal empty": [[seal, '"sha256": ""']],
        "seal short": [[seal, seal[:-3] + '"']],
        "seal long": [[seal, seal[:-1] + '00"']],
        "seal upper case": [[seal, seal.upper().replace('"SHA256"', '"sha256"')]],
        "seal not hex": [[seal, seal[:-2] + 'zz"']],
        "seal of zeros": [[seal, '"sha256": "' + "0" * 64 + '"']],
        "seal with a space": [[seal, seal[:-1] + ' "']],
        "seal of 200 characters": [[seal, '"sha256": "' + "a" * 200 + '"']],
        "seal duplicated": [[seal, seal + ", " + seal]],
        "alpha 0.26, old seal": [['"alpha": 0.25', '"alpha": 0.26']],
        "alpha 2.5e-1, old seal": [['"alpha": 0.25', '"alpha": 2.5e-1']],
        "alpha 0.250, old seal": [['"alpha": 0.25', '"alpha": 0.250']],
        "threshold 0.50, old seal": [['"threshold": 0.5', '"threshold": 0.50']],
        "n 173.0, old seal": [['"n": 173', '"n": 173.0']],
        "max_iter 1e3, old seal": [['"max_iter": 1000', '"max_iter": 1e3']],
        "intercept one digit less, old seal": [
            ['"intercept": 0.9396492252673648', '"intercept": 0.939649225267365']
        ],
        "random_state 0.0, old seal": [['"random_state": 0', '"random_state": 0.0']],
        "C 1, old seal": [['"C": 1.0', '"C": 1']],
        "C 1e0, old seal": [['"C": 1.0', '"C": 1e0']],
        "escaped letter in format, old seal": [
            ['"format": "regime-router"', '"format": "regime-route\\u0072"']
        ],
        "key escaped, old seal": [['"alpha": 0.25', '"\\u0061lpha": 0.25']],
        "whitespace only changed": [['"alpha": 0.25', '"alpha"  :  0.25']],
        "keys reordered": [
            ['"alpha": 0.25,\n', ""],
            ['"threshold": 0.5', '"threshold": 0.5, "alpha": 0.25'],
        ],
        "n_iter 8, old seal": [['"n_iter": 7', '"n_iter": 8']],
        "extra key, old seal": [['"n_iter": 7', '"n_iter": 7, "note": "x"']],
        "seal a nested object": [[seal, '"sha256": {"value": "b2"}']],
    }
    return [{"class": "seals", "name": name, "model": {"replace": r}} for name, r in forms.items()]


def build_cases() -> list[dict[str, Any]]:
    return [*_size_cases(), *_nesting_cases(), *_number_cases(), *_field_cases(), *_seal_cases()]


def argv_of(case: dict[str, Any], model: Path | None) -> list[str]:
    """The ``route`` arguments of ``case`` (``model``: where its model file was written)."""
    argv = ["--question", expand(case.get("question", QUESTION))]
    argv += ["--bridge", expand(case.get("bridge", BRIDGE))]
    argv += ["--bridge-title", expand(case.get("title", TITLE))]
    if model is not None:
        argv += ["--model", str(model)]
    return argv


def one_line(message: str) -> str:
    """A message as ``router.js`` prints it: on one line (a line break and the blanks around it
    are one space)."""
    pieces = message.rstrip("\n").split("\n")
    out = pieces[0]
    for piece in pieces[1:]:
        out = out.rstrip() + " " + piece.lstrip()
    return out


def run_python(case: dict[str, Any], model: Path | None) -> tuple[int, str]:
    """``regime route``'s exit status and error line (without its prefix; "" on success),
    ``model``'s path written as ``{model}``."""
    from regime_core.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["route", *argv_of(case, model)])
    line = one_line(err.getvalue().removeprefix("regime: error: "))
    return code, line.replace(str(model), "{model}") if model is not None else line


def write_table(work: Path) -> None:
    """Run every case through ``regime route`` and write the table."""
    from regime_core.router.model import default_router_path

    packaged = default_router_path().read_text(encoding="utf-8")
    cases = []
    for number, case in enumerate(build_cases()):
        model = None
        if "model" in case:
            model = work / f"model-{number}.json"
            model.write_text(model_text(case["model"], packaged), encoding="utf-8")
        status, line = run_python(case, model)
        cases.append({**case, "status": status, "line": line})
    TABLE.write_text(
        json.dumps({"about": __doc__.split("\n\n")[1], "cases": cases}, indent=1) + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent.parent))
    with tempfile.TemporaryDirectory() as tmp:
        write_table(Path(tmp))
    print(f"wrote {TABLE}")
