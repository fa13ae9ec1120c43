"""Test set content in memory, and how several raters' grades of one pair resolve.

- ``content``: ``TestSetContent`` and ``load_testset``, validated and content-hashed;
- ``raters``: grade rules over several raters and their agreement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.testsets.content import TestSetContent, load_testset

__all__ = ["TestSetContent", "load_testset"]


def __getattr__(name: str) -> Any:
    if name in ("TestSetContent", "load_testset"):
        from evalplat.testsets import content

        return getattr(content, name)
    raise AttributeError(f"module 'evalplat.testsets' has no attribute {name!r}")
