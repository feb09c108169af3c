"""Every figure of the book: one plotting module, one theme, a caption per figure.

A plot function takes a result object (or a table) and returns a :class:`Figure`: the Matplotlib
figure, the file name it is saved under, a caption that says what it shows and how (which colour,
marker and line means what), and alt text that says in one sentence what it shows. Notebooks hold
no plotting code; they call a function here, save the figure into their record's directory with
:meth:`Figure.save` and show it with :func:`show`, which displays the image and its caption in
the notebook whatever the Matplotlib backend (the book's build sets ``MPLBACKEND=Agg``, under
which ``plt.show()`` displays nothing). A figure is saved and shown as SVG (:meth:`Figure.svg`), so
that a reader zooming on a phone sees it sharp; the SVG carries its alt text, caption, encodings
and smallest text size (:meth:`Figure.metadata`): the book reads its alt text and caption from
there, and the book's checks (``tools/bookcheck``) hold captions against its encodings and
measure its text (:mod:`regime_core.book.figures.encodings`).

The theme (:func:`use_theme`, applied by every plot function) is seaborn's ``whitegrid`` with
the book's colour-blind-safe palette (:mod:`regime_core.book.palette`, which also gives each
verdict its one colour on every page) and fonts sized to stay legible on a phone: a
:data:`WIDTH`-inch figure shown across a 390-px screen (the book's script widens a figure to the
screen's edges on a phone, and a tap opens it full size) draws its smallest text, 10.5 pt,
9.3 px high; nothing may stick out of the figure's width, which would shrink it.
Labels come from :mod:`regime_core.book.names` and are words, not code names or formulas;
rates are drawn on axes that start at 0, differences in percentage points around a marked zero
line, an axis frames its data and its threshold, and legends sit outside the data.
:func:`quiet` keeps progress bars off the executed pages.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core.book import names, palette
from regime_core.book.figures import encodings

# --- Theme and colours ---------------------------------------------------------------------------

#: The palette (:data:`regime_core.book.palette.PALETTE`, seaborn's colour-blind-safe
#: "colorblind"), defined once for the figures and the style sheets.
PALETTE: tuple[str, ...] = palette.PALETTE
#: The name a caption uses for each colour of :data:`PALETTE` (greys are named by their value).
COLOUR_NAMES: dict[str, str] = {
    c: name for c, name in palette.COLOUR_NAMES.items() if name != "grey"
}

ARM_COLORS: dict[str, str] = {
    "q": PALETTE[0],
    "bridge": PALETTE[1],
    "union": PALETTE[2],
    "knockout": PALETTE[3],
    "entity": PALETTE[4],
    "routed": PALETTE[9],
    "router": PALETTE[9],
    "oracle": PALETTE[7],
    "soft": PALETTE[5],
}

REGIME_COLORS: dict[str, str] = {
    "Q-dominant": PALETTE[0],
    "B-dominant": PALETTE[2],
    "neither": PALETTE[7],
}

#: The colour of each verdict, the same on every page
#: (:data:`regime_core.book.palette.VERDICT_COLOURS`).
VERDICT_COLORS: dict[str, str] = palette.VERDICT_COLOURS

#: Font sizes in points; no text of a figure is smaller than :data:`SMALLEST_TEXT`. A
#: :data:`WIDTH`-inch figure (about 440 pt with its margin) shown across a 390-px phone draws
#: 10.5 pt as 9.3 px, and at its own size on a laptop as 14 px.
FONT_SIZES: dict[str, float] = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10.5,
    "legend.title_fontsize": 10.5,
    "figure.titlesize": 12.5,
}
SMALLEST_TEXT = 10.5

#: The width of a full-column figure, in inches.
WIDTH = 6.0
DPI = 150  # of an artist drawn as pixels inside the SVG (``rasterized``, a dense scatter)


@functools.cache
def use_theme() -> None:
    """Apply the book's theme (seaborn ``whitegrid``, the ``colorblind`` palette, the font sizes
    of :data:`FONT_SIZES`) to Matplotlib's global settings; applied once, later calls are free."""
    import seaborn as sns

    sns.set_theme(
        context="notebook",
        style="whitegrid",
        palette=list(PALETTE),
        rc={
            **FONT_SIZES,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titleweight": "regular",
            "figure.dpi": 100,
            "savefig.dpi": DPI,
            "legend.frameon": False,
            "grid.linewidth": 0.6,
        },
    )


