"""The book's one palette (regime_core.book.palette): every verdict has one colour, the style
sheet and the figures use it, and the colours stay apart for a colour-blind reader."""

from __future__ import annotations

import itertools
import re

import pytest

from regime_book.claims import verdict_class
from regime_book.site import STATIC_DIR
from regime_core.book import palette
from regime_core.experiments.robustness_grid import DEGENERATE, NOT_JUDGED
from regime_core.runner.judge import VERDICTS
from tools.bookcheck.prose import caption_problems

CLAIMS_CSS = STATIC_DIR / "regime-claims.css"

# Machado, Oliveira and Fernandes (2009), severity 1: how a protanope, deuteranope and tritanope
# see a colour, as a matrix over linear RGB.
COLOUR_BLINDNESS: dict[str, tuple[tuple[float, float, float], ...]] = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
# The smallest distance (in sRGB, 0 to 1 per channel) between two verdicts' colours as a
# colour-blind reader sees them; the palette's closest pair (green and blue, for a tritanope) is
# 0.11 apart, the landing page's old "smaller" and "larger" (one colour) were 0.
MIN_DISTANCE = 0.1


def _css_verdict_colours() -> dict[str, str]:
    text = CLAIMS_CSS.read_text(encoding="utf-8")
    found = re.findall(
        r"^\.(regime-verdict-[a-z-]+) \{ --regime-verdict: (#[0-9A-Fa-f]{6}); \}", text, re.M
    )
    return {cls: colour.upper() for cls, colour in found}


def test_every_verdict_has_one_colour() -> None:
    assert set(palette.VERDICT_COLOURS) == {*VERDICTS, DEGENERATE, NOT_JUDGED}
    assert palette.VERDICT_COLOURS["not reproduced"] == palette.colour("vermilion")


def test_the_style_sheet_colours_each_verdict_as_the_palette_does() -> None:
    expected = {verdict_class(v): palette.VERDICT_COLOURS[v].upper() for v in VERDICTS}
    assert _css_verdict_colours() == expected
    # no other colour is given to a verdict anywhere in the style sheet (a dark-mode override...)
    text = CLAIMS_CSS.read_text(encoding="utf-8")
    assert text.count("--regime-verdict:") == len(VERDICTS)


def test_the_figures_use_the_palette() -> None:
    from regime_core.book import figures

    assert figures.VERDICT_COLORS is palette.VERDICT_COLOURS
    assert figures.PALETTE == palette.PALETTE
    assert figures.colour_word(palette.VERDICT_COLOURS["smaller than reported"]) == "orange"


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _srgb(channel: float) -> float:
    channel = min(max(channel, 0.0), 1.0)
    return 12.92 * channel if channel <= 0.0031308 else 1.055 * channel ** (1 / 2.4) - 0.055


def _seen(hex_colour: str, matrix: tuple[tuple[float, float, float], ...]) -> list[float]:
    rgb = [_linear(int(hex_colour[i : i + 2], 16) / 255) for i in (1, 3, 5)]
    return [_srgb(sum(m * c for m, c in zip(row, rgb, strict=True))) for row in matrix]


@pytest.mark.parametrize("kind", sorted(COLOUR_BLINDNESS))
def test_the_verdicts_colours_stay_apart_for_a_colour_blind_reader(kind: str) -> None:
    colours = {v: palette.VERDICT_COLOURS[v] for v in VERDICTS}  # the judged verdicts
    seen = {v: _seen(c, COLOUR_BLINDNESS[kind]) for v, c in colours.items()}
    close = [
        (a, b, round(distance, 3))
        for a, b in itertools.combinations(seen, 2)
        if (distance := sum((x - y) ** 2 for x, y in zip(seen[a], seen[b], strict=True)) ** 0.5)
        < MIN_DISTANCE
    ]
    assert close == []


def test_a_colour_blind_simulation_can_merge_colours() -> None:
    # the check above can fail: a crimson and an olive green, far apart to most readers, are one
    # colour to a deuteranope
    crimson, olive = "#B0182B", "#586C20"
    seen = [_seen(c, COLOUR_BLINDNESS["deuteranopia"]) for c in (crimson, olive)]
    assert sum((x - y) ** 2 for x, y in zip(*seen, strict=True)) ** 0.5 < MIN_DISTANCE
    normal = [_seen(c, ((1, 0, 0), (0, 1, 0), (0, 0, 1))) for c in (crimson, olive)]
    assert sum((x - y) ** 2 for x, y in zip(*normal, strict=True)) ** 0.5 > 0.3


def test_a_specification_curve_colours_and_names_each_verdict_as_the_palette_does() -> None:
    import numpy as np
    import pandas as pd

    from regime_core.book import figures

    verdicts = [v for v in VERDICTS if v != "not testable here"] + [DEGENERATE]
    n = len(verdicts)
    rows = pd.DataFrame(
        {
            "estimate": [0.01 * i for i in range(n - 1)] + [np.nan],
            "ci_lo": [0.01 * i - 0.02 for i in range(n - 1)] + [np.nan],
            "ci_hi": [0.01 * i + 0.02 for i in range(n - 1)] + [np.nan],
            "verdict": verdicts,
            "primary": [True] + [False] * (n - 1),
            "pool": ["question", "corpus"] * (n // 2) + ["question"] * (n % 2),
        }
    )
    fig = figures.specification_curve(
        rows, {"pool": ["question", "corpus"]}, title="t", estimate_label="Δ", name="spec"
    )
    try:
        for verdict in verdicts[:-1]:  # the degenerate reading has no estimate to draw
            word = figures.colour_word(palette.VERDICT_COLOURS[verdict])
            assert f"{word} {verdict}" in fig.caption
        assert caption_problems(fig) == []
    finally:
        fig.close()
