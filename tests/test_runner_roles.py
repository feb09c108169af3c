"""Claims by role (issue 44): a claim names the role of the data it reads, a record's config
says which dataset fills each role, and a claim is judged on whatever fills it, or reads "not
judged" with the reason; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import refused, write_stamped_record

from regime_core import cli, paths
from regime_core.paper import load_claims, load_roles
from regime_core.runner.records import Record, write_record
from regime_core.runner.roles import role_filling, role_view, unfilled_reason
from regime_core.runner.verdicts import (
    NotJudgedError,
    judge_claims,
    variant_report,
    verdicts_report,
)

ROLES: dict[str, Any] = {
    "transfer_1": {"what": "first transfer set", "paper": "musique", "fields": {"z": "datasets"}},
    "transfer_2": {"what": "second transfer set", "paper": "hotpotqa", "fields": {"z": "datasets"}},
}


def _claim(claim_id: str, dataset: str, role: str) -> dict[str, Any]:
    node = f"transfer.{dataset}"
    return {
        "id": claim_id,
        "label": claim_id,
        "claim": f"a gain on {dataset}",
        "source": "abstract",
        "chapter": "book/claims/zero_shot_transfer",
        "data": [role],
        "rule": "estimate",
        "paper": {"value": 0.05, "p_below": 0.001},
        "ours": {
            "run": "z",
            **{f: f"{node}.{f}" for f in ("ci_lo", "ci_hi")},
            "estimate": f"{node}.diff",
            "n": f"{node}.n",
        },
        "computed_on": f"{{role.{role}}} at k = {{config.k}}",
    }


def _numbers(*datasets: str, diff: float = 0.05) -> dict[str, Any]:
    node = {"diff": diff, "ci_lo": diff - 0.02, "ci_hi": diff + 0.02, "n": 300}
    return {"transfer": {name: dict(node) for name in datasets}}


@pytest.fixture
def work(tmp_path: Path) -> tuple[Path, Path]:
    claims = tmp_path / "claims.yml"
    body = {
        "roles": ROLES,
        "claims": [
            _claim("on_musique", "musique", "transfer_1"),
            _claim("on_hotpotqa", "hotpotqa", "transfer_2"),
        ],
    }
    claims.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    root = tmp_path / "work"
    config = {"datasets": ["musique", "hotpotqa"], "k": 5}
    write_stamped_record(root, "z", config=config, numbers=_numbers("musique", "hotpotqa"))
    return root, claims


def test_the_repository_claims_name_declared_roles_and_every_data_claim_has_one() -> None:
    roles = load_roles()
    assert {"training", "transfer_1", "transfer_2", "every"} <= set(roles)
    for claim in load_claims():
        assert claim.data, f"claim {claim.id!r} names no role of its data"
        assert set(claim.data) <= set(roles)
    by_id = {c.id: c for c in load_claims()}
    assert by_id["router_musique"].data == ("transfer_1",)
    assert by_id["router_2wiki"].data == ("training",)


def test_a_role_is_filled_by_its_paper_dataset_else_by_the_others_in_order() -> None:
    roles = load_roles()
    z = "zero_shot_transfer"
    assert role_filling(roles, z, {"datasets": ["musique", "hotpotqa"]}) == {
        "transfer_1": "musique",
        "transfer_2": "hotpotqa",
    }
    # one built-in dataset fills its own role, not the first
    assert role_filling(roles, z, {"datasets": ["hotpotqa"]}) == {"transfer_2": "hotpotqa"}
    assert role_filling(roles, z, {"datasets": ["mine"]}) == {"transfer_1": "mine"}
    assert role_filling(roles, "router_train", {"dataset": "mine"}) == {"training": "mine"}
    pooled = role_filling(roles, "t2_regime_decomposition", {"datasets": ["a", "b"]})
    assert pooled == {"every": "a, b"}


def test_a_record_is_read_through_its_roles_and_the_default_is_left_as_it_is() -> None:
    roles = load_roles()
    default = Record({"name": "zero_shot_transfer", "config": {"datasets": ["musique"]},
                      "numbers": {"transfer": {"musique": {"n": 3}}}})  # fmt: skip
    assert role_view(roles, default) is default
    mine = Record({"name": "zero_shot_transfer", "config": {"datasets": ["mine"]},
                   "numbers": {"transfer": {"mine": {"n": 3}}, "k": 5}})  # fmt: skip
    assert role_view(roles, mine).number("transfer.musique.n") == 3
    assert unfilled_reason(roles, ["transfer_2"], mine) == (
        "run 'zero_shot_transfer' fills no second transfer set (transfer_2): its datasets are mine"
    )


def test_a_variant_over_a_dataset_of_ones_own_is_judged_by_role(
    work: tuple[Path, Path], capsys: Any
) -> None:
    """Issue 44's crash: a variant of the transfer run over one's own dataset raised a KeyError
    (its keys named the built-in datasets). Now the first transfer set's claim is judged on it,
    the second's is not judged, saying why; the CLI exits 0 with no traceback."""
    root, claims = work
    folder = paths.variant_dir("z", "0123456789ab", root)
    write_record(folder, name="z", config={"datasets": ["mine"], "k": 3},
                 numbers=_numbers("mine", diff=0.01))  # fmt: skip
    report = variant_report("z/0123456789ab", root, claims).to_dict()
    by_id = {c["id"]: c for c in report["claims"]}
    mine = by_id["on_musique"]["variant"]
    assert mine["data"] == {"transfer_1": "mine"}
    assert mine["ours"]["estimate"] == pytest.approx(0.01)
    assert mine["computed_on"] == "mine at k = 3"
    assert mine["flags"] == ["cutoff k = 3, not the paper's R@5"]  # k != 5 is flagged
    assert by_id["on_hotpotqa"]["variant"] is None
    assert "fills no second transfer set" in by_id["on_hotpotqa"]["not_judged"]

    args = ["verdicts", "--work", str(root), "--claims", str(claims), "--variant", "z"]
    assert cli.main(args) == 0
    out = capsys.readouterr()
    assert "variant: not judged: run 'z' fills no second transfer set" in out.out
    assert "(cutoff k = 3, not the paper's R@5)" in out.out
    assert "Traceback" not in out.err
    assert cli.main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["claims"][1]["variant"] is None


