"""Which database: --db, then EVALPLAT_DATABASE_URL, then the project file, then the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalplat.db.engine import DEFAULT_URL, resolve_url
from evalplat.errors import InputError


def test_precedence_and_project_relative_sqlite_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "evalplat.toml"
    project.write_text('[database]\nurl = "sqlite:///team.db"\n', encoding="utf-8")
    monkeypatch.delenv("EVALPLAT_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path / "..")
    assert resolve_url(None, project) == f"sqlite:///{tmp_path.resolve() / 'team.db'}"
    monkeypatch.setenv("EVALPLAT_DATABASE_URL", "postgresql://u@h/env")
    assert resolve_url(None, project) == "postgresql+psycopg://u@h/env"
    assert resolve_url("sqlite:///cli.db", project) == "sqlite:///cli.db"
    monkeypatch.delenv("EVALPLAT_DATABASE_URL")
    assert resolve_url(None, tmp_path / "missing.toml") == DEFAULT_URL


def test_project_database_url_expands_env_placeholders_at_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "evalplat.toml"
    project.write_text(
        '[database]\nurl = "postgresql://eval:${EVAL_DB_PASSWORD}@db.internal/evalplat"\n',
        encoding="utf-8",
    )
    monkeypatch.delenv("EVALPLAT_DATABASE_URL", raising=False)
    monkeypatch.setenv("EVAL_DB_PASSWORD", "pw")
    assert resolve_url(None, project) == "postgresql+psycopg://eval:pw@db.internal/evalplat"
    monkeypatch.delenv("EVAL_DB_PASSWORD")
    with pytest.raises(InputError, match="EVAL_DB_PASSWORD"):
        resolve_url(None, project)
