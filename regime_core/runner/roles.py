"""The roles of the data a claim reads (the training set, each transfer set, every dataset of a
run pooled), and which dataset fills each role in a record.

``paper_claims.yml`` declares each role once (``roles:``): what it is in words, the paper's
dataset for it (its record keys are written with that name: ``transfer.musique.n``) and, per
run, the config field whose dataset(s) fill it. A claim names the roles it reads (``data:``).
A record's config says which dataset fills each role (:func:`role_filling`); the record is then
read through :func:`role_view`, which names each filling dataset's numbers by the role's paper
dataset, so that a claim written for MuSiQue is judged on any dataset that fills the first
transfer set. A role its run's record does not fill leaves the claim "not judged", saying why
(:func:`unfilled_reason`).

>>> from regime_core.paper import Role
>>> roles = {
...     "transfer_1": Role("transfer_1", "the first transfer set", "musique",
...                        {"zero_shot_transfer": "datasets"}),
...     "transfer_2": Role("transfer_2", "the second transfer set", "hotpotqa",
...                        {"zero_shot_transfer": "datasets"}),
... }
>>> role_filling(roles, "zero_shot_transfer", {"datasets": ["mine"]})
{'transfer_1': 'mine'}
>>> role_filling(roles, "zero_shot_transfer", {"datasets": ["hotpotqa", "mine"]})
{'transfer_2': 'hotpotqa', 'transfer_1': 'mine'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from regime_core.paper import Role
from regime_core.runner.records import Record


def _datasets(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, Sequence) else []


def role_filling(roles: Mapping[str, Role], run: str, config: Mapping[str, Any]) -> dict[str, str]:
    """Which dataset fills each role of ``roles`` in a record of ``run`` with ``config``; pure.

    Roles filled by the same field share its datasets: a role's paper dataset, when listed,
    fills that role; the other datasets fill the roles left, in declaration order. A role with
    no paper dataset is filled by all of them (joined by commas). A role the run has no field
    for, or whose field lists too few datasets, is absent."""
    filled: dict[str, str] = {}
    by_field: dict[str, list[Role]] = {}
    for role in roles.values():
        field = role.fields.get(run)
        if field is not None:
            by_field.setdefault(field, []).append(role)
    for field, sharing in by_field.items():
        listed = _datasets(config.get(field))
        if not listed:
            continue
        paper_names = {r.paper for r in sharing if r.paper is not None}
        for role in sharing:
            if role.paper is None:
                filled[role.name] = ", ".join(listed)
            elif role.paper in listed:
                filled[role.name] = role.paper
        others = iter(d for d in listed if d not in paper_names)
        for role in sharing:
            if role.name not in filled:
                found = next(others, None)
                if found is not None:
                    filled[role.name] = found
    return filled


def _renamed(node: Any, names: Mapping[str, str]) -> Any:
    if not isinstance(node, Mapping):
        return node
    return {
        (names.get(key, key) if isinstance(value, Mapping) else key): _renamed(value, names)
        for key, value in node.items()
    }


def role_view(roles: Mapping[str, Role], record: Record) -> Record:
    """``record`` with the numbers of each dataset filling a role named by the role's paper
    dataset (the keys the claims are written with); the record itself when every role is
    filled by its paper dataset, or none is (the default records: nothing is renamed)."""
    filling = role_filling(roles, record.name, record.get("config") or {})
    names: dict[str, str] = {}
    for role, dataset in filling.items():
        paper = roles[role].paper
        if paper is not None and dataset != paper:
            names[dataset] = paper
    if not names:
        return record
    body = dict(record.body)
    body["numbers"] = _renamed(record.body["numbers"], names)
    return Record(body, record.file)


def unfilled_reason(roles: Mapping[str, Role], wanted: Sequence[str], record: Record) -> str | None:
    """Why a claim reading the roles ``wanted`` cannot be judged on ``record`` (None: every
    one of them is filled), naming the role, the run and the datasets it has."""
    config = record.get("config") or {}  # a record built in memory may have none
    filling = role_filling(roles, record.name, config)
    for name in wanted:
        if name in filling:
            continue
        role = roles[name]
        field = role.fields.get(record.name)
        if field is None:
            return f"run {record.name!r} has no {role.what} ({name})"
        listed = ", ".join(_datasets(config.get(field))) or "none"
        return f"run {record.name!r} fills no {role.what} ({name}): its {field} are {listed}"
    return None


def filled_datasets(
    roles: Mapping[str, Role], wanted: Sequence[str], record: Record
) -> dict[str, str]:
    """The dataset filling each of the roles ``wanted`` in ``record`` (those filled)."""
    filling = role_filling(roles, record.name, record.get("config") or {})
    return {name: filling[name] for name in wanted if name in filling}
