"""Crash points: where a test may kill the process, to prove that no state is half-written.

``EVALPLAT_CRASH_AT=NAME:N`` makes the process kill itself (SIGKILL: no cleanup, no
``finally``) the N-th time it passes the point NAME (``N`` defaults to 1); every committed
store transaction is the point ``commit``. ``EVALPLAT_CRASH_TRACE=FILE`` appends the name of each
point passed to FILE, one per line, so a test can first count the points of a night and then
kill it at each one in turn. Without these variables a crash point costs one dictionary look-up.
"""

from __future__ import annotations

import os
import signal

_passed: dict[str, int] = {}


def crash_point(name: str) -> None:
    """Pass the crash point ``name`` (see the module docstring)."""
    target = os.environ.get("EVALPLAT_CRASH_AT")
    trace = os.environ.get("EVALPLAT_CRASH_TRACE")
    if target is None and trace is None:
        return
    _passed[name] = _passed.get(name, 0) + 1
    if trace:
        with open(trace, "a", encoding="utf-8") as file:
            file.write(f"{name}\n")
    if target is None:
        return
    wanted, _, count = target.partition(":")
    if wanted == name and _passed[name] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
