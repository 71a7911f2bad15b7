"""The catalog browser's static files and the health endpoint.

The page (``static/``) is plain HTML, JavaScript and CSS, served from a fixed allow-list: a
caller's path never becomes a file path. The page calls the service's public APIs from the
browser (Glue, Lake Formation, Iceberg REST, Paimon REST) with the caller's own credentials, so
it sees exactly what that principal's API calls would; there is no API of its own.

``GET /health`` answers the service's status and whether the store answers, without
authentication: one GetItem, cached two seconds (service/health.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from chalicelib import settings
from chalicelib.protocol import sigv4
from chalicelib.protocol.response import Headers, WireResponse

STATIC = Path(__file__).resolve().parent / "static"
# The only files served, and their media types: /ui is the page, /ui/<name> its parts.
FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "sigv4.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
# The page runs only its own script and talks only to this service.
_SECURITY: Headers = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_cache: dict[str, str] = {}


def _read(name: str) -> str:
    text = _cache.get(name)
    if text is None:
        text = (STATIC / name).read_text(encoding="utf-8")
        _cache[name] = text
    return text


def not_found(path: str) -> WireResponse:
    """A path under /ui that is not one of FILES."""
    body = json.dumps({"__type": "NotFoundException", "Message": f"{path[:200]} is not a file of the catalog browser"})
    return WireResponse(404, body, {"Content-Type": "application/json", "x-amzn-ErrorType": "NotFoundException"})


def page(name: str = "index.html") -> WireResponse:
    """One of the browser's files, or 404 for any name not in FILES."""
    if name not in FILES:
        return not_found(f"/ui/{name}")
    return WireResponse(200, _read(name), {"Content-Type": FILES[name], **_SECURITY})


def wants_html(headers: dict[str, str]) -> bool:
    """Whether the request comes from a browser asking for a page (``Accept: text/html``)."""
    return "text/html" in headers.get("accept", "").lower()


def redirect_to_page(location: str = "ui") -> WireResponse:
    """``GET /`` from a browser (or ``/ui/``): to the page, relative so a stage path (``/prod/``) is kept."""
    return WireResponse(302, "", {"Location": location, "Content-Type": "text/plain", "Cache-Control": "no-cache"})


def health() -> WireResponse:
    """``{"status", "store", "auth", ...}``: 200 when the store answers, 503 when it does not.

    In open mode the default account and region are part of the answer (the page shows them);
    with SigV4 on, nothing about the catalog is: only that a sign-in is needed.
    """
    from chalicelib.service import health as service_health  # not at app import (tests/unit/test_routes.py)

    store = service_health.store_status()
    configured = settings.current()
    answer: dict[str, object] = {"status": "ok" if store == "ok" else "degraded", "store": store,
                                 "auth": "sigv4" if sigv4.required() else "open", "region": configured.region}
    if not sigv4.required():
        answer["account"] = configured.default_account_id
    return WireResponse(200 if store == "ok" else 503, json.dumps(answer),
                        {"Content-Type": "application/json", "Cache-Control": "no-store"})
