"""A run's ``record.json`` (schema ``regime-record/1``), declared: what
:func:`regime_core.runner.records.write_record` writes and
:func:`~regime_core.runner.records.load_record` reads back."""

from __future__ import annotations

from regime_core.inputs import (
    Choice,
    Data,
    Either,
    Field,
    Flag,
    Format,
    Items,
    Nullable,
    Number,
    Object,
    Pattern,
    Table,
    Text,
)

RECORD_SCHEMA = "regime-record/1"
#: ``.`` separates a dotted key's levels, ``:`` and ``|`` are the run and format separators of
#: the book's ``{rec}`` role: a number's key holds none of them
NUMBER_KEY = Pattern(r"[^.:|]+", "a non-empty key without '.', ':' or '|'")
#: a nested object whose leaves are finite numbers (ints stay ints), booleans or strings
NUMBERS = Table(
    Either((Flag(), Number(integer=True), Number(), Text(blank=True))), key=NUMBER_KEY, tree=True
)
#: a config given as a plain mapping (a config dataclass writes its own ``to_dict``)
CONFIG = Table(Data())
#: the hash of each input a run read, by name (``{"manifest": "<sha256>"}``)
INPUTS = Table(Text())

RECORD = Format(
    "record",
    (
        Field("schema", Choice((RECORD_SCHEMA,)), meaning="the record format's name and version"),
        Field("name", Text(), meaning="the run's id"),
        Field("config_kind", Text(), meaning="the config class's name, or 'dict'"),
        Field("config", CONFIG, meaning="the run's config, field by field"),
        Field("config_hash", Text(), meaning="the config's hash"),
        Field("inputs", INPUTS, meaning="the hash of each input the run read"),
        Field("versions", Table(Nullable(Text())),
              meaning="the version of each package that made it (null: not installed)"),
        Field("numbers", NUMBERS, meaning="the run's numbers, nested by dotted key"),
        Field("figures", Items(Text()), meaning="the figures' files, relative to the record"),
        Field("record_hash", Text(), meaning="sha256 of every field above"),
        Field("created", Text(), meaning="when it was written (UTC, ISO 8601)"),
        Field("content_sha256", Text(), meaning="sha256 of every other field"),
    ),
)  # fmt: skip

#: ``variant.json`` beside a variant's record (:func:`regime_core.runner.identity.write_identity`)
VARIANT_IDENTITY = Format(
    "variant identity",
    (
        Field("run", Text(), required=False, meaning="the run's id"),
        Field("config_hash", Text(), required=False, meaning="the variant's config hash"),
        Field("variant_hash", Text(), required=False,
              meaning="the config hash with every input: the variant's folder"),
        Field("inputs", Object(), meaning="what the variant reads besides its config"),
        Field("default_inputs", Object(), meaning="the same, of the default run"),
    ),
)  # fmt: skip