def _pyplot() -> Any:
    import matplotlib.pyplot as plt

    use_theme()
    return plt


# --- The figure object, saving and showing -------------------------------------------------------


@dataclass
class Figure:
    """A Matplotlib figure with the file name it is saved under, a caption saying what it shows
    and how, and alt text saying in one sentence what it shows. Attributes of the Matplotlib
    figure (``savefig``, ``axes``...) are reachable on it, so code written for a bare Matplotlib
    figure keeps working."""

    figure: Any
    name: str
    caption: str
    alt: str = ""

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "figure":  # not yet set (e.g. during unpickling)
            raise AttributeError(attribute)
        return getattr(self.figure, attribute)

    def encodings(self) -> set[str]:
        """The colours and styles the figure draws (:func:`encodings.figure_encodings`)."""
        return encodings.figure_encodings(self.figure, COLOUR_NAMES)

    def metadata(self) -> dict[str, str]:
        """What the SVG carries besides the drawing: alt text, caption, encodings, smallest text."""
        return {
            encodings.ALT_KEY: self.alt,
            encodings.CAPTION_KEY: self.caption,
            encodings.ENCODINGS_KEY: ",".join(sorted(self.encodings())),
            encodings.SMALLEST_TEXT_KEY: f"{encodings.smallest_text(self.figure):g}",
        }

    def save(self, out_dir: Path | str) -> Path:
        """Write :meth:`svg` as ``<out_dir>/<name>.svg``, whole or not at all; returns the path,
        for the record's figures (:func:`regime_core.runner.records.write_record`)."""
        from regime_core.integrity import atomic_write_bytes

        target = Path(out_dir) / f"{self.name}.svg"
        atomic_write_bytes(target, self.svg())  # never half a figure, never onto a FIFO
        return target

    def svg(self) -> bytes:
        """The figure as SVG, the same bytes for the same figure on every run (no date or
        software version, ids from a fixed salt). Its glyphs are paths, so it looks the same
        where the theme's font is not installed. It carries :meth:`metadata`: alt text and
        caption as its title and description, the rest as ``data-`` attributes of its root
        (:func:`encodings.figure_text` reads them back)."""
        from xml.sax.saxutils import quoteattr

        import matplotlib

        carried = self.metadata()
        said = {key: carried.pop(key) for key in (encodings.ALT_KEY, encodings.CAPTION_KEY)}
        buffer = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": "regime", "svg.fonttype": "path"}):
            self.figure.savefig(
                buffer,
                format="svg",
                dpi=DPI,
                bbox_inches="tight",
                metadata={"Date": None, "Creator": None, **said},
            )
        attributes = "".join(f" data-{key}={quoteattr(value)}" for key, value in carried.items())
        return buffer.getvalue().replace(b"<svg ", f"<svg{attributes} ".encode(), 1)

    def _repr_svg_(self) -> str:
        return self.svg().decode("utf-8")

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.figure)


