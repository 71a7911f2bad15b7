"""The composition root: what the protocol adapters run on, wired once, before the first request.

app.py calls :func:`compose` at import (so the Lambda handler and infra/local/server.py, which
serves app.py, both run composed); so does anything that calls a protocol's wire without app.py
(unit tests). It imports nothing heavy: what it wires loads on first use.

- The page-token key. Every protocol pages with ``page_tokens`` (Glue and Lake Formation's
  NextToken, Paimon's pageToken; Iceberg REST's next), a pure HMAC codec; its key comes from the
  store (``store.settings.token_signing_key``: ``GLUE_TOKEN_SECRET``, else one random key stored once
  for every instance), read when the first token is signed or checked, not at import: the store
  (PynamoDB) is left for the first request.
- The store and the clock. The service core reaches them itself (``chalicelib.store`` through its
  own face, ``chalicelib.clock``); both are configured from the environment when they load, so there
  is nothing to wire here yet. When they take their settings from one settings object, it is
  built and handed to them here, once.
"""

from __future__ import annotations

from chalicelib import page_tokens

_composed = False


def _token_signing_key() -> bytes:
    from chalicelib.store.settings import token_signing_key  # the store loads with the first token
    return token_signing_key()


def compose() -> None:
    """Wire the adapters' dependencies (idempotent: the first call does it)."""
    global _composed
    if not _composed:
        page_tokens.set_secret_loader(_token_signing_key)
        _composed = True
