"""The generated docs match the code: metrics registry, CLI, searcher kinds, alert channels."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from evalplat.alerts.registry import CHANNEL_KINDS
from evalplat.cli import app
from evalplat.metrics.registry import FAMILIES
from evalplat.searchers import SEARCHERS

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO_ROOT / "scripts" / "gen_docs.py")
    if spec is None or spec.loader is None:
        raise RuntimeError("scripts/gen_docs.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_docs", module)
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


@pytest.mark.parametrize("page", GEN.pages())
def test_committed_page_matches_the_generator(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    assert GEN.render_page(page, text) == text, f"stale: run python scripts/gen_docs.py ({page})"


def test_a_page_that_lost_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="BEGIN GENERATED: metrics"):
        GEN.render_page("metrics.md", "# Metrics\n\nno block here\n")


def test_a_stale_block_is_detected(tmp_path: Path) -> None:
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    edited = text.replace("### nDCG\n", "### nDCG (old)\n", 1)
    assert edited != text
    assert GEN.render_page("metrics.md", edited) == text


def test_every_metric_family_and_alias_is_documented() -> None:
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    for spec in FAMILIES.values():
        assert f"\n### {spec.name}\n" in text
        assert spec.formula in text
        for alias in spec.aliases:
            assert f"`{alias}`" in text


def test_every_searcher_kind_and_param_is_documented() -> None:
    text = (DOCS / "searchers.md").read_text(encoding="utf-8")
    for kind in SEARCHERS.values():
        assert f"### `{kind.name}`" in text
        for param in kind.params:
            assert f"| `{param.name}` |" in text


def test_every_alert_channel_is_documented() -> None:
    text = (DOCS / "alerts.md").read_text(encoding="utf-8")
    for kind in CHANNEL_KINDS.values():
        assert f'### `type = "{kind.name}"`' in text


def cli_sections() -> dict[str, str]:
    """Section of docs/cli.md per command title (``evalplat testset import``)."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    parts = re.split(r"^## `(evalplat[a-z -]*)`$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_command_of_the_app_has_a_section() -> None:
    sections = cli_sections()
    titles = [" ".join(("evalplat", *path)) for path, _command, _ctx in GEN.cli_commands()]
    assert len(titles) > 30
    assert sorted(sections) == sorted(titles)


@pytest.mark.parametrize(
    "path", [path for path, _command, _ctx in GEN.cli_commands()], ids=lambda p: " ".join(p)
)
def test_cli_page_shows_what_help_prints(path: tuple[str, ...]) -> None:
    """Every option and the first help line that ``--help`` prints appear in the command's
    section."""
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    section = cli_sections()[" ".join(("evalplat", *path))]
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", result.output))
    assert "--help" in options
    for option in options:
        assert f"{option}" in section, f"{option} of {' '.join(path)} is missing from docs/cli.md"
    first_line = " ".join(GEN.cli_commands()[0][1].help.split())
    if path:
        command = dict((p, c) for p, c, _ctx in GEN.cli_commands())[path]
        first_line = command.help.strip().splitlines()[0]
    assert first_line in " ".join(result.output.split())
    assert first_line in section