def test_a_missing_number_is_not_judged_never_a_key_error(work: tuple[Path, Path]) -> None:
    root, claims = work
    folder = paths.variant_dir("z", "abcdefabcdef", root)
    numbers = _numbers("mine")
    del numbers["transfer"]["mine"]["n"]
    write_record(folder, name="z", config={"datasets": ["mine"], "k": 5}, numbers=numbers)
    by_id = {c["id"]: c for c in variant_report(folder, root, claims).to_dict()["claims"]}
    assert by_id["on_musique"]["variant"] is None
    assert "transfer.musique.n" in by_id["on_musique"]["not_judged"]
    # on the default path, the same is a ValueError naming the claim (exit 2, no traceback)
    records = {"z": Record({"name": "z", "config": {"datasets": ["mine"]}, "numbers": numbers})}
    with refused(NotJudgedError, names=("'on_musique'",)):
        judge_claims(records, load_claims(claims)[:1], roles=load_roles(claims))
    assert [c["id"] for c in verdicts_report(root, claims)["claims"]] == [
        "on_musique",
        "on_hotpotqa",
    ]


def test_a_claim_naming_an_undeclared_role_is_refused(tmp_path: Path) -> None:
    claims = tmp_path / "claims.yml"
    body = {"roles": ROLES, "claims": [_claim("c", "musique", "training")]}
    claims.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    with refused(ValueError, names=("claim 'c'", "'data[0]'", "'training'")):
        load_claims(claims)
