"""``[[judges]]`` in the project file: read, and refused with the file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalplat.errors import InputError
from evalplat.nightly.project import load_project


def _project(tmp_path: Path, judge: str) -> Path:
    path = tmp_path / "evalplat.toml"
    path.write_text(f'[[judges]]\nname = "gpt"\nurl = "https://api.example.com/v1"\n{judge}\n')
    return path


def test_a_judge_table_is_read_with_its_defaults(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path, 'model = "m"\napi_key = "${KEY}"'))
    [judge] = project.judges
    assert (judge.model, judge.api_key, judge.scale, judge.min_kappa) == (
        "m",
        "${KEY}",
        (0, 3),
        0.4,
    )
    assert judge.endpoint == "https://api.example.com/v1/chat/completions"
    assert judge.source == "llm:gpt"


@pytest.mark.parametrize(
    ("judge", "problem"),
    [
        (
            'model = "m"\nscale = [3, 0]',
            "line 5: [[judges]] #1 key 'scale': must be [lowest, highest]",
        ),
        (
            'model = "m"\nconcurrency = 0',
            "line 5: [[judges]] #1 key 'concurrency': concurrency must be at least 1, got 0",
        ),
        ('model = "m"\nprompt = "missing.j2"', "line 5: [[judges]] #1 key 'prompt': prompt file"),
        ('model = "m"\ncolour = 1', "line 5: [[judges]] #1 key 'colour': unknown key"),
        ("temperature = 0", "[[judges]] #1 key 'model': needs model"),
    ],
)
def test_a_bad_judge_table_names_the_line_and_key(tmp_path: Path, judge: str, problem: str) -> None:
    with pytest.raises(InputError) as error:
        load_project(_project(tmp_path, judge))
    assert problem in str(error.value)


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("temperature = inf", "temperature must be a finite number, got 'inf'"),
        ("temperature = nan", "temperature must be a finite number, got 'nan'"),
        ("temperature = 2.5", "temperature must be at most 2, got 2.5"),
        ("temperature = -0.1", "temperature must be at least 0, got -0.1"),
        ("timeout = inf", "timeout must be a finite number, got 'inf'"),
        ("timeout = 0", "timeout must be more than 0, got 0"),
        ("timeout = 1e9", "timeout must be at most 3600, got 1e+09"),
        ("time_limit = 0", "time_limit must be more than 0, got 0"),
        ("time_limit = -inf", "time_limit must be a finite number, got '-inf'"),
        ("concurrency = 1001", "concurrency must be at most 1000, got 1001"),
        ("concurrency = 2.0", "must be a whole number"),
        ("budget = -1", "budget must be at least 0, got -1"),
        ("budget = 1" + "0" * 400, "budget must be at most 1e+07, got 1000000000"),
        ("retries = 21", "retries must be at most 20, got 21"),
        ("retries = true", "must be a whole number"),
        ("min_kappa = nan", "min_kappa must be a finite number, got 'nan'"),
        ("min_kappa = 1.5", "min_kappa must be at most 1, got 1.5"),
        ('temperature = "0"', "must be a number"),
    ],
)
def test_every_numeric_key_is_finite_and_in_range(
    tmp_path: Path, setting: str, problem: str
) -> None:
    key = setting.split(" ")[0]
    with pytest.raises(InputError) as error:
        load_project(_project(tmp_path, f'model = "m"\n{setting}'))
    assert f"line 5: [[judges]] #1 key '{key}': {problem}" in str(error.value)


@pytest.mark.parametrize(
    ("setting", "key", "problem"),
    [
        ('headers = { X-Token = "a\\nb" }', "headers", "header X-Token: the value holds a line"),
        ('headers = { X-Token = "caf\u00e9" }', "headers", "or a non-ASCII character"),
        ('headers = { "X Token" = "a" }', "headers", "header name 'X Token' is not an HTTP token"),
        ('api_key = "sk-\\r\\nX: 1"', "api_key", "header Authorization: the value holds"),
    ],
)
def test_a_header_that_cannot_be_sent_is_refused_when_read(
    tmp_path: Path, setting: str, key: str, problem: str
) -> None:
    with pytest.raises(InputError) as error:
        load_project(_project(tmp_path, f'model = "m"\n{setting}'))
    assert f"line 5: [[judges]] #1 key '{key}': " in str(error.value)
    assert problem in str(error.value)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://", "names no host"),
        ("http://[::1/v1", "Invalid port"),
        ("http://127.0.0.1:99999/v1", "port 99999 is not from 1 to 65535"),
        ("http://exa mple.com/v1", "holds whitespace or a control character"),
        ("ftp://example.com/v1", "must be an http(s) URL"),
    ],
)
def test_a_url_that_cannot_be_asked_is_refused_when_read(
    tmp_path: Path, url: str, problem: str
) -> None:
    path = tmp_path / "evalplat.toml"
    path.write_text(f'[[judges]]\nname = "gpt"\nurl = "{url}"\nmodel = "m"\n')
    with pytest.raises(InputError) as error:
        load_project(path)
    assert "line 3: [[judges]] #1 key 'url': " in str(error.value)
    assert problem in str(error.value)
