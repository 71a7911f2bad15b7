"""Opaque, tamper-proof page tokens bound to the request that issued them.

Every protocol adapter pages with these (Glue's and Lake Formation's NextToken, the Paimon REST
catalog's pageToken): a pure HMAC codec, no wire or store knowledge. The key loader is installed
once, before the first request is served, by the composition root (``chalicelib.composition``):
the key lives in the store.

A token is ``base64url(json(position)) + "." + hmac``. The MAC covers the position *and* the
request scope (operation, catalog, database, table, filters), so a forged, edited or replayed-
elsewhere token fails verification: it can never be used to read another database's or catalog's
data. The key comes from ``GLUE_TOKEN_SECRET`` when set; otherwise one random key is created in
the store on first use and shared by every server instance (Lambda runs many).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Callable

from chalicelib.errors import InvalidInputException

_MAC_BYTES = 16
_secret: bytes | None = None
_secret_loader: Callable[[], bytes] | None = None


def set_secret_loader(loader: Callable[[], bytes]) -> None:
    """Install the function that returns the signing key (called once, lazily)."""
    global _secret_loader, _secret
    _secret_loader, _secret = loader, None


def _key() -> bytes:
    global _secret
    if _secret is None:
        if _secret_loader is None:
            raise RuntimeError("token secret loader not configured")
        _secret = _secret_loader()
    return _secret


def _mac(scope: str, payload: bytes) -> str:
    digest = hmac.new(_key(), scope.encode() + b"\x00" + payload, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:_MAC_BYTES]).decode().rstrip("=")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode_token(scope: str, position: Any) -> str:
    """Sign ``position`` (any JSON value) for the request ``scope``."""
    payload = json.dumps(position, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=") + "." + _mac(scope, payload)


def decode_token(scope: str, token: str) -> Any:
    """The position a token carries; InvalidInputException if it was not issued for ``scope``."""
    try:
        if not token.isascii():  # compare_digest takes ASCII text only; tokens are base64
            raise ValueError(token)
        body, mac = token.split(".", 1)
        payload = _b64decode(body)
    except (ValueError, binascii.Error):
        raise InvalidInputException("Invalid NextToken: the token is malformed") from None
    if not hmac.compare_digest(mac, _mac(scope, payload)):
        raise InvalidInputException(
            "Invalid NextToken: the token was not issued for this request "
            "(it is bound to the operation, catalog and arguments that produced it)")
    return json.loads(payload)


def tag(scope: str, payload: str, length: int = 16) -> str:
    """A short hex MAC of ``payload`` for ``scope`` under the same key: a name the server made
    (a directory id, say) that a caller cannot forge."""
    return hmac.new(_key(), scope.encode() + b"\x00" + payload.encode(), hashlib.sha256).hexdigest()[:length]


def verify_tag(scope: str, payload: str, mac: str) -> bool:
    """Whether ``mac`` is ``tag(scope, payload)``."""
    return mac.isascii() and hmac.compare_digest(mac, tag(scope, payload, len(mac) or 1))


def request_scope(*parts: Any) -> str:
    """A canonical string for the arguments a token is bound to."""
    return json.dumps(parts, separators=(",", ":"), sort_keys=True, default=str)
