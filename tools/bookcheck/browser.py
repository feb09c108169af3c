"""Open every page of the rendered book in headless Chromium, as a reader on a laptop and on a
phone would, save screenshots, and report what only a browser can see.

:func:`check_in_browser` serves the HTML build on ``127.0.0.1`` (an ephemeral port; every other
host name resolves to nothing, so a page that needs the network shows it), loads each page of
:func:`tools.bookcheck.check.book_pages` but redirects at every width (by default
:data:`WIDTHS`: 390, 768, 1366 and 1920 px), waits for MathJax's first
typeset, the fonts and the book's own script (``regime.js``), runs :data:`PAGE_SCRIPT` in the page,
and saves a screenshot to ``<screenshots>/<width>/<page>.png`` (pages taller than
:data:`MAX_SCREENSHOT_HEIGHT` are cut there). Problems, as
:class:`tools.bookcheck.check.Problem`:

- ``overflow``: at a phone's width (:data:`OVERFLOW_WIDTHS`), an element reaching past the
  right edge of the viewport that is not inside a horizontally scrollable container
  (``overflow-x: auto`` or ``scroll``); a reader must scroll the whole page sideways, or cannot
  see it at all.
- ``math``: maths left as source (``$...$``, ``$$``, ``\\(``, ``\\[`` in visible text outside
  code), a maths element MathJax did not typeset, a MathJax error (``mjx-merror``), MathJax
  not loading on a page with maths, or a displayed formula wider than its box that is cut off
  or scrolls without the cue ``regime.js`` gives it.
- ``console``: an error in the browser's console while the page loads: an uncaught exception
  (a script declared twice: "Identifier ... has already been declared"), ``console.error``,
  or a resource that failed to load.
- ``figure-text``: at any width, a figure of :mod:`regime_core.book.figures` whose smallest text
  (its SVG records the size in points) is drawn smaller than :data:`MIN_FIGURE_TEXT_PX` CSS
  pixels once the image is scaled to the page.
- ``clipped-cell``: at any width, a table whose cells a reader cannot see whole: cut by a box
  that clips, past the screen's edge, or out of view in a box that scrolls sideways without the
  visible hint ``regime.js`` puts above it.
- ``raw-markup``: source markup shown as text outside code: RST literals and roles, MyST roles,
  Markdown bold, links, pipe tables and fences.
- ``landing-budget``: the landing page (where ``index.html`` leads) over its budgets
  (:data:`LANDING_MAX_WORDS` words of prose and captions at a laptop's width,
  :data:`LANDING_MAX_HEIGHT_PX` tall).
- ``load``: a page that did not load, or on which the check script failed.

The browser is the Debian package ``chromium`` (found on ``PATH``), driven by Playwright, whose
wheel brings its own driver: nothing is downloaded, and no debugging port is opened.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from playwright.sync_api import Browser, CDPSession, ConsoleMessage, Error, Page, sync_playwright

from regime_core.integrity import atomic_write_bytes, make_directory
from tools.bookcheck.check import Problem, book_pages, redirect_target

BROWSER_KINDS: tuple[str, ...] = (
    "overflow", "math", "console", "figure-text", "clipped-cell", "raw-markup", "landing-budget",
)  # fmt: skip
# What the book promises its readers in a browser.
#: The viewport widths, in CSS px, at which every page is read: a phone, a tablet, a laptop and a
#: desktop.
WIDTHS: tuple[int, ...] = (390, 768, 1366, 1920)
#: The smallest text a figure may show on any page at any of :data:`WIDTHS`, in CSS px.
MIN_FIGURE_TEXT_PX: float = 9.0
#: The landing page's budget of words, read in its article at a laptop's width: its prose and
#: captions (a figure's own labels, drawn in HTML like the verdict chart's or in an image, are
#: not prose).
LANDING_MAX_WORDS: int = 900
#: The landing page's budget of height, in CSS px, at a laptop's and a phone's width.
LANDING_MAX_HEIGHT_PX: dict[int, int] = {1366: 5000, 390: 9000}
OVERFLOW_WIDTHS: tuple[int, ...] = (390,)
VIEWPORT_HEIGHTS: dict[int, int] = {390: 844, 768: 1024, 1366: 768, 1920: 1080}
PHONE_BELOW = 700  # narrower viewports are emulated as a phone (the viewport meta tag honoured)
MAX_SCREENSHOT_HEIGHT = 16000  # CSS px; taller captures exceed what Chromium can paint at once
CHROMIUM_NAMES: tuple[str, ...] = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
# Beside Playwright's own switches (headless, no first run, no extensions, no background
# networking...), ours, so that the book's pages can reach nothing but 127.0.0.1 whatever
# Playwright's defaults become.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)

# Runs in each page once it has loaded; resolves to a JSON-able object. Kept in one place so that
# what "overflow" and "unrendered maths" mean is read here, not spread over Python.
PAGE_SCRIPT = r"""
async (budgetMs) => {
  const started = Date.now();
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const left = () => Math.max(0, budgetMs - (Date.now() - started));

  // MathJax is loaded deferred on pages with maths; its startup promise resolves once the first
  // typeset is done.
  const mathNodes = () => [...document.querySelectorAll("span.math, div.math")];
  let mathjax = "no maths";
  if (mathNodes().length || window.MathJax) {
    const ready = () => window.MathJax && MathJax.startup && MathJax.startup.promise;
    while (left() > 0 && !ready()) await sleep(50);
    if (ready()) {
      const done = await Promise.race([
        MathJax.startup.promise.then(() => true, () => false),
        sleep(left()).then(() => false),
      ]);
      mathjax = done ? "typeset" : "timed out";
    } else {
      mathjax = "not loaded";
    }
  }
  if (document.fonts) await Promise.race([document.fonts.ready, sleep(left())]);
  for (const img of document.images) {
    if (!img.complete) await Promise.race([img.decode().catch(() => null), sleep(left())]);
  }
  // the book's own script (regime.js) marks the boxes that scroll once MathJax is done
  if (window.regimeReady) await Promise.race([window.regimeReady.catch(() => null), sleep(left())]);

  const visible = (el) =>
    el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  const describe = (el) => {
    const parts = [];
    for (let a = el; a && a !== document.body && parts.length < 4; a = a.parentElement) {
      let part = a.tagName.toLowerCase();
      if (a.id) {
        parts.unshift(part + "#" + a.id);
        break;
      }
      const classes = [...a.classList].slice(0, 2);
      if (classes.length) part += "." + classes.join(".");
      parts.unshift(part);
    }
    return parts.join(" > ");
  };
  const textNodes = function* () {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) yield walker.currentNode;
  };
  const words = (text, n) => {
    const chars = Array.from((text || "").replace(/\s+/g, " ").trim());  // whole code points
    return chars.length > n ? chars.slice(0, n).join("") + "…" : chars.join("");
  };

  // (a) horizontal overflow: an element past the right edge, not in a sideways scroller
  const viewport = document.documentElement.clientWidth;
  const overflowX = (el, ...values) => values.includes(getComputedStyle(el).overflowX);
  // whether `test` holds for `el` or an ancestor of it (one inside <body> with `inBody`)
  const upFrom = (el, test, inBody = false) => {
    for (let a = el; a && !(inBody && a === document.body); a = a.parentElement) {
      if (test(a)) return true;
    }
    return false;
  };
  const fixed = (el) => upFrom(el, (a) => getComputedStyle(a).position === "fixed");
  const inScroller = (el) => upFrom(el, (a) => overflowX(a, "auto", "scroll"), true);
  const past = new Set();
  // elements whose box reaches past the edge (a scroller too wide is itself past the edge)
  for (const el of document.body.getElementsByTagName("*")) {
    const box = el.getBoundingClientRect();
    if (box.width <= 0 || box.height <= 0 || box.right <= viewport + 0.5) continue;
    if (!visible(el) || fixed(el) || inScroller(el.parentElement)) continue;
    past.add(el);
  }
  // text running past the edge of a box that does not scroll (a long line in a <pre>)
  const range = document.createRange();
  for (const node of textNodes()) {
    const parent = node.parentElement;
    if (!parent || past.has(parent) || !node.textContent.trim()) continue;
    range.selectNodeContents(node);
    const box = range.getBoundingClientRect();
    if (box.width <= 0 || box.right <= viewport + 0.5) continue;
    if (!visible(parent) || fixed(parent) || inScroller(parent)) continue;
    past.add(parent);
  }
  const outermost = [...past].filter((el) => !upFrom(el.parentElement, (a) => past.has(a)));

  // reported per block (a signature line, a paragraph, a table), not per inline piece of it
  const display = (el) => getComputedStyle(el).display;
  const blockOf = (el) => {
    let block = el;
    while (block.parentElement && block.parentElement !== document.body &&
           (display(block).startsWith("inline") || display(block) === "contents")) {
      block = block.parentElement;
    }
    return block;
  };
  const clipped = (el) => upFrom(el.parentElement, (a) => overflowX(a, "hidden", "clip"));
  const rightEdge = (el) => {
    range.selectNodeContents(el);
    return Math.max(el.getBoundingClientRect().right, range.getBoundingClientRect().right);
  };
  const blocks = new Map();
  for (const el of outermost) {
    const block = blockOf(el);
    const right = Math.round(rightEdge(el));
    const seen = blocks.get(block);
    if (!seen || right > seen.right) blocks.set(block, { el: el, right: right });
  }
  const overflow = [...blocks].map(([block, { el, right }]) => ({
    where: describe(block),
    right: right,
    text: words(block.innerText, 60),
    cut: clipped(el),
  }));

  // (b) maths left as source, maths not typeset, MathJax errors
  const math = [];
  if (mathjax === "not loaded" || mathjax === "timed out") {
    math.push("MathJax " + mathjax + " on a page with maths");
  }
  const source = /\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|(?<![\w$])\$[^\s$][^$\n]*\$(?![\w$])/;
  const skip = "script, style, pre, code, kbd, samp, textarea, noscript, template, " +
    "mjx-container, .highlight";
  for (const node of textNodes()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || !visible(parent)) continue;
    if (source.test(node.textContent)) math.push("maths as source: " + words(node.textContent, 80));
  }
  for (const el of mathNodes()) {
    if (visible(el) && !el.querySelector("mjx-container") && !source.test(el.textContent)) {
      math.push("maths not typeset: " + words(el.textContent, 80));
    }
  }
  // a displayed formula wider than its box: it must scroll, and say so (regime.js marks it)
  for (const el of document.querySelectorAll('mjx-container[display="true"]')) {
    if (!visible(el) || el.scrollWidth <= el.clientWidth + 1) continue;
    if (!overflowX(el, "auto", "scroll")) {
      math.push("a formula cut off: " + words(el.textContent, 60));
    } else if (!el.classList.contains("regime-scrolls")) {
      math.push("a formula that scrolls with no cue: " + words(el.textContent, 60));
    }
  }
  for (const el of document.querySelectorAll("mjx-merror")) {
    math.push("MathJax error: " + words(el.getAttribute("data-mjx-error") || el.textContent, 80));
  }

  // (c) the article's images as drawn: their file and the width they are shown at
  const article = document.querySelector("article") || document.body;
  const images = [...article.querySelectorAll("img")].filter(visible).map((img) => ({
    src: img.currentSrc || img.src,
    shown: img.getBoundingClientRect().width,
  }));

  // (d) table cells a reader cannot see whole: cut by a box that clips, past the screen's edge,
  // or out of view in a box that scrolls sideways with no visible hint that it does
  const hinted = (box) => {
    const hint = box.previousElementSibling;
    return Boolean(hint && hint.matches(".regime-scroll-hint") && visible(hint));
  };
  const cutBy = (el) => {  // the nearest box around el that clips or scrolls sideways
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (overflowX(a, "hidden", "clip", "auto", "scroll")) return a;
    }
    return null;
  };
  const tables = new Map();
  for (const cell of article.querySelectorAll("td, th")) {
    const cellBox = cell.getBoundingClientRect();
    if (cellBox.width <= 0 || cellBox.height <= 0 || !visible(cell)) continue;
    let why = null;
    const outer = cutBy(cell);
    if (cell.scrollWidth > cell.clientWidth + 1 && overflowX(cell, "hidden", "clip")) {
      why = "its text is cut";
    } else if (outer) {
      const o = outer.getBoundingClientRect();
      const innerLeft = o.left + outer.clientLeft;
      const innerRight = innerLeft + outer.clientWidth;
      if (cellBox.right > innerRight + 1 || cellBox.left < innerLeft - 1) {
        if (overflowX(outer, "hidden", "clip")) why = "cut off by the box around it";
        else if (!hinted(outer)) why = "out of view in a box that scrolls sideways with no hint";
      }
    } else if (cellBox.right > viewport + 0.5) {
      why = "past the screen's edge";
    }
    if (why === null) continue;
    const table = cell.closest("table") || cell;
    const seen = tables.get(table) || { where: describe(table), why: why, cells: 0, text: "" };
    seen.cells += 1;
    if (!seen.text) seen.text = words(cell.innerText, 40);
    tables.set(table, seen);
  }

  // (e) source markup shown as text: RST literals and roles, MyST roles, Markdown emphasis,
  // links, pipe tables and fences, anywhere outside code
  const MARKUP = [
    [/``[^`\s][^`]*``/, "an RST literal"],
    [/(?<![\w`]):(?:[a-z]+:)?[a-z]+:`[^`]+`/, "an RST role"],
    [/\{[a-z][a-z-]*(?::[a-z-]+)?\}`[^`]*`/, "a MyST role"],
    [/\*\*[^*\s][^*\n]*\*\*/, "Markdown bold"],
    [/\[[^\]\n]+\]\((?:https?:|\.|\/|#)[^)\s]*\)/, "a Markdown link"],
    [/\|\s*:?-{3,}:?\s*\|/, "a Markdown table"],
    [/(?:^|\n)\s*(?:```|:::)/, "a Markdown fence"],
  ];
  const markup = [];
  for (const node of textNodes()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || !visible(parent)) continue;
    for (const [pattern, what] of MARKUP) {
      const hit = pattern.exec(node.textContent);
      if (hit) markup.push(what + ": " + words(hit[0], 60));
    }
  }

  // (f) the words a reader reads in the article (tokens holding a letter or a digit): its prose
  // and captions; a figure's own labels (an image's are not text either) are not prose
  const countWords = (text) => (text || "").split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
  let figureLabels = 0;
  for (const fig of article.querySelectorAll("figure")) {
    const caption = fig.querySelector("figcaption");
    figureLabels += countWords(fig.innerText) - countWords(caption ? caption.innerText : "");
  }
  const articleWords = { length: countWords(article.innerText) - figureLabels };

  return {
    images: images,
    cells: [...tables.values()],
    markup: [...new Set(markup)],
    words: articleWords.length,
    viewport: viewport,
    scrollWidth: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    mathjax: mathjax,
    overflow: overflow,
    math: [...new Set(math)],
  };
}
"""


@dataclass(frozen=True)
class PageView:
    """One page at one width: what :data:`PAGE_SCRIPT` found, and where its screenshot is."""

    page: str
    width: int
    screenshot: Path | None
    mathjax: str
    scroll_width: int
    height: int
    overflow: tuple[dict[str, Any], ...]
    math: tuple[str, ...]
    seconds: float
    error: str | None = None
    console: tuple[str, ...] = ()
    images: tuple[dict[str, Any], ...] = ()
    cells: tuple[dict[str, Any], ...] = ()
    markup: tuple[str, ...] = ()
    words: int = 0

    def as_dict(self) -> dict[str, Any]:
        shot = None if self.screenshot is None else str(self.screenshot)
        return {**asdict(self), "screenshot": shot, "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class BrowserReport:
    """Every page view, the problems they show, where the screenshots are, and the time."""

    views: tuple[PageView, ...]
    screenshots: Path
    seconds: float
    overflow_widths: tuple[int, ...] = field(default=OVERFLOW_WIDTHS)
    html_dir: Path | None = None
    landing: str | None = None

    @property
    def problems(self) -> list[Problem]:
        found: set[Problem] = set()
        for view in self.views:
            if view.error is not None:
                found.add(Problem(view.page, "load", f"{view.width} px: {view.error}"))
                continue
            if view.width in self.overflow_widths:
                for item in view.overflow:
                    found.add(Problem(view.page, "overflow", _overflow_detail(view, item)))
                if not view.overflow and view.scroll_width > view.width:
                    detail = f"{view.width} px: the page is {view.scroll_width} px wide"
                    found.add(Problem(view.page, "overflow", detail))
            found.update(Problem(view.page, "math", what) for what in view.math)
            found.update(
                Problem(view.page, "console", f"{view.width} px: {what}") for what in view.console
            )
            if self.html_dir is not None:
                found.update(
                    Problem(view.page, "figure-text", what)
                    for what in small_figure_text(self.html_dir, view)
                )
            found.update(
                Problem(view.page, "clipped-cell", _cell_detail(view, item)) for item in view.cells
            )
            found.update(Problem(view.page, "raw-markup", what) for what in view.markup)
            if view.page == self.landing:
                found.update(
                    Problem(view.page, "landing-budget", what) for what in landing_overruns(view)
                )
        return sorted(found)

    def as_dict(self) -> dict[str, Any]:
        return {
            "screenshots": str(self.screenshots),
            "seconds": round(self.seconds, 1),
            "problems": [p.as_dict() for p in self.problems],
            "views": [v.as_dict() for v in self.views],
        }


def _overflow_detail(view: PageView, item: dict[str, Any]) -> str:
    effect = "cut off" if item.get("cut") else "the page scrolls sideways"
    text = f": “{item['text']}”" if item.get("text") else ""
    return f"{view.width} px: {item['where']} reaches {item['right']} px ({effect}){text}"


def _cell_detail(view: PageView, item: dict[str, Any]) -> str:
    cells = "1 cell" if item.get("cells") == 1 else f"{item.get('cells')} cells"
    text = f", first “{item['text']}”" if item.get("text") else ""
    return f"{view.width} px: {item['where']}: {cells} {item['why']}{text}"


def landing_overruns(
    view: PageView,
    max_words: int = LANDING_MAX_WORDS,
    max_heights: Mapping[int, int] = LANDING_MAX_HEIGHT_PX,
) -> list[str]:
    """What of the landing page's budgets ``view`` exceeds: its words (counted at the widest
    width the budget of heights names, a laptop's) and its height at a width with a budget."""
    found = []
    if view.width == max(max_heights, default=view.width) and view.words > max_words:
        found.append(f"{view.width} px: {view.words:,} words (the budget is {max_words:,})")
    limit = max_heights.get(view.width)
    if limit is not None and view.height > limit:
        found.append(f"{view.width} px: {view.height:,} px tall (the budget is {limit:,} px)")
    return found