def show(fig: Figure, *, caption: bool = True) -> None:
    """Display ``fig`` in the notebook (the SVG, then its caption) and close it.

    It works under any backend, ``Agg`` included: the figure is rendered to SVG
    (:meth:`Figure.svg`, whose metadata give the book's ``<img>`` its alt text) and displayed."""
    from IPython.display import Markdown, display

    display({"image/svg+xml": fig.svg().decode("utf-8")}, raw=True)
    if caption and fig.caption:
        display(Markdown(f"*Figure: {fig.caption}*"))
    fig.close()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence progress bars (tqdm, transformers' weight-loading bar, huggingface_hub) and tqdm's
    "IProgress not found" notebook warning while the block runs.

    Only these are silenced: they report progress, not problems. Every other warning still
    shows (and the notebooks that turn runtime warnings into errors keep doing so). Bars of a
    library already imported are switched back on afterwards; a library first imported inside
    the block reads the environment then, and keeps its bars off in this process (a notebook
    kernel, where they would only clutter the page).
    """
    keys = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")
    saved_env = {key: os.environ.get(key) for key in keys}
    for key in keys:
        os.environ[key] = "1"
    undo: list[Any] = []
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None and not hub.are_progress_bars_disabled():
        hub.disable_progress_bars()
        undo.append(hub.enable_progress_bars)
    hf_logging = sys.modules.get("transformers.utils.logging")
    if hf_logging is not None and hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
        undo.append(hf_logging.enable_progress_bar)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"IProgress not found")
            yield
    finally:
        for action in undo:
            action()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --- Shared pieces -------------------------------------------------------------------------------


def _subplots(height: float, nrows: int = 1, ncols: int = 1, **options: Any) -> tuple[Any, Any]:
    """A figure of the full :data:`WIDTH`, ``height`` inches high, in constrained layout."""
    return _pyplot().subplots(
        nrows, ncols, figsize=(WIDTH, height), layout="constrained", **options
    )


def _grouped_bars(
    ax: Any, x: Any, series: Sequence[tuple[Any, str]], width: float, *, labelled: bool = False
) -> list[Any]:
    """Each ``(values, colour)`` of ``series`` as bars ``width`` wide side by side around ``x``
    (``labelled``: each bar labelled with its percentage); returns the bars, for the legend."""
    handles = []
    for i, (values, colour) in enumerate(series):
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, color=colour)
        if labelled:
            shown = [f"{v:.0%}" for v in values]
            ax.bar_label(bars, labels=shown, fontsize=SMALLEST_TEXT, padding=2)
        handles.append(bars)
    return handles


def _percent_axis(ax: Any, axis: str = "y", top: float = 1.0) -> None:
    """A rate axis from 0 to ``top`` labelled in percent."""
    from matplotlib.ticker import PercentFormatter

    (ax.set_ylim if axis == "y" else ax.set_xlim)(0, top)
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0, decimals=0))


def _legend_above(
    fig: Any, handles: Sequence[Any], labels: Sequence[str], ncols: int, *, below: bool = False
) -> None:
    """The figure's legend outside the axes, read row by row: above them, or below when a title
    takes the top."""
    ncols = max(1, min(ncols, len(handles)))
    # Matplotlib fills a legend column by column; order the entries so that it reads by rows.
    order = sorted(range(len(handles)), key=lambda i: (i % ncols, i // ncols))
    where = "outside lower center" if below else "outside upper center"
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc=where,
        ncols=ncols,
        frameon=False,
    )


def _bar_rows(ax: Any, y: Any, labels: Sequence[str]) -> None:
    """Horizontal bars' rows: labelled at ``y``, the first on top, no horizontal grid lines."""
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)


def colour_word(colour: str) -> str:
    """The word a caption uses for a colour of the theme (``"#029E73"`` → ``"green"``)."""
    return COLOUR_NAMES.get(colour) or encodings.colour_name(colour, COLOUR_NAMES) or colour


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _hit(k: int) -> str:
    return names.display("metric", f"hit@{k}")


# The plot functions, one module per part of the book, all importable from here.
from regime_core.book.figures.claims import (  # noqa: E402, F401
    forest,
    key_union_vs_q,
    regime_deltas,
    regime_shares,
    t1_r2,
    t1_scatter,
    t2_deltas,
    t2_hits,
    t3_drops,
)
from regime_core.book.figures.robustness import (  # noqa: E402, F401
    specification_curve,
    specification_curves,
)
from regime_core.book.figures.router import (  # noqa: E402, F401
    alpha_sweep,
    alpha_transfer,
    leave_one_feature_out,
    router_coefficients,
    router_training,
    routing_latency,
    selector_agreement,
    zero_shot_hits,
)
from regime_core.book.figures.statistics import interval_coverage  # noqa: E402, F401
from regime_core.book.figures.teaching import (  # noqa: E402, F401
    knockout_bars,
    regime_arms,
    sweep,
)
