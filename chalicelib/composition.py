"""The composition root: what the protocol adapters run on, wired once, before the first request.

app.py calls :func:`compose` at import (so the Lambda handler and infra/local/server.py, which
serves app.py, both run composed); so does anything that calls a protocol's wire without app.py
(unit tests). It imports nothing heavy: what it wires loads on first use.

- The page-token key. Every protocol pages with ``page_tokens`` (Glue and Lake Formation's
  NextToken, Paimon's pageToken; Iceberg REST's next), a pure HMAC codec; its key comes from the
  store (``store.settings.token_signing_key``: ``GLUE_TOKEN_SECRET``, else one random key stored once
  for every instance), read when the first token is signed or checked, not at import: the store
  (PynamoDB) is left for the first request.
- The settings (``chalicelib.settings``): read from the environment once, here, before anything
  else runs (a few dozen lookups, no I/O). The store and the clock take theirs from that one
  object when they load (the DynamoDB driver must: its models are defined with the table names),
  and the service core reaches them through their own faces (``chalicelib.store``,
  ``chalicelib.clock``); tests swap settings with ``settings.replace``.
"""

from __future__ import annotations

from chalicelib import page_tokens, settings

_composed = False


def _token_signing_key() -> bytes:
    from chalicelib.store.settings import token_signing_key  # the store loads with the first token
    return token_signing_key()


def compose() -> None:
    """Wire the adapters' dependencies (idempotent: the first call does it)."""
    global _composed
    if not _composed:
        settings.current()
        page_tokens.set_secret_loader(_token_signing_key)
        _composed = True
