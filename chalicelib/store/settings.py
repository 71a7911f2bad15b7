"""Settings shared by all server instances through the store."""

from __future__ import annotations

import secrets


from chalicelib import settings
from chalicelib.store.dynamo.models import SettingItem
from chalicelib.store.dynamo.retry import conditional

_TOKEN_KEY = "next-token-signing-key"


def token_signing_key() -> bytes:
    """The NextToken HMAC key: GLUE_TOKEN_SECRET, else one random key stored once for all."""
    configured = settings.current().token_secret
    if configured:
        return configured.encode()
    try:
        return SettingItem.get(_TOKEN_KEY, consistent_read=True).value
    except SettingItem.DoesNotExist:
        pass
    candidate = SettingItem(_TOKEN_KEY, value=secrets.token_bytes(32))
    if conditional(lambda: candidate.save(condition=SettingItem.name.does_not_exist())):
        return candidate.value
    # Another instance stored its key first: everyone uses that one.
    return SettingItem.get(_TOKEN_KEY, consistent_read=True).value
