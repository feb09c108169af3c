"""Issue 22: ``integrity``'s strict readers and its writer's rule for what it may replace.

Readers open without blocking and read regular files only; JSON and YAML are parsed strictly
(duplicate keys, NaN/Infinity, lone surrogates, nesting); the atomic writer never replaces a
directory, FIFO or device, and follows a symbolic link only to an existing regular file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import alarm, refused

from regime_core import strict_json
from regime_core.integrity import atomic_write_bytes, check_writable, output_target, read_bytes
from regime_core.strict_json import MAX_NESTING, JSONProblem, parse_json, parse_yaml, read_json


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """A read that blocks (a FIFO opened the plain way) fails the test instead of hanging it."""

    with alarm(20):
        yield


def _char_device(path: Path) -> Path:
    """A character device of our own (1:3, like /dev/null) inside the test's directory."""
    import stat

    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here: {err}")
    return path


# --- reading -----------------------------------------------------------------------------------


def test_read_bytes_refuses_special_files_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)  # no writer: a plain open() would wait for one forever
    device = _char_device(tmp_path / "dev")
    for path, kind in ((fifo, "FIFO"), (tmp_path, "directory"), (device, "character device")):
        with refused(ValueError, names=(str(path), kind)):
            read_bytes(path)


def test_read_bytes_names_a_dangling_link_and_follows_a_good_one(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "good.json").symlink_to("real.json")
    assert read_bytes(tmp_path / "good.json") == b"{}"
    (tmp_path / "gone.json").symlink_to("nowhere.json")
    with refused(FileNotFoundError, names=("gone.json", "symbolic link")):
        read_bytes(tmp_path / "gone.json")
    with refused(FileNotFoundError, names=("absent.json",)):
        read_bytes(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('{"a": 1, "a": 2}', ("at a", "'a'", "twice")),
        ('[{"x": {"b": [1, {"c": 1, "c": 1}]}}]', ("at [0].x.b[1].c", "'c'")),
        ('{"evidences": [["a", NaN, "c"]]}', ("at evidences[0][1]", "NaN")),
        ("[Infinity]", ("at [0]", "Infinity")),
        ('{"x": -Infinity}', ("at x", "-Infinity")),
        ("[1e400]", ("1e400",)),
        ('["\\ud800"]', ("at [0]", "\\ud800")),
        ('{"\\udc00": 1}', ("surrogate",)),
        ("[" + "9" * 5000 + "]", ("digits",)),
        ("[" * 200_000, ("100 levels",)),
        ("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), ("100 levels",)),
        ('{"a": 1', ("line 1, column 8",)),
    ],
)
def test_parse_json_refuses_what_the_plain_parser_lets_through(
    text: str, names: tuple[str]
) -> None:
    with refused(JSONProblem, names=names) as info:
        parse_json(text, "f.json")
    assert isinstance(info.value, ValueError) and str(info.value).startswith("f.json")


def test_parse_json_keeps_what_is_valid() -> None:
    value = parse_json("[" * MAX_NESTING + "]" * MAX_NESTING, "f")
    for _ in range(MAX_NESTING - 1):
        (value,) = value
    assert value == []
    assert parse_json('["\\ud83d\\ude00", "\\\\ud800", 1e300, -0.0]', "f") == [
        "\U0001f600",
        "\\ud800",  # an escaped backslash, not a surrogate
        1e300,
        -0.0,
    ]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("a: 1\nb: 2\na: 3\n", ("line 3", "'a'", "twice")),
        ("runs:\n  x: {tol: .inf}\n", ("line 2", ".inf")),
        ("a: .nan\n", ("line 1", ".nan")),
        ("a: &x 1\nb: *x\n", ("alias",)),
        ("[" * 100_000, ("100 levels",)),
        ("? [1]\n: 2\n", ("key",)),
        ("a: [1, 2\n", ("YAML",)),
    ],
)
def test_parse_yaml_refuses_duplicates_aliases_non_finite_and_depth(
    text: str, names: tuple[str]
) -> None:
    with refused(JSONProblem, names=("f.yml", *names)):
        parse_yaml(text, "f.yml")


def test_parse_yaml_reads_our_files() -> None:
    from regime_core import paths

    for name in ("reproduce.yml", "paper_claims.yml", "expected_numbers.yml"):
        parse_yaml((paths.REPO_ROOT / name).read_text(encoding="utf-8"), name)
    assert parse_yaml("a: .inf\n", "f", finite=False) == {"a": float("inf")}


def test_read_json_names_a_derived_file_and_its_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_text('{"k": 1, "k": 2}')
    with refused(strict_json.DamagedFileError, names=("cache.json", "'k'")):
        read_json(path, "it is rebuilt")


# --- writing -----------------------------------------------------------------------------------


def test_writer_refuses_directories_fifos_and_devices_and_leaves_them(tmp_path: Path) -> None:
    fifo = tmp_path / "run.trec"
    os.mkfifo(fifo)
    device = _char_device(tmp_path / "null")
    (tmp_path / "dir.json").mkdir()
    for target, kind in ((fifo, "a FIFO"), (device, "a character device"), (tmp_path, "a dir")):
        with refused(ValueError, names=(str(target), kind)):
            atomic_write_bytes(target, b"x")
        with refused(ValueError, names=("--out", str(target))):
            check_writable(target, "--out")
    assert fifo.is_fifo() and device.is_char_device() and (tmp_path / "dir.json").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.json", "null", "run.trec"]


def test_writer_follows_a_link_to_a_regular_file_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "real.trec"
    real.write_bytes(b"old\n")
    link = tmp_path / "run.trec"
    link.symlink_to(real)
    assert output_target(link) == real.resolve()
    atomic_write_bytes(link, b"new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new\n"
    assert not [p for p in (tmp_path / "runs").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["dangling", "to_fifo", "to_dir", "loop", "to_device"])
def test_writer_refuses_any_other_link_and_leaves_it(tmp_path: Path, kind: str) -> None:
    link = tmp_path / "out.json"
    if kind == "dangling":
        link.symlink_to(tmp_path / "missing" / "x.json")
    elif kind == "to_fifo":
        os.mkfifo(tmp_path / "pipe")
        link.symlink_to(tmp_path / "pipe")
    elif kind == "to_dir":
        link.symlink_to(tmp_path)
    elif kind == "loop":
        (tmp_path / "other").symlink_to(link)
        link.symlink_to(tmp_path / "other")
    else:
        link.symlink_to(_char_device(tmp_path / "null"))
    before = os.readlink(link)
    with refused(ValueError, names=("out.json",)):
        atomic_write_bytes(link, b"x")
    assert link.is_symlink() and os.readlink(link) == before
    assert not (tmp_path / "missing").exists()


def test_writer_refuses_a_nul_in_the_path(tmp_path: Path) -> None:
    for call in (lambda path: atomic_write_bytes(path, b"x"), read_bytes):
        with refused(ValueError, names=("NUL",)):
            call(f"{tmp_path}/a\0b")
