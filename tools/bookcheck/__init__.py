"""The rendered book's own checks, run from a checkout (``make book-check``, ``python -m
tools.bookcheck``) and by the tests; not part of the ``regime_core`` package, whose users never
call them. :mod:`tools.bookcheck.check` reads the HTML, :mod:`tools.bookcheck.browser` reads the
pages in headless Chromium, :mod:`tools.bookcheck.counts` holds the counts the prose prints, and
:mod:`tools.bookcheck.prose` holds captions and interval labels against what they name.

Sphinx and myst-nb check what they can while the book builds (``regime book``): warnings are
errors (``--warningiserror --nitpick``), and a notebook output written to stderr is an error
(``execute.stderr_output: error`` in ``_config.yml``, myst-nb's ``nb_output_stderr``).
"""
