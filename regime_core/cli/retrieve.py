"""``regime retrieve``: hop-2 retrieval for one dataset and one arm, with its headline metrics.

``--run-file PATH`` writes the ranking as a TREC run (and the hop-2 qrels beside it) with every
candidate of each question by default (``--depth all``): the deepest cutoff a metric of ours
reads is the MRR's, which reads the full ranking, so a file cut at any depth would make an outside
evaluator's MRR smaller than ours (a target ranked below the cut counts 0 there). ``--depth N``
cuts the file only. In ``corpus`` pools every passage of the dataset is a candidate, so the
full file has one line per question and passage.

>>> regime retrieve hotpotqa --arm union --json          # doctest: +SKIP
{"dataset": "hotpotqa", "arm": "union", ..., "n": 187, "hit@5": 0.81, "mrr": 0.66, ...}
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regime_core import config, paths
from regime_core.cli._common import (
    add_dataset_argument,
    add_subcommand,
    alpha_value,
    count_value,
    name_value,
    print_result,
)
from regime_core.integrity import check_writable
from regime_core.limits import ALPHA
from regime_core.schema import SPLITS

if TYPE_CHECKING:
    from regime_core.retrieval import Ranking

# What the command reports: the paper's R@k for the hop-2 target at each k, and the MRR.
REPORTED_METRICS: tuple[str, ...] = (*(f"hit@{k}" for k in config.K_VALUES), "mrr")


def register(subparsers: Any) -> None:
    p = add_subcommand(
        subparsers,
        "retrieve",
        run,
        help="rank the hop-2 passages of a prepared dataset with one query arm",
        description=(
            "Rank each question's hop-2 candidates with one query arm and report hit@k (the "
            "paper's R@k) and MRR. Reads the examples written by `regime data prepare`; "
            "embeddings are cached under the work directory."
        ),
        files=[
            (
                "--run-file",
                "write the ranking as a TREC run to PATH and the hop-2 qrels to PATH.qrels",
                None,
            )
        ],
    )
    add_dataset_argument(p)
    p.add_argument("--arm", required=True, choices=config.ARMS, help="the query arm")
    p.add_argument(
        "--encoder",
        type=name_value,
        default=config.ENCODER,
        help=f"encoder name (default {config.ENCODER}; 'tfidf' for the lexical cosine)",
    )
    p.add_argument(
        "--pool",
        default=config.POOL_MODE,
        choices=config.POOL_MODES,
        help="candidates: the question's own pool, or every passage of the dataset",
    )
    p.add_argument(
        "--depth",
        "--k",
        dest="depth",
        type=depth_value,
        default=None,
        metavar="N|all",
        help="ranks per question in the --run-file (default all: every candidate, so that an "
        "outside evaluator's MRR, which reads the full ranking, equals ours; a depth N cuts "
        "the file, not our metrics, which always use the full ranking)",
    )
    p.add_argument(
        "--alpha",
        type=alpha_value,
        default=config.ALPHA,
        help=f"weight of the bridge side: {ALPHA.describe()} (regime_core.limits.ALPHA)",
    )
    p.add_argument(
        "--knockout-single",
        default=config.KNOCKOUT_SINGLE,
        choices=config.KNOCKOUT_SINGLE_RULES,
        help="knockout of a bridge whose only sentence is B_rel: query with its title, or exclude "
        f"the question (default {config.KNOCKOUT_SINGLE})",
    )
    p.add_argument(
        "--split",
        default=SPLITS[0],
        choices=SPLITS,
        help=f"which split of the prepared examples (default {SPLITS[0]})",
    )
    p.add_argument(
        "--keep-bridge",
        action="store_true",
        help="rank the bridge passage too (default: it is excluded from the hop-2 ranking)",
    )
    p.add_argument(
        "--scorer",
        default=None,
        choices=config.SCORERS,
        help="scoring backend: numpy or faiss (identical rankings; default the faster)",
    )


def depth_value(text: str) -> int | None:
    """The argparse type of ``--depth``: ``all`` (``None``, every candidate) or a count.

    >>> depth_value("all"), depth_value("100")
    (None, 100)
    """
    return None if text.strip().lower() == "all" else count_value(text)


def run(args: argparse.Namespace) -> int:
    from regime_core import retrieval
    from regime_core.data import corpus_passages, load_examples
    from regime_core.encoders import EmbeddingStore, get_encoder
    from regime_core.experiments.common import RunConfig

    # the settings a run derives from its config; argparse checked each option (choices, alpha)
    settings = RunConfig(
        pool=args.pool,
        alpha=args.alpha,
        exclude_bridge=not args.keep_bridge,
        knockout_single=args.knockout_single,
    ).retrieval
    if args.run_file is not None:  # before the work, so a bad path loses no computed metrics
        check_writable(args.run_file, "--run-file")
        check_writable(Path(f"{args.run_file}.qrels"), "--run-file (its .qrels)")
    examples = load_examples(args.dataset, split=args.split, work=args.work)
    if not examples:
        raise ValueError(
            f"no {args.split} examples of {args.dataset} in {paths.prepared_dir(args.work)}"
        )
    passages = corpus_passages(examples)
    if args.run_file is not None:  # ids that would break the TREC columns: before the work too
        retrieval.check_trec_ids((ex.id for ex in examples), "query id")
        retrieval.check_trec_ids((p.pid for p in passages), "passage id")
    pools = retrieval.candidate_pools(
        examples, settings.pool, exclude_bridge=settings.exclude_bridge, passages=passages
    )
    encoder = get_encoder(args.encoder, corpus=[retrieval.document_text(p) for p in passages])
    store = EmbeddingStore(paths.embeddings_dir(args.work))
    ranking = retrieval.retrieve_arms(
        examples,
        (args.arm,),
        settings,
        encoder=encoder,
        store=store,
        depth=args.depth,
        scorer=args.scorer,
        pools=pools,
    )[args.arm]

    result = summary(ranking, dataset=args.dataset, split=args.split, encoder=args.encoder)
    result["n_examples"] = len(examples)
    if args.run_file is not None:
        tag = f"regime-{args.dataset}-{args.arm}-{args.pool}"
        run_path, qrels_path = retrieval.write_run_and_qrels(ranking, args.run_file, tag)
        result["run_file"] = str(run_path)
        result["qrels_file"] = str(qrels_path)
        result["run_depth"] = "all" if args.depth is None else args.depth

    print_result(args.json, result, lambda: human_text(result))
    return 0


def summary(ranking: Ranking, *, dataset: str, split: str, encoder: str) -> dict[str, Any]:
    """The command's JSON object for one :class:`regime_core.retrieval.Ranking`."""
    means = ranking.metrics(metrics=list(REPORTED_METRICS))
    out: dict[str, Any] = {
        "dataset": dataset,
        "split": split,
        "arm": ranking.arm,
        "encoder": encoder,
        "pool": ranking.pool,
        "alpha": ranking.alpha,
        "exclude_bridge": ranking.exclude_bridge,
        "scorer": ranking.scorer,
        "n": int(means["n"]),
    }
    out.update({name: means[name] for name in REPORTED_METRICS})
    out["n_missing_b_rel"] = ranking.n_missing_b_rel
    out["n_missing"] = len(ranking.missing)
    out["missing_reasons"] = ranking.missing_counts()
    out["note"] = (
        "metrics are means over the n ranked questions; questions the arm cannot build a query "
        "for (n_missing, by reason; n_missing_b_rel: no gold B_rel, for union and knockout) "
        "are excluded from n"
    )
    return out


def human_text(result: dict[str, Any]) -> str:
    """The command's result in plain text: the run's settings, the questions left out by
    reason, each reported metric, and the run files written."""
    lines = [
        f"{result['dataset']} ({result['split']}), arm {result['arm']}, encoder "
        f"{result['encoder']}, pool {result['pool']}, alpha {result['alpha']}",
        f"  questions ranked: {result['n']} of {result['n_examples']}",
    ]
    lines += [f"  left out ({n}): {reason}" for reason, n in result["missing_reasons"].items()]
    lines += [f"  {name:>7}: {result[name]:.4f}" for name in REPORTED_METRICS]
    if "run_file" in result:
        lines.append(f"  run: {result['run_file']}  qrels: {result['qrels_file']}")
    return "\n".join(lines)