def landing_page(html_dir: Path | str) -> str | None:
    """The page a reader lands on: where the build's ``index.html`` redirects (relative to the
    build), or ``index.html`` itself; None without one."""
    index = Path(html_dir) / "index.html"
    if not index.is_file():
        return None
    target = redirect_target(index)
    return unquote(urlsplit(target).path).lstrip("./") or "index.html" if target else "index.html"


def figure_text_px(figure: Path, shown: float) -> float | None:
    """How tall, in CSS pixels, the smallest text of a book figure is drawn when its SVG is
    shown ``shown`` CSS pixels wide; None for an image that does not record its smallest text
    (not one of :mod:`regime_core.book.figures`)."""
    from regime_core.book.figures.encodings import SMALLEST_TEXT_KEY, WIDTH_PT_KEY, figure_text

    carried = figure_text(figure)
    if SMALLEST_TEXT_KEY not in carried or float(carried.get(WIDTH_PT_KEY, 0)) <= 0:
        return None
    points, width_pt = float(carried[SMALLEST_TEXT_KEY]), float(carried[WIDTH_PT_KEY])
    natural = width_pt * 96 / 72  # the SVG's own width in CSS px (96 px to 72 pt)
    return points * 96 / 72 * shown / natural


def small_figure_text(html_dir: Path, view: PageView) -> list[str]:
    """The figures of ``view`` whose smallest text is drawn below :data:`MIN_FIGURE_TEXT_PX`.

    An image shown inside a link to its own file (``regime.js``: a tap opens it full size) is
    still judged as shown on the page."""
    found = []
    for image in view.images:
        path = unquote(urlsplit(str(image.get("src", ""))).path).lstrip("/")
        file = Path(html_dir) / path
        px = figure_text_px(file, float(image.get("shown", 0)))
        if px is not None and px < MIN_FIGURE_TEXT_PX:
            found.append(
                f"{view.width} px: {file.name}: its smallest text is drawn {px:.1f} px high "
                f"(below {MIN_FIGURE_TEXT_PX:g})"
            )
    return found


