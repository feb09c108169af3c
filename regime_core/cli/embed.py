"""``regime embed DATASET --encoder NAME``: fill the embedding store for one prepared dataset.

Embeds the corpus passages (document mode) and every query text retrieval will ask for (query
mode) into ``<work>/embeddings``; a second run encodes nothing. ``--engine ray`` maps the
batches over Ray actors (a local cluster, or the one at ``--address``; needs
``pip install -e .[scale]``) and writes the same vectors into the same store: ``digest`` (sha256
of the float32 vectors in text order) is the same for both engines. With ``--json`` one JSON
object is printed on stdout: dataset, encoder, engine, texts, encoded, cached, seconds, digest
(then identity_hash, documents, queries, device, workers).

The stage itself is ``regime_core.encoders.embed.embed_dataset``.
"""

from __future__ import annotations

import argparse
from typing import Any

from regime_core import config
from regime_core.cli._common import add_dataset_argument, add_subcommand, name_value, print_result

#: The options ``regime embed`` passes on to ``embed_dataset`` as they are.
STAGE_OPTIONS: tuple[str, ...] = (
    "work",
    "engine",
    "address",
    "num_workers",
    "device",
    "batch_size",
)


def register(subparsers: Any) -> None:
    from regime_core.encoders.registry import DEVICES, KNOWN_ENCODERS
    from regime_core.inputs.embed_options import ENGINES

    parser = add_subcommand(
        subparsers,
        "embed",
        run,
        description=__doc__,
        help="encode a prepared dataset's passages and queries into the embedding store",
    )
    add_dataset_argument(parser)
    parser.add_argument(
        "--encoder",
        type=name_value,
        default=config.ENCODER,
        metavar="NAME",
        help=f"one of {', '.join(KNOWN_ENCODERS)}, a local model directory or a hub id "
        f"'org/name' (default: {config.ENCODER})",
    )
    parser.add_argument(
        "--engine",
        default="local",
        choices=ENGINES,
        help="local: this process; ray: Ray Data actors, each loading the model once",
    )
    parser.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="a running Ray cluster (host:port of its head, ray://host:port or auto); "
        "default: start a local one for this command",
    )
    parser.add_argument(
        "--num-workers",
        type=int,
        default=None,
        metavar="N",
        help="Ray actors (default: one per CPU, or per GPU with --device cuda)",
    )
    parser.add_argument(
        "--device",
        default=None,
        choices=DEVICES,
        help="where dense models run (default: the library's choice, CUDA when available)",
    )
    parser.add_argument("--batch-size", type=int, default=config.ENCODE_BATCH_SIZE)


def run(args: argparse.Namespace) -> int:
    from regime_core.encoders.embed import embed_dataset

    # every option of the command is a keyword of the stage, under the same name
    options = {name: getattr(args, name) for name in STAGE_OPTIONS}
    report = embed_dataset(args.dataset, args.encoder, **options, progress=not args.json)
    text = (
        f"{report.dataset} / {report.encoder} ({report.identity_hash}, {report.engine}): "
        f"{report.documents} passages, {report.queries} query texts; "
        f"{report.encoded} encoded, {report.cached} cached, {report.seconds:.1f} s; "
        f"digest {report.digest[:16]}"
    )
    print_result(args.json, report.to_json(), text, sort_keys=True)
    return 0
