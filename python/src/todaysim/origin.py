"""Whether the server lets the page under test call it: the page's `Origin` and the CORS
preflight a browser makes, asked before anything starts (`todaysim.page` re-exports these)."""
from __future__ import annotations

import urllib.parse

from .client import Client


class OriginRefused(RuntimeError):
    """The server does not let pages of the page under test's origin call it (no CORS grant for
    that `Origin`): every bridge call of the page would be refused. Raised before anything starts,
    naming the flag to add."""


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`, as a browser sends it in `Origin` (default ports left out)."""
    parts = urllib.parse.urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    port = f":{parts.port}" if parts.port is not None and parts.port != default else ""
    return f"{scheme}://{host}{port}"


def refused_sentence(server: str, origin: str) -> str:
    """What the Python helpers raise and `/bridge.js` logs when the server refuses the page's origin."""
    return (f"todaysim at {server} does not allow pages of {origin} to call it (cross-origin), so every bridge call "
            f"of the page would be refused: start it with --allow-origin {origin} (Scripts/run --allow-origin {origin})")


def check_origin(client: Client, page_url: str) -> None:
    """Asks the server, as the browser will, whether a page at `page_url` may call it: a CORS
    preflight with the page's `Origin`. Nothing to ask when the page is served by the server
    itself; `OriginRefused` naming `--allow-origin` when the grant is missing."""
    origin, server = origin_of(page_url), origin_of(client.base_url)
    if origin == server:
        return
    granted = client.preflight("/v1/sessions", origin, "POST")
    if granted not in (origin, "*"):
        raise OriginRefused(refused_sentence(client.base_url, origin))
