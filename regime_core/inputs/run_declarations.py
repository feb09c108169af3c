"""``reproduce.yml``, declared: which notebooks run, with which parameters per profile, after
which runs (read by :func:`regime_core.runner.declarations.load_declarations`)."""

from __future__ import annotations

from regime_core.inputs import (
    Choice,
    Data,
    Either,
    Field,
    Flag,
    Format,
    Items,
    Nested,
    Pattern,
    Table,
    Text,
)

#: ``paper`` is the paper's own setting (1,000-question subsets, corpus pools, its three encoders
#: by hub name): it needs GPUs and the hub (book page "Scale: the paper's setting").
PROFILES: tuple[str, ...] = ("quick", "default", "full", "paper")
RUN_ID = Pattern(r"[A-Za-z0-9][A-Za-z0-9_-]*", "a run id of letters, digits, '_' and '-'")
PARAMETERS = Table(Data())

RUN = Format(
    "run",
    (
        Field("notebook", Text(), meaning="the notebook's path, relative to reproduce.yml"),
        Field("parameters", PARAMETERS, required=False, default={},
              meaning="the notebook parameters of every profile"),
        Field("profiles", Table(PARAMETERS, key=Choice(PROFILES)),
              required=False, default={},
              meaning="per profile, the parameters that override the common ones"),
        Field("depends_on", Items(RUN_ID), required=False, default=(),
              meaning="the runs whose records this one reads, run first"),
        Field("description", Text(blank=True), required=False, default="",
              meaning="what the run is, in words"),
        Field("alone", Flag(), required=False, default=False,
              meaning="no other run executes meanwhile (a run that measures wall-clock time)"),
    ),
)  # fmt: skip

DECLARATIONS = Format(
    "reproduce.yml",
    (
        Field("runs", Table(Data(), key=RUN_ID), required=False, default={},
              meaning="every run by its id, in order: each a RUN, read on its own so that a "
                      "refusal names the run"),
    ),
)  # fmt: skip

#: what the runner reads of a notebook a run names: its cells' tags and source (the rest of
#: the notebook is papermill's and Jupyter's)
CELL = Format(
    "cell",
    (
        Field("metadata", Nested(Format("metadata", (
            Field("tags", Items(Text()), required=False, default=(), meaning="the cell's tags"),
        ), closed=False)), required=False, default={"tags": ()}, meaning="the cell's metadata"),
        Field("source", Either((Text(blank=True), Items(Text(blank=True)))), required=False,
              default="", meaning="the cell's code, one text or its lines"),
    ),
    closed=False,
)  # fmt: skip
NOTEBOOK = Format(
    "notebook",
    (Field("cells", Items(Nested(CELL)), meaning="the notebook's cells, in order"),),
    closed=False,
)
