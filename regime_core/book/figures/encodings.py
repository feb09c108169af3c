"""What a figure draws, read from its Matplotlib artists, for its caption to be held against.

A caption may name colours ("green bars"), hollow markers and dashed or dotted lines. Each of
these is an *encoding*; :func:`figure_encodings` reads the ones a figure really uses from its
lines, markers, bars, bands, images and legends. The saved SVG carries them
(:data:`ENCODINGS_KEY`) with its smallest text (:data:`SMALLEST_TEXT_KEY`), so that the book's
checks (``tools/bookcheck``, outside the package) can hold the captions of the chapter pages
against the figure they caption and measure its text on the page (:func:`figure_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What a book figure's SVG carries: alt text and caption (as Matplotlib writes its Dublin Core
#: title and description), encodings and smallest text in pt (``data-<key>`` attributes of root).
ALT_KEY = "Title"
CAPTION_KEY = "Description"
ENCODINGS_KEY = "regime-encodings"
SMALLEST_TEXT_KEY = "regime-smallest-text-pt"
#: The key :func:`figure_text` gives the width an SVG's root declares, in points.
WIDTH_PT_KEY = "width-pt"
_SVG = "{http://www.w3.org/2000/svg}"
_DUBLIN_CORE = {
    "{http://purl.org/dc/elements/1.1/}title": ALT_KEY,
    "{http://purl.org/dc/elements/1.1/}description": CAPTION_KEY,
}


def _rgba(colour: Any) -> tuple[float, float, float, float] | None:
    from matplotlib.colors import to_rgba

    try:
        rgba = to_rgba(colour)
    except (TypeError, ValueError):
        return None
    return None if rgba[3] == 0 else rgba


def colour_name(colour: Any, named: Mapping[str, str]) -> str | None:
    """The name of a colour: a grey, black or white when its channels are (nearly) equal, else
    the nearest of ``named`` (hex → name) within a small distance; None if transparent or far
    from every name."""
    rgba = _rgba(colour)
    if rgba is None:
        return None
    r, g, b, _ = rgba
    if max(r, g, b) - min(r, g, b) < 0.07:
        value = (r + g + b) / 3
        return "black" if value < 0.15 else "white" if value > 0.97 else "grey"
    best, distance = None, 1.0
    for hex_colour, name in named.items():
        nr, ng, nb, _ = _rgba(hex_colour) or (0.0, 0.0, 0.0, 1.0)
        d = ((r - nr) ** 2 + (g - ng) ** 2 + (b - nb) ** 2) ** 0.5
        if d < distance:
            best, distance = name, d
    return best if distance < 0.12 else None


def _artist_encodings(artist: Any, named: Mapping[str, str]) -> set[str]:
    from matplotlib.collections import Collection, PathCollection
    from matplotlib.colors import to_rgba_array
    from matplotlib.image import AxesImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    found: set[str] = set()

    def add(colour: Any) -> str | None:
        name = colour_name(colour, named)
        if name is not None:
            found.add(name)
        return name

    if not artist.get_visible():
        return found
    if isinstance(artist, Line2D):
        has_line = artist.get_linestyle() not in ("None", "none", "", " ")
        marker = artist.get_marker() not in (None, "None", "none", "", " ")
        if has_line:
            add(artist.get_color())
            style = artist.get_linestyle()
            if style in ("--", "dashed", "-."):
                found.add("dashed")
            if style in (":", "dotted"):
                found.add("dotted")
        if marker:
            face = colour_name(artist.get_markerfacecolor(), named)
            edge = add(artist.get_markeredgecolor())
            if face in (None, "white") and edge not in (None, "white"):
                found.add("hollow")
            elif face is not None:
                found.add(face)
    elif isinstance(artist, Collection):
        faces = [colour_name(c, named) for c in to_rgba_array(artist.get_facecolor())]
        edges = [colour_name(c, named) for c in to_rgba_array(artist.get_edgecolor())]
        found.update(n for n in faces + edges if n is not None)
        if (
            isinstance(artist, PathCollection)
            and len(edges) == len(faces)
            and any(
                f in (None, "white") and e not in (None, "white")
                for f, e in zip(faces, edges, strict=True)
            )
        ):
            found.add("hollow")
        styles = artist.get_linestyles() if hasattr(artist, "get_linestyles") else []
        if any(dashes is not None for _offset, dashes in styles):
            found.add("dashed")
    elif isinstance(artist, Patch):
        add(artist.get_facecolor())
        if artist.get_fill() is False or colour_name(artist.get_facecolor(), named) is None:
            add(artist.get_edgecolor())
    elif isinstance(artist, AxesImage):
        import numpy as np

        array = artist.get_array()
        if array is not None:  # an image whose data was never set shows no colour
            rgba = artist.to_rgba(array)
            for colour in np.unique(np.asarray(rgba).reshape(-1, 4), axis=0):
                add(colour)
    found.discard("white")
    return found


def figure_encodings(figure: Any, named: Mapping[str, str]) -> set[str]:
    """Every colour (by the names of ``named``, or grey, black) and style (hollow, dashed,
    dotted) the figure draws: its axes' lines, markers, collections, patches and images, and
    its legends' handles."""
    artists: list[Any] = []
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        artists += [*ax.get_lines(), *ax.collections, *ax.patches, *ax.images]
        for container in ax.containers:
            artists += [a for a in getattr(container, "patches", []) or [] if a is not None]
        legend = ax.get_legend()
        if legend is not None:
            artists += list(legend.legend_handles)
    for legend in figure.legends:
        artists += list(legend.legend_handles)
    found: set[str] = set()
    for artist in artists:
        if artist is not None:
            found |= _artist_encodings(artist, named)
    return found


def smallest_text(figure: Any) -> float:
    """The size in points of the smallest visible text of the figure (tick labels included)."""
    from matplotlib.text import Text

    figure.draw_without_rendering()  # places the ticks, so that hidden tick labels are hidden
    sizes = [
        float(text.get_fontsize())
        for text in figure.findobj(Text)
        # drawn: visible, with words, and inside a visible axes when it belongs to one
        if text.get_visible()
        and text.get_text().strip()
        and (text.axes is None or text.axes.get_visible())
    ]
    return min(sizes) if sizes else 0.0


def figure_text(path: str | Any) -> dict[str, str]:
    """What the SVG file of a book figure carries (:data:`ALT_KEY`, :data:`CAPTION_KEY`,
    :data:`ENCODINGS_KEY`, :data:`SMALLEST_TEXT_KEY`) and :data:`WIDTH_PT_KEY`; empty for
    another kind of file, or one that cannot be read."""
    from pathlib import Path
    from xml.etree.ElementTree import ParseError, iterparse

    file = Path(path)
    if file.suffix.lower() != ".svg" or not file.is_file():
        return {}
    found: dict[str, str] = {}
    try:
        # the root and its <metadata> come first: read no further than them
        for event, element in iterparse(file, events=("start", "end")):
            if event == "start" and element.tag == f"{_SVG}svg":
                found |= {k[5:]: v for k, v in element.items() if k.startswith("data-")}
                if element.get("width", "").endswith("pt"):
                    found[WIDTH_PT_KEY] = element.get("width", "").removesuffix("pt")
            elif event == "end" and element.tag in _DUBLIN_CORE:
                found[_DUBLIN_CORE[element.tag]] = element.text or ""
            elif event == "end" and element.tag == f"{_SVG}metadata":
                break
    except (OSError, ParseError):
        return {}
    return found
