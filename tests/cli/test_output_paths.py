"""Every output option of every command refuses a path it cannot write before anything is
stored: one line naming the option and the path, exit 2, the database exactly as before. A
failure while writing (a full disk) is one line and exit 3, never a traceback.

``OUTPUTS`` names each command's output options and how to call the command so that it would
otherwise succeed; ``INPUTS`` names the path options that are read. The first test walks the
Typer app: a path option in neither fails the suite until it is classified (and checked).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.store import Store

from ..contract.dump import dump
from .world import Files, World, populate, project_file, write_files

Args = Callable[[World, str], list[str]]

# (command path, option) -> (what it writes: "file" (in a folder that exists), "html" (a page;
# its missing folder is created), "folder", or "page" (a file ending in .html, or a folder),
# the arguments of a call that would succeed with a good path)
OUTPUTS: dict[tuple[tuple[str, ...], str], tuple[str, Args]] = {
    (("runs", "export"), "--out"): ("file", lambda w, p: ["runs", "export", str(w.baseline),
                                                          "--out", p, "--db", w.url]),
    (("compare",), "--report"): ("html", lambda w, p: ["compare", str(w.baseline),
                                                       str(w.candidate), "--report", p,
                                                       "--db", w.url]),
    (("compare",), "--junit"): ("file", lambda w, p: ["compare", str(w.baseline),
                                                      str(w.candidate), "--junit", p,
                                                      "--db", w.url]),
    (("queries",), "--fix-csv"): ("file", lambda w, p: ["queries", "prod", "--testset", "tiny",
                                                        "--fix-csv", p, "--db", w.url]),
    (("queries",), "--judge-csv"): ("file", lambda w, p: ["queries", "prod", "--testset", "tiny",
                                                          "--judge-csv", p, "--db", w.url]),
    (("judge", "calibrate"), "--report"): ("html", lambda w, p: [
        "judge", "calibrate", "offline", "--testset", "tiny", "--project", str(w.project),
        "--report", p, "--db", w.url]),
    (("judge", "export"), "--out"): ("file", lambda w, p: ["judge", "export", "offline",
                                                           "--testset", "tiny", "--out", p,
                                                           "--db", w.url]),
    (("online", "agreement"), "--report"): ("html", lambda w, p: [
        "online", "agreement", "--testset", "tiny", "--report", p, "--db", w.url]),
    (("report", "run"), "--out"): ("page", lambda w, p: ["report", "run", str(w.baseline),
                                                         "--out", p, "--db", w.url]),
    (("report", "compare"), "--out"): ("page", lambda w, p: [
        "report", "compare", str(w.baseline), str(w.candidate), "--out", p, "--db", w.url]),
    (("report", "site"), "--out"): ("folder", lambda w, p: ["report", "site", "--out", p,
                                                            "--db", w.url]),
    (("testset", "export"), "--out"): ("folder", lambda w, p: ["testset", "export", "tiny",
                                                               "--out", p, "--db", w.url]),
    (("demo",), "--dir"): ("folder", lambda w, p: ["demo", "--dir", p]),
    (("leaderboard",), "--csv"): ("file", lambda w, p: ["leaderboard", str(w.baseline),
                                                        str(w.candidate), "--csv", p, "--db",
                                                        w.url]),
    (("leaderboard",), "--report"): ("html", lambda w, p: ["leaderboard", str(w.baseline),
                                                           str(w.candidate), "--report", p,
                                                           "--db", w.url]),
}  # fmt: skip

INPUTS = {
    (("evaluate",), "--qrels"), (("evaluate",), "--run"), (("evaluate",), "--zscores"),
    (("import-run",), "file"),
    (("nightly",), "--project"), (("gates", "backtest"), "--project"),
    (("testset", "import"), "--qrels"),
    (("testset", "import"), "--queries"), (("testset", "import"), "--docs"),
    (("config", "add"), "--file"), (("alerts", "resolve"), "--project"),
    (("alerts", "deliver"), "--project"), (("alerts", "test"), "--project"),
    (("judge", "grade"), "--project"), (("judge", "calibrate"), "--project"),
    (("events", "import"), "files"), (("events", "attach"), "files"), (("run",), "--project"),
    (("online", "agreement"), "--project"), (("report", "site"), "--project"),
    (("report", "compare"), "--project"), (("compare",), "--project"),
    (("leaderboard",), "--project"),
    (("rate", "task"), "--pairs"), (("rate", "task"), "--guidelines"),
}  # fmt: skip


def _path_options() -> set[tuple[tuple[str, ...], str]]:
    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield path, command

    found = set()
    for path, command in walk(get_command(app), ()):
        for param in command.params:
            if "Path" in repr(param.type_descriptor.annotation):
                found.add((path, param.opts[0] if param.opts[0].startswith("-") else param.name))
    return found


def test_every_path_option_is_an_input_or_a_checked_output() -> None:
    assert _path_options() == set(OUTPUTS) | INPUTS


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    folder = tmp_path_factory.mktemp(f"outputs-{request.param}")
    files: Files = write_files(folder / "files")
    if request.param == "sqlite":
        shutil.copyfile(sqlite_template, folder / "evalplat.db")
        url = f"sqlite:///{folder / 'evalplat.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        url = server.create_database()
        with Store.init(url):
            pass
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.delenv("EVALPLAT_DATABASE_URL", raising=False)
    monkeypatch.chdir(folder)
    runs, alerts = populate(url, files)
    yield World(url=url, files=files, folder=folder, baseline=runs[0], candidate=runs[1],
                rescorable=runs[2], alerts=alerts, fresh_url=lambda: url,
                project=project_file(folder, files))  # fmt: skip
    monkeypatch.undo()
    if request.param == "postgresql":
        request.getfixturevalue("postgres_server").drop_database(url)


def _bad_paths(kind: str, folder: Path) -> dict[str, str]:
    """Paths that cannot be written, by why; a page takes both a file's and a folder's."""
    (folder / "a-folder.html").mkdir(parents=True, exist_ok=True)
    (folder / "a-file").write_text("x", encoding="utf-8")
    html = {
        "a folder": str(folder / "a-folder.html"),
        "in a folder under a file": str(folder / "a-file" / "sub" / "out.html"),
        "in /proc": "/proc/evalplat-out.html",
    }
    files = {**html, "folder missing": str(folder / "missing" / "dir" / "out.html")}
    folders = {
        "a file": str(folder / "a-file"),
        "under a file": str(folder / "a-file" / "sub"),
        "in /proc": "/proc/evalplat-out",
    }
    if kind == "page":
        return html | {f"folder {why}": path for why, path in folders.items()}
    return {"file": files, "html": html, "folder": folders}[kind]


def _invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


@pytest.mark.parametrize("output", list(OUTPUTS), ids=lambda o: " ".join((*o[0], o[1])))
def test_an_unwritable_output_is_refused_before_anything_is_stored(
    world: World, output: tuple[tuple[str, ...], str], tmp_path: Path
) -> None:
    kind, args = OUTPUTS[output]
    before = dump(world.url)
    for why, path in _bad_paths(kind, tmp_path / "out").items():
        result = _invoke(args(world, path))
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, (why, result.stdout, result.stderr)
        assert len(lines) == 1 and "Traceback" not in result.stderr, (why, result.stderr)
        assert lines[0].startswith(f"error: {output[1]} {path}: "), (why, lines)
    assert dump(world.url) == before
    assert not Path("/proc/evalplat-out.html").exists()


@pytest.mark.parametrize(
    "output",
    [(("compare",), "--junit"), (("queries",), "--fix-csv"), (("report", "run"), "--out")],
    ids=lambda o: " ".join((*o[0], o[1])),
)
def test_a_full_disk_while_writing_is_one_line_and_exit_3(
    world: World, output: tuple[tuple[str, ...], str], tmp_path: Path
) -> None:
    full = tmp_path / "full.html"
    full.symlink_to("/dev/full")  # a writable file on which every write fails: ENOSPC
    result = _invoke(OUTPUTS[output][1](world, str(full)))
    assert result.exit_code == 3, (result.stdout, result.stderr)
    assert result.stderr.strip().splitlines() == [
        f"error: {output[1]} {full}: could not write it: No space left on device"
    ]


def test_a_good_output_is_written(world: World, tmp_path: Path) -> None:
    for output, (kind, args) in OUTPUTS.items():
        if output[0] in (("demo",), ("judge", "calibrate"), ("judge", "export")):
            continue  # a whole demo; a judge needs its model server (tests/judging)
        path = tmp_path / "-".join((*output[0], output[1].strip("-")))
        target = path if kind == "folder" else path.with_suffix(".html")
        if kind in ("html", "page"):
            target = path / "made" / "page.html"  # their missing folder is created
        result = _invoke(args(world, str(target)))
        assert result.exit_code in (0, 1), (output, result.stderr)
        assert target.is_dir() if kind == "folder" else target.is_file(), output
