"""The book wing: building the Jupyter Book, its figures and tables, and the words its findings
are written in.

The book's Sphinx extension is not here: it lives beside the book's pages
(``book/_ext/regime_book``) and imports this package, never the reverse.
"""
