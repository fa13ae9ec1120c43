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
            "line 5: [[judges]] #1 key 'concurrency': must be a whole",
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
