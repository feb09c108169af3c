"""The manifest of prepared data (``<work>/prepared/manifest.json``), declared: what
:func:`regime_core.data.prepared.write_manifest` seals and every reader of prepared data relies
on. A dataset's entry also holds the counts ``regime data stats`` shows, as they were written
(its other fields are open: they differ by origin, a known dataset or a file of one's own)."""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Flag, Format, Items, Nested, Number, Table, Text

EXAMPLES_FILE = Format(
    "examples file",
    (
        Field("path", Text(), meaning="the prepared examples' file, beside the manifest"),
        Field("sha256", Text(), meaning="the sha256 of its bytes, checked when it is loaded"),
    ),
)
SOURCE_FILE = Format(
    "source file",
    (Field("path", Text(), meaning="a raw file read, relative to the data directory"),),
    closed=False,
    meaning="one raw file read; its format, split, sha256, bytes, records and source as read",
)
UNREADABLE_FILE = Format(
    "unreadable file",
    (
        Field("path", Text(), meaning="a raw file that could not be read"),
        Field("reason", Text(), meaning="why, in words"),
    ),
)
ENTRY = Format(
    "dataset entry",
    (
        Field("origin", Choice(("jsonl",)), required=False,
              meaning="'jsonl': read from a regime-twohop/1 file of one's own"),
        Field("examples_file", Nested(EXAMPLES_FILE), required=False,
              meaning="the prepared examples (absent: never written)"),
        Field("files", Items(Nested(SOURCE_FILE)), required=False, default=(),
              meaning="every raw file read"),
    ),
    closed=False,
)  # fmt: skip
MANIFEST = Format(
    "manifest",
    (
        Field("schema", Number(low=1, integer=True), meaning="the manifest format's version"),
        Field("version", Text(), meaning="the regime-core version that wrote it"),
        Field("strict", Flag(), meaning="whether an unreadable raw file stopped the preparation"),
        Field("datasets", Table(Nested(ENTRY)), meaning="each prepared dataset's entry, by name"),
        Field("ignored_files", Items(Text()), required=False, default=(),
              meaning="files of the data directory no reader takes"),
        Field("unreadable_files", Items(Nested(UNREADABLE_FILE)), required=False, default=(),
              meaning="raw files left out, with why (a preparation that was not strict)"),
        Field("manifest_sha256", Text(), meaning="sha256 of every other field, canonical JSON"),
    ),
)  # fmt: skip