def screenshot_path(screenshots: Path, width: int, page: str) -> Path:
    """``<screenshots>/<width>/<page without .html>.png``."""
    return screenshots / str(width) / Path(page).with_suffix(".png")


def find_chromium(explicit: str | Path | None = None) -> str | None:
    """The Chromium executable: ``explicit`` if given, else the first of :data:`CHROMIUM_NAMES`
    on ``PATH``; None when there is none."""
    if explicit is not None:
        return str(explicit) if Path(explicit).is_file() else shutil.which(str(explicit))
    return next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)


@contextmanager
def launch(executable: str) -> Iterator[Browser]:
    """Headless Chromium ``executable`` for the duration; it and Playwright's driver end after.

    Without its sandbox, which needs user namespaces that containers and root (CI) often lack:
    the browser only ever opens the book, served from 127.0.0.1."""
    with sync_playwright() as playwright:
        yield playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS, chromium_sandbox=False
        )


def open_tab(browser: Browser, width: int, height: int) -> Page:
    """A tab of a fresh context, ``width`` x ``height`` CSS px at scale 1, as a phone below
    :data:`PHONE_BELOW` px."""
    context = browser.new_context(
        viewport={"width": width, "height": height},
        device_scale_factor=1,
        is_mobile=width < PHONE_BELOW,
    )
    return context.new_page()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(directory: Path | str) -> Iterator[str]:
    """Serve ``directory`` over HTTP on ``127.0.0.1`` for the duration; yields its base URL."""
    handler = partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def console_errors(page: Page) -> list[str]:
    """A list that collects the errors of ``page``'s console from now on: uncaught exceptions,
    ``console.error`` (and failed ``console.assert``) calls, and resources that failed to load.
    Clear it before each navigation."""
    found: list[str] = []

    def exception(error: Error) -> None:
        text = f"{error.name}: {error.message}" if error.name else error.message
        found.append(text.splitlines()[0] if text.strip() else "an uncaught exception")

    def message(entry: ConsoleMessage) -> None:
        url = entry.location.get("url", "")
        # the browser asks the server's root for /favicon.ico on its own; no page declares it
        if entry.type in ("error", "assert") and not url.endswith("/favicon.ico"):
            called = "console.error: " if entry.args else ""  # a failed load has no arguments
            found.append(f"{called}{entry.text} {url}".strip()[:200])

    page.on("pageerror", exception)
    page.on("console", message)
    return found


