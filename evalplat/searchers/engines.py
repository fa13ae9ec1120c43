"""An engine's identity: the name of the endpoint a config searches, shared by every config that
searches it, so that one outage of it is one thing (``evalplat.nightly.outages``).

- ``http``: the url's scheme, host and port (the scheme's default port when none is written):
  ``https://search.example.com/products/_search`` → ``https://search.example.com:443``;
- ``sql``: the database URL without its password and query options
  (``postgresql+psycopg://app@db:5432/shop``);
- ``python``, ``command``, ``builtin``: none. A local searcher shares no server with another
  config, so its failures are its own.

Computed from the params as stored (``${ENV}`` placeholders not expanded), so no secret is
ever part of a name; a url that does not parse (a placeholder for the whole host, say) has no
identity, and its config's failures stay its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def engine_of(searcher: str, params: Mapping[str, Any]) -> str | None:
    """The identity of the engine a config of kind ``searcher`` with ``params`` searches, or
    None when it has none (module doc). The one place it is computed."""
    from evalplat.searchers import get_kind

    name = get_kind(searcher).engine
    return None if name is None else name(params)


def http_engine(params: Mapping[str, Any]) -> str | None:
    """``scheme://host:port`` of an ``http`` config's url."""
    try:
        parts = urlsplit(str(params.get("url") or "").strip())
        port = parts.port
    except ValueError:  # a port that is no number, a malformed IPv6 host
        return None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in DEFAULT_PORTS or not host or "{" in host or "$" in host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


def sql_engine(params: Mapping[str, Any]) -> str | None:
    """A ``sql`` config's database URL, its password left out."""
    import sqlalchemy as sa

    from evalplat.db.engine import normalise_url
    from evalplat.errors import InputError

    text = str(params.get("url") or "")
    if "${" in text:
        return None
    try:
        url = sa.make_url(normalise_url(text))
    except (InputError, sa.exc.ArgumentError, ValueError):
        return None
    bare = sa.URL.create(url.drivername, url.username, None, url.host, url.port, url.database)
    return bare.render_as_string(hide_password=False)
