"""The runner: ``regime reproduce`` (declarations, papermill children, run keys), results
records, the paper's claims judged on them, our expected numbers, verdicts."""