def check_in_browser(
    html_dir: Path | str,
    *,
    screenshots: Path | str | None = None,
    widths: Sequence[int] = WIDTHS,
    overflow_widths: Sequence[int] = OVERFLOW_WIDTHS,
    pages: Sequence[str] | None = None,
    chromium: str | None = None,
    timeout: float = 60.0,
    progress: Callable[[PageView], object] | None = None,
) -> BrowserReport:
    """Load every page of the build at ``html_dir`` at each of ``widths`` in headless Chromium.

    ``screenshots`` defaults to ``screenshots`` beside ``html_dir`` (``_build/screenshots``),
    where ``report.json`` then holds what the page script found on every page at every width;
    ``pages`` (paths relative to the build) restricts the pages; ``timeout`` bounds each page;
    ``progress`` is called with each page view as it is done.
    Raises ``FileNotFoundError`` when Chromium is not installed.
    """
    root = Path(html_dir).resolve()
    executable = find_chromium(chromium)
    if executable is None:
        raise FileNotFoundError(
            "Chromium is not installed (Debian: apt-get install chromium); "
            "it is needed to check the book in a browser"
        )
    shots = Path(screenshots) if screenshots is not None else root.parent / "screenshots"
    names = (
        list(pages)
        if pages is not None
        else [  # a redirect shows nothing, and leaves while it is captured
            page.relative_to(root).as_posix()
            for page in book_pages(root)
            if redirect_target(page) is None
        ]
    )
    started = time.perf_counter()

    def read(width: int) -> list[PageView]:  # in a browser of its own: Playwright's objects
        views = []  # belong to the thread that made them, and each width has its thread
        with launch(executable) as browser:
            tab = open_tab(browser, width, VIEWPORT_HEIGHTS.get(width, 800))
            tab.set_default_timeout(timeout * 1000)
            errors = console_errors(tab)
            devtools = tab.context.new_cdp_session(tab)
            for name in names:
                shot = screenshot_path(shots, width, name)
                views.append(_view(tab, devtools, errors, base, name, width, shot, timeout))
                if progress is not None:
                    progress(views[-1])
        return views

    # a browser keeps one core busy loading and painting pages while its driver waits: the
    # widths are read side by side, one browser each, as many at once as there are cores
    with serve(root) as base, ThreadPoolExecutor(min(len(widths), os.cpu_count() or 1)) as pool:
        views = [view for width_views in pool.map(read, widths) for view in width_views]
    report = BrowserReport(
        tuple(views),
        shots,
        time.perf_counter() - started,
        tuple(overflow_widths),
        root,
        landing_page(root),
    )
    # by the writers' rule (regime_core.integrity): a special file or a dangling link in place of
    # the report or a screenshot is refused naming it, never replaced
    make_directory(shots)
    text = json.dumps(report.as_dict(), indent=1, ensure_ascii=False) + "\n"
    atomic_write_bytes(shots / "report.json", text.encode("utf-8"))
    return report


