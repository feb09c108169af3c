"""A row of the annotation sheet (``regime annotate sample``, ``regime annotate kappa``), declared:
its columns, in the sheet's order, and what each means.

:func:`regime_core.teaching.annotate.read_sheet` reads every row through :data:`ROW`, each cell
stripped of surrounding spaces and a label cell lower-cased, and keeps only what a row cannot
say: ids unique in the sheet, one sample and one annotator per sheet, and (in ``check_sheets``)
ids that are exactly the sample's. The format is open: a column a teacher adds is kept out of
the way, not refused.
"""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Id, Pattern, Text
from regime_core.schema import SPLITS

TRUE_VALUES: tuple[str, ...] = ("1", "y", "yes", "true")
FALSE_VALUES: tuple[str, ...] = ("0", "n", "no", "false")
LABEL = Choice(TRUE_VALUES + FALSE_VALUES)
"""a hand label: one of the true spellings (yes) or the false ones (no), case ignored"""

# dataset, split, seed, size and id hash; the dataset part follows configs.DATASET_NAME (a
# name of one's own may hold '-' and '_'; the split is one of SPLITS before "-seed", so the id
# still parses one way)
SAMPLE_ID = rf"([a-z0-9][a-z0-9_-]*)-({'|'.join(SPLITS)})-seed(\d+)-n(\d+)-([0-9a-f]+)"


def _shown(name: str, meaning: str) -> Field:
    """A column the sheet shows its reader and never reads back."""
    return Field(name, Text(blank=True), required=False, default="", meaning=meaning)


ROW = Format(
    "an annotation sheet row",
    (
        Field("id", Id(), meaning="the question's id in the prepared data (do not edit)"),
        _shown("question", "the question"),
        _shown("hop2_entity", "the hop-2 entity as the data names it"),
        _shown("hop2_other_names", "other names that count for it (title, aliases), ' | '-joined"),
        _shown("bridge_title", "title of the bridge passage (hop 1)"),
        _shown("bridge_text", "the bridge passage"),
        Field(
            "p1", LABEL, meaning="fill in: is the hop-2 entity (any name of it) in the question?"
        ),
        Field("p2", LABEL, meaning="fill in: is it in a sentence of the bridge passage?"),
        Field(
            "annotator",
            Text(blank=True),
            meaning="fill in your name (in at least one row; every filled row must agree; none: "
            "the file's name, alice.csv -> alice)",
        ),
        Field(
            "sample",
            Pattern(
                SAMPLE_ID,
                "a sample id written by `regime annotate sample` (toyworld-dev-seed0-n50-<hash>)",
            ),
            meaning="the sample's id (do not edit): dataset, split, seed, size, id hash",
        ),
    ),
    closed=False,
)
