"""``[[alerts]]`` refusals name the project file, the table entry, the key and its line, when
the file is read and, for ``${VAR}`` values, before a night writes anything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.nightly.project import load_project

from ..nightly.db_counts import table_counts

FIRST = '[[alerts]]\ntype = "slack"\nurl = "${SLACK_WEBHOOK_URL}"\n\n'  # lines 1-4


@pytest.mark.parametrize(
    ("second", "line", "problem"),
    [
        ('type = "webhook"\nurl = "x"\ntimeout = inf',
         8, "key 'timeout': webhook channel: timeout must be a finite number, got 'inf'"),
        ('type = "slack"\nurl = "x"\ntimeout = nan',
         8, "key 'timeout': slack channel: timeout must be a finite number, got 'nan'"),
        ('type = "teams"\nurl = "x"\ntimeout = 0',
         8, "key 'timeout': teams channel: timeout must be more than 0, got 0"),
        ('type = "webhook"\nurl = "x"\ntimeout = 1e6',
         8, "key 'timeout': webhook channel: timeout must be at most 3600, got 1e+06"),
        ('type = "pager"\nurl = "x"', 6, "key 'type': unknown alert channel type 'pager'"),
        ("type = 3", 6, "key 'type': needs type = \"webhook\""),
        ('type = "webhook"\nurl = "x"\ncolour = 1', 8, "key 'colour': webhook channel: unknown"),
        ('type = "webhook"\nurl = "x"\nheaders = { X-A = "a\\nb" }',
         8, "key 'headers': webhook channel: header X-A: the value holds a line break"),
        ('type = "webhook"\nurl = "x"\nheaders = { X-A = 3 }',
         8, "key 'headers': webhook channel: headers values must be strings"),
        ('type = "email"\nhost = "h"\nfrom = "a@b"\nto = "c@d"\nport = 70000',
         10, "key 'port': email channel: port must be at most 65535, got 70000"),
        ('type = "email"\nhost = "h"\nfrom = "a@b"\nto = []',
         9, "key 'to': email channel: to must be an address or a non-empty list"),
        ('type = "email"\nhost = "h"\nto = "c@d"', 5, "[[alerts]] #2: email channel needs from"),
        ('type = "teams"\nurl = "x"\nformat = "html"',
         8, "key 'format': teams channel: format must be one of adaptive, messagecard"),
        ('type = "json"\npath = "a.jsonl"\nmode = "w"', 8, "key 'mode': json channel: mode"),
        ('type = "slack"\nurl = "x"', 6, "key 'type': a second channel named 'slack'"),
        ('type = "webhook"\nurl = "x"\nname = "slack"',
         8, "key 'name': a second channel named 'slack'"),
        ('type = "webhook"\nurl = "x"\nname = ""', 8, "key 'name': webhook channel: name must"),
        (f'type = "webhook"\nurl = "x"\nname = "{"n" * 201}"',
         8, "key 'name': webhook channel name 'nnnn"),
    ],
)  # fmt: skip
def test_every_alerts_refusal_names_the_file_the_key_and_its_line(
    tmp_path: Path, second: str, line: int, problem: str
) -> None:
    path = tmp_path / "evalplat.toml"
    path.write_text(f"{FIRST}[[alerts]]\n{second}\n")
    with pytest.raises(InputError) as error:
        load_project(path)
    assert str(error.value).startswith(f"{path} line {line}: [[alerts]] #2")
    assert problem in str(error.value)


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_variable_expanding_to_a_line_break_is_refused_before_the_night(
    tmp_path: Path,
    cli: Callable[..., Any],
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    dry_run: bool,
) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "secret\r\nX-Injected: 1")
    path = tmp_path / "evalplat.toml"
    path.write_text(
        '[[alerts]]\ntype = "webhook"\nurl = "http://127.0.0.1:9/"\n'
        'headers = { Authorization = "Bearer ${HOOK_TOKEN}" }\n'
    )
    assert cli("init", "--db", db_url).exit_code == 0
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url, *(["--dry-run"] * dry_run))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path} line 4: [[alerts]] #1 key 'headers': webhook channel: ")
    assert "header Authorization: the value holds a line break" in line
    assert "secret" not in line
    assert table_counts(db_url) == before
