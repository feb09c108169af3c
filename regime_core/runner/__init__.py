"""The runner: ``regime reproduce`` (papermill runs), results records, expected numbers,
verdicts."""
