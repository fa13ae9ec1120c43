"""The nightly job and its project file.

- ``project``: ``evalplat.toml``, read and checked (``load_project``);
- ``prep``: everything checked before a night writes anything;
- ``job``: the steps of a night (``run_nightly``): import, register, run each config, report, prune;
- ``config_night``: one config on one test set for a night: run, compare, observe;
- ``notify``: a night's verdicts and failures fed to the alert state machines;
- ``delivery``: the alert outbox sent to its channels, with retries, exactly once per receiver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.nightly.job import run_nightly
    from evalplat.nightly.project import load_project

__all__ = ["load_project", "run_nightly"]


def __getattr__(name: str) -> Any:
    if name == "run_nightly":
        from evalplat.nightly.job import run_nightly

        return run_nightly
    if name == "load_project":
        from evalplat.nightly.project import load_project

        return load_project
    raise AttributeError(f"module 'evalplat.nightly' has no attribute {name!r}")