def _view(
    tab: Page,
    devtools: CDPSession,
    errors: list[str],
    base: str,
    page: str,
    width: int,
    shot: Path,
    timeout: float,
) -> PageView:
    started = time.perf_counter()
    try:
        # each page as a first visit: the theme keeps the sidebar's scroll (and the colour mode)
        # in the origin's storage, which the previous page would otherwise hand on
        tab.evaluate("try { sessionStorage.clear(); localStorage.clear(); } catch (e) {}")
        errors.clear()
        tab.goto(base + page, wait_until="load")
        found = tab.evaluate(PAGE_SCRIPT, int(timeout * 1000 * 0.5))
        height = min(int(found["height"]), MAX_SCREENSHOT_HEIGHT)
        clip = {"x": 0, "y": 0, "width": int(found["viewport"]), "height": height, "scale": 1}
        # Chromium's own call, as tab.screenshot cannot ask for the fast PNG encoding: with it
        # the whole book took 30% longer
        capture = {"format": "png", "optimizeForSpeed": True, "captureBeyondViewport": True}
        image = devtools.send("Page.captureScreenshot", {**capture, "clip": clip})
    except Error as err:  # Playwright names the step: Page.goto, Page.evaluate...
        error = err.message.splitlines()[0]
        return PageView(page, width, None, "", 0, 0, (), (), time.perf_counter() - started, error)
    make_directory(shot.parent)
    atomic_write_bytes(shot, base64.b64decode(image["data"]))
    return PageView(
        page=page,
        width=width,
        screenshot=shot,
        mathjax=str(found["mathjax"]),
        scroll_width=int(found["scrollWidth"]),
        height=int(found["height"]),
        overflow=tuple(found["overflow"]),
        math=tuple(found["math"]),
        seconds=time.perf_counter() - started,
        console=tuple(dict.fromkeys(errors)),
        images=tuple(found.get("images", [])),
        cells=tuple(found.get("cells", [])),
        markup=tuple(found.get("markup", [])),
        words=int(found.get("words", 0)),
    )
