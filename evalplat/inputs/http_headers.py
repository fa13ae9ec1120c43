"""What an HTTP header may hold, checked when a setting is read rather than when it is sent.

A header name is a token (RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``); a value is
visible ASCII and spaces. A line break in a value would end the header (or be refused by the
HTTP library as a protocol error, which reads like a network fault and is retried), and a
non-ASCII character cannot be encoded. ``${VAR}`` placeholders pass: check their values again
once they are expanded.
"""

from __future__ import annotations

import re

from evalplat.inputs.validation import shown

HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE = re.compile(r"[\x20-\x7e]*")


def header_problem(name: str, value: str) -> str | None:
    """Why header ``name: value`` cannot be sent, or None. The value is never shown: it may be
    a secret."""
    if not HEADER_NAME.fullmatch(name):
        return f"header name {shown(name)} is not an HTTP token (letters, digits, '-', ...)"
    if not _VALUE.fullmatch(value):
        return (
            f"header {name}: the value holds a line break, a control character or a "
            "non-ASCII character"
        )
    return None
