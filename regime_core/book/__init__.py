"""The book wing: building the Jupyter Book, its Sphinx extension, the figures, the router page."""
