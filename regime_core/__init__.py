"""Regime-conditional retrieval companion.

The package in layers, from the foundation up (nothing imports upward):

- foundation: ``config`` (every default), ``paper`` (every number of the paper, read from
  ``paper_claims.yml``), ``paths``, ``schema``, ``integrity``, ``text``, ``stats``, ``metrics``,
  ``vendor``;
- ``data/`` (raw files -> canonical examples, the regime predicates, the toy world),
  ``encoders/`` (registry, store, the embed stage), ``retrieval/`` (ranking, scoring, corpus
  scans, the union geometry);
- ``router/`` (features, labels, the estimator, the packaged model, training);
- ``experiments/`` (one module per claim, named like its notebook, run and page);
- ``teaching/`` (the demo on the toy world, sweeps, annotation kit);
- ``runner/`` (run declarations, reproduce, results records, judging the paper's claims,
  expected numbers, verdicts);
- ``book/`` (building the book, figures); ``cli/`` on top. The book's Sphinx extension is not
  part of the package: it lives beside the book's pages (``book/_ext/regime_book``).
"""
