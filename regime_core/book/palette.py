"""The book's one palette: the figures' colours and the colour of each verdict, on every page.

The colours are seaborn's colour-blind-safe ``colorblind`` palette, the Okabe-Ito colours in
all but shade, spelled out so that no colour depends on a library's state. A verdict has one
colour wherever it is shown: the claims chart and the verdict tables and cards (the style sheet
``book/_ext/regime_book/static/regime-claims.css``, held to :data:`VERDICT_COLOURS` by
``tests/test_book_palette.py``) and the specification curves
(:func:`regime_core.book.figures.specification_curve`). Colour is never the only channel: every
verdict is also written out in words.

Verdicts that call for the same reading share a hue family: green, it holds; orange and purple,
the effect is there but of another size; blue, what we cannot decide; vermilion, it does not
hold; greys, nothing to judge.
"""

from __future__ import annotations

#: Each colour of the palette with the one name a figure's caption uses for it
#: (``COLOUR_WORDS`` of ``tools/bookcheck/prose.py``).
COLOUR_NAMES: dict[str, str] = {
    "#0173B2": "blue",
    "#DE8F05": "orange",
    "#029E73": "green",
    "#D55E00": "vermilion",
    "#CC78BC": "purple",
    "#CA9161": "brown",
    "#FBAFE4": "pink",
    "#949494": "grey",
    "#ECE133": "yellow",
    "#56B4E9": "sky blue",
}
#: The palette's colours in order (a figure's first series is blue, its second orange...).
PALETTE: tuple[str, ...] = tuple(COLOUR_NAMES)
#: A light grey, for what is shown but not judged (lighter than the palette's grey).
LIGHT_GREY = "#CCCCCC"


def colour(name: str) -> str:
    """The palette's colour called ``name`` (``"green"`` → ``"#029E73"``); called with the names
    of :data:`COLOUR_NAMES` only, when this module is imported."""
    return next(hex_colour for hex_colour, said in COLOUR_NAMES.items() if said == name)


#: The colour of each verdict word: those of a claim's judgement
#: (:data:`regime_core.runner.judge.VERDICTS`) and those of a reading of a specification curve
#: that is not judged (:data:`regime_core.experiments.robustness_grid.DEGENERATE`,
#: ``NOT_JUDGED``).
VERDICT_COLOURS: dict[str, str] = {
    "reproduced": colour("green"),
    "smaller than reported": colour("orange"),
    "larger than reported": colour("purple"),
    "direction only": colour("sky blue"),
    "inconclusive (too few questions)": colour("blue"),
    "not reproduced": colour("vermilion"),
    "not testable here": colour("grey"),
    "degenerate": colour("grey"),
    "not judged": LIGHT_GREY,
}
