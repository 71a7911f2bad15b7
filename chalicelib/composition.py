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
- The garbage collector of a serving process (:func:`tune_collector`, app.py only): the code
  loaded at import is frozen out of every collection, and a young collection runs every 20,000
  allocations rather than 700. A server holds large long-lived values (an Iceberg table's cached
  metadata: 1,000 snapshots are ~6,000 dicts), which the default thresholds had the collector
  walk again and again: a commit on such a table cost ~1 ms more than on a small one for that
  alone (bench/bench_iceberg_rest.py; docs/design.md "The collector").
"""

from __future__ import annotations

import gc

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


# Young collections every this many allocations (CPython's default is 700), older generations
# every 50 younger ones (default 10): cyclic garbage is rare in a request (an exception and its
# traceback), and what a request allocates is mostly freed by reference counting at its end.
_YOUNG_THRESHOLD = 20_000
_OLDER_THRESHOLD = 50


def tune_collector() -> None:
    """Freeze what is loaded (modules, functions, routes: never garbage) and space collections
    out, for a process that serves requests (the Lambda, the local server)."""
    gc.freeze()
    gc.set_threshold(_YOUNG_THRESHOLD, _OLDER_THRESHOLD, _OLDER_THRESHOLD)
