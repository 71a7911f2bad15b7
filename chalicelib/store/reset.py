"""Emptying the local catalog between test runs (``POST /_local/reset``, served by the local
server only, infra/local/server.py; never deployed).

Every item of every catalog table goes, for every account; the identities (issued keys) and the
settings (the page-token key) stay, so clients keep working. Table files under the warehouse
(Paimon directories, Iceberg metadata) are not touched: they are the caller's to remove.
"""

from __future__ import annotations

from pynamodb.models import Model

from chalicelib.store.dynamo.models import ALL_MODELS, IdentityItem, SettingItem

KEPT: tuple[type[Model], ...] = (IdentityItem, SettingItem)


def _key_names(model: type[Model]) -> list[str]:
    return [attr.attr_name for attr in model.get_attributes().values() if attr.is_hash_key or attr.is_range_key]


def empty_catalog() -> int:
    """Delete every catalog item of every account (keys read only); the number deleted."""
    deleted = 0
    for model in ALL_MODELS:
        if model in KEPT:
            continue
        with model.batch_write() as batch:
            for item in model.scan(attributes_to_get=_key_names(model)):
                batch.delete(item)
                deleted += 1
    return deleted
