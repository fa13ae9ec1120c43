"""Invite tokens: random, shown once, stored as their SHA-256.

A token is 32 random bytes (``secrets.token_urlsafe``): guessing one is out of reach, so a
plain, unsalted hash is enough to make a stolen database useless as a key. The anti-forgery
value sent back with every grade (``csrf``) is random too, stored as it is: it opens nothing
without the invite's cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

COOKIE_PREFIX = "evalplat_rate_"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_csrf() -> str:
    return secrets.token_hex(32)


def same_secret(given: str | None, expected: str) -> bool:
    """Compared in constant time: the answer's timing says nothing of how much matched."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def cookie_name(task: str) -> str:
    """One cookie per task, so that a rater of two tasks holds both invites; named by a hash
    of the task's name, which may hold characters a cookie name cannot."""
    return COOKIE_PREFIX + hashlib.sha256(task.encode("utf-8")).hexdigest()[:16]
