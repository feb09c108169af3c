/* The book's own script, linked from every page by regime_book.site, beside
   regime.css. It only helps reading; every page reads the same without it.

   - A figure opens full size when tapped: each image of a book figure (a record's figure, one
     drawn at build time, a notebook's output) becomes a link to its own file, which a phone's browser can zoom.
     On a phone the figure spans the screen's whole width, past the column's margins.
   - A box that scrolls sideways says so: a wide table or display formula wider than its box gets
     the class regime-scrolls (regime.css shades the edge it can scroll to), and a table also gets
     a line above it, "Scroll sideways for the whole table". Boxes are measured again when the
     window changes size and once the images, fonts and MathJax's typesetting are in.

   window.regimeReady resolves once the page has been marked after its images, its fonts and
   MathJax's first typeset, so a check of the page (tools.bookcheck.browser) reads it as a
   reader sees it. */
(() => {
  "use strict";

  // a record's figure, one drawn while the book is built (regime-figure), a notebook's output
  const FIGURES = "article figure img, div.cell_output img";
  const MATHS = 'mjx-container[display="true"]';
  const HINT_CLASS = "regime-scroll-hint";
  const HINT_TEXT = "Scroll sideways for the whole table \u2192";

  function linkFigures() {
    for (const img of document.querySelectorAll(FIGURES)) {
      if (img.closest("a") || !img.getAttribute("src")) continue;
      const link = document.createElement("a");
      link.href = img.getAttribute("src");
      link.className = "regime-figure-link";
      link.title = "Open the figure at full size";
      img.replaceWith(link);
      link.appendChild(img);
    }
  }

  // On a phone, a figure spans the screen's full width, past the column's margins, or the full
  // width of the nearest box around it that clips or scrolls (which would otherwise cut it).
  const PHONE = window.matchMedia("(max-width: 600px)");
  function bleedFigures() {
    const screen = document.documentElement.clientWidth;
    for (const link of document.querySelectorAll("a.regime-figure-link")) {
      link.classList.remove("regime-bleed");
      link.style.marginLeft = link.style.width = "";
      if (!PHONE.matches) continue;
      let left = 0;
      let right = screen;
      for (let a = link.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX === "visible") continue;
        const box = a.getBoundingClientRect();
        left = Math.max(left, box.left + a.clientLeft);
        right = Math.min(right, box.left + a.clientLeft + a.clientWidth);
        break;
      }
      link.classList.add("regime-bleed");  // a block as wide as the column, until widened
      const shown = link.getBoundingClientRect();
      if (right - left <= shown.width + 1) {  // nothing to gain
        link.classList.remove("regime-bleed");
        continue;
      }
      link.style.width = right - left + "px";
      link.style.marginLeft = left - shown.left + "px";
    }
  }

  function hintBefore(box) {
    const previous = box.previousElementSibling;
    if (previous && previous.classList.contains(HINT_CLASS)) return previous;
    const hint = document.createElement("p");
    hint.className = HINT_CLASS;
    hint.textContent = HINT_TEXT;
    box.before(hint);
    return hint;
  }

  // the box in which a table scrolls sideways: the nearest one inside the article (the theme's
  // pst-scrollable-table-container, a notebook's output), else one made for it when it is wider
  // than its place, so that it scrolls on its own with its hint, not with the whole article
  function scrollerOf(table) {
    for (let a = table.parentElement; a && a !== document.body; a = a.parentElement) {
      if (a.matches("article, .bd-article-container")) break;
      if (["auto", "scroll"].includes(getComputedStyle(a).overflowX)) return a;
    }
    if (table.getBoundingClientRect().width <= table.parentElement.clientWidth + 1) return null;
    const box = document.createElement("div");
    box.className = "regime-table-scroll";
    table.replaceWith(box);
    box.appendChild(table);
    return box;
  }

  function markScrollers() {
    bleedFigures();
    for (const box of document.querySelectorAll(MATHS)) {
      box.classList.toggle("regime-scrolls", box.scrollWidth > box.clientWidth + 1);
    }
    for (const table of document.querySelectorAll("article table")) {
      if (table.parentElement.closest("table")) continue;  // a table in a table scrolls with it
      const box = scrollerOf(table);
      if (!box) continue;
      const scrolls = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("regime-scrolls", scrolls);
      const previous = box.previousElementSibling;
      if (scrolls) hintBefore(box).hidden = false;
      else if (previous && previous.classList.contains(HINT_CLASS)) previous.hidden = true;
    }
  }

  function afterMathJax() {
    // MathJax is loaded deferred, on the pages with maths only; wait for it a while
    return new Promise((resolve) => {
      let waited = 0;
      const poll = () => {
        const startup = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
        if (startup) startup.then(resolve, resolve);
        else if (waited > 10000 || !document.querySelector("span.math, div.math")) resolve();
        else {
          waited += 100;
          setTimeout(poll, 100);
        }
      };
      poll();
    });
  }

  const loaded = new Promise((resolve) => {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", resolve, { once: true });
    } else resolve();
  });
  window.regimeReady = loaded.then(() => {
    linkFigures();
    markScrollers();
    let pending = null;
    window.addEventListener("resize", () => {
      clearTimeout(pending);
      pending = setTimeout(markScrollers, 150);
    });
    // widths settle once the page's images and fonts are in, and MathJax has typeset
    const pageLoaded = new Promise((resolve) => {
      if (document.readyState === "complete") resolve();
      else window.addEventListener("load", resolve, { once: true });
    });
    const fonts = document.fonts ? document.fonts.ready : Promise.resolve();
    return Promise.all([pageLoaded, fonts, afterMathJax()]).then(markScrollers);
  });
})();
