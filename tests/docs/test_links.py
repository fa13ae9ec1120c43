"""Every relative link of the README and of docs/*.md leads to a file that exists, and a link to
a heading of a page to a heading (or an ``<a id>``) that page has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings, and its explicit ``<a id>`` anchors."""
    text = page.read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.*)$", text, flags=re.M)
    slugs = {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in headings}
    return slugs | set(re.findall(r'<a id="([^"]+)"', text))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]*)(#[^)\s]*)?\)", text)
    if page.name in ("README.md", "index.md", "adoption.md"):
        assert len(links) >= 10, f"{page.name}: the link pattern found {len(links)} links"
    for path, anchor in links:
        if re.match(r"[a-z]+:", path):
            continue  # http(s), mailto: not checked here
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.name} links {path}, which does not exist"
        if anchor and target.suffix == ".md":
            assert anchor[1:] in anchors(target), (
                f"{page.name} links {path}{anchor}: no such heading"
            )
