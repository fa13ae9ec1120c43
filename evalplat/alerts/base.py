"""What every alert channel shares: its parameter spec, the send contract and its errors.

A channel kind (``ChannelKind``) is declared once, in its own module, with the parameters a
project-file table may set; the registry (``evalplat.alerts.registry``) validates tables
against it, so an unknown key or type is an ``InputError`` listing the valid ones before
anything is sent. A refusal is a ``SettingError`` naming the key at fault, so that the project
file's reader can point at that key's line.

``Channel.send(notice)`` delivers one notice (the alert events of a night) or raises
``DeliveryError``; ``transient`` tells the delivery loop whether another attempt may succeed
(a timeout, HTTP 5xx/429, a dropped SMTP connection) or not (HTTP 4xx, a refused login, an
unset ``${ENV}`` variable).
Secrets stay as ``${ENV}`` placeholders in the channel's params and are expanded at each send,
so a channel object can be printed or stored without leaking them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evalplat.alerts.notice import Notice
from evalplat.errors import InputError
from evalplat.inputs.env import expand_env
from evalplat.inputs.validation import check_number

# Keys every channel table may have besides its kind's own parameters.
COMMON_KEYS = ("type", "name")

# The wait before a failed delivery's second attempt, in seconds, when the channel sets none;
# it doubles before each later attempt (``evalplat.alerts.delivery``).
DEFAULT_BACKOFF = 1.0


class SettingError(InputError):
    """A channel table refused; ``key`` is the key at fault (None: the table as a whole, e.g. a
    required key that is missing)."""

    def __init__(self, problem: str, key: str | None = None):
        super().__init__(problem)
        self.key = key


class DeliveryError(Exception):
    """One delivery attempt failed; ``transient`` means a later attempt may succeed."""

    def __init__(self, problem: str, *, transient: bool, retry_after: float | None = None):
        super().__init__(problem)
        self.transient = transient
        self.retry_after = retry_after


@dataclass(frozen=True)
class Param:
    """A channel parameter: accepted Python types (from TOML), whether required, its default."""

    name: str
    types: tuple[type, ...]
    help: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] | None = None
    # the range of a number (``check_number``): inclusive, exclusive minimum, inclusive
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None

    def check(self, value: Any, kind: str) -> Any:
        # TOML integers are fine where a float is expected; booleans are not numbers here.
        ok = isinstance(value, self.types) and not (
            isinstance(value, bool) and bool not in self.types
        )
        if not ok:
            # "a number" already covers whole numbers
            shown = [t for t in self.types if not (t is int and float in self.types)]
            wanted = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in shown)
            raise SettingError(
                f"{kind} channel: {self.name} must be {wanted}, got {value!r}", self.name
            )
        if self.choices is not None and value not in self.choices:
            raise SettingError(
                f"{kind} channel: {self.name} must be one of {', '.join(self.choices)}, "
                f"got {value!r}",
                self.name,
            )
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                check_number(value, self.name, minimum=self.minimum, above=self.above,
                             maximum=self.maximum)  # fmt: skip
            except InputError as error:
                raise SettingError(f"{kind} channel: {error.problem}", self.name) from None
        return value


_TYPE_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true/false"}
_TYPE_NAMES.update({dict: "a table", list: "a list"})

# Channels that can fail for a while (a server down, a timeout) are retried; this is how long
# they wait first. At most 30 s: no wait between attempts is longer (``DeliveryPolicy``).
BACKOFF = Param(
    "backoff",
    (int, float),
    "seconds to wait before retrying a failed send; doubled before each later retry",
    default=DEFAULT_BACKOFF,
    minimum=0,
    maximum=30,
)


@dataclass(frozen=True)
class ChannelKind:
    """A channel type: its name (the table's ``type``), a description, params and factory."""

    name: str
    description: str
    params: tuple[Param, ...]
    factory: Callable[[str, dict[str, Any]], Channel]

    def validate(self, table: Mapping[str, Any]) -> dict[str, Any]:
        """Params with defaults filled in; unknown keys, missing keys or bad types raise."""
        known = {p.name: p for p in self.params}
        for key in table:
            if key not in known and key not in COMMON_KEYS:
                valid = ", ".join([*COMMON_KEYS, *known])
                raise SettingError(
                    f"{self.name} channel: unknown parameter '{key}'; valid ones: {valid}", key
                )
        params: dict[str, Any] = {}
        for param in self.params:
            if param.name in table:
                params[param.name] = param.check(table[param.name], self.name)
            elif param.required:
                raise SettingError(f"{self.name} channel needs {param.name} ({param.help})")
            else:
                params[param.name] = param.default
        return params


class Channel(ABC):
    """A configured destination for alert messages."""

    kind: str = ""

    def __init__(self, name: str, params: dict[str, Any]):
        self.name = name
        self.params = params

    @abstractmethod
    def send(self, notice: Notice) -> None:
        """Deliver ``notice`` once; raise ``DeliveryError`` on failure."""

    @property
    def backoff(self) -> float:
        """Seconds to wait before retrying a failed send (its ``backoff`` param, if it has one)."""
        value = self.params.get("backoff")
        return DEFAULT_BACKOFF if value is None else float(value)

    def expanded(self, key: str) -> Any:
        """The param with ``${ENV}`` placeholders expanded now; an unset variable is permanent."""
        try:
            return expand_env(self.params[key])
        except InputError as error:
            raise DeliveryError(f"{key}: {error}", transient=False) from None

    def http_headers(self, notice: Notice) -> dict[str, str]:
        """``Idempotency-Key`` for receivers that drop a request they have already accepted."""
        return {} if notice.key is None else {"Idempotency-Key": notice.key}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def post_json(
    url: str, payload: Any, *, timeout: float, headers: Mapping[str, str] | None = None
) -> None:
    """POST ``payload`` as JSON; map failures to ``DeliveryError`` (transient or not).

    Transient: connection errors, timeouts, HTTP 408, 425, 429 and 5xx (with the server's
    ``Retry-After`` in seconds when it sent one). Any other status ≥ 400 is permanent: the URL
    or payload is wrong and retrying will not fix it.
    """
    import httpx

    try:
        response = httpx.post(url, json=payload, timeout=timeout, headers=dict(headers or {}))
    except httpx.TimeoutException:
        raise DeliveryError(
            f"no answer from {_origin(url)} within {timeout:g}s", transient=True
        ) from None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as error:
        raise DeliveryError(f"invalid URL: {error}", transient=False) from None
    except httpx.TransportError as error:
        raise DeliveryError(
            f"could not reach {_origin(url)}: {error or type(error).__name__}", transient=True
        ) from None
    if response.status_code < 400:
        return
    body = " ".join(response.text.split())[:200]
    status = response.status_code
    transient = status in (408, 425, 429) or status >= 500
    raise DeliveryError(
        f"{_origin(url)} answered HTTP {status}" + (f": {body}" if body else ""),
        transient=transient,
        retry_after=_retry_after(response.headers.get("Retry-After")),
    )


def _origin(url: str) -> str:
    """Scheme, host and port only: webhook paths and queries often embed secret tokens."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare for webhooks, and our backoff is bounded anyway
