"""Emptying the local catalog between test runs (``POST /_local/reset``, served by the local
server only, infra/local/server.py; never deployed).

``empty_catalog``: every item of every catalog table goes, for every account. ``empty_account``:
only one account's (its catalog, in every region). Either way the identities (issued keys) and
the settings (the page-token key) stay, so clients keep working. Table files under the warehouse
(Paimon directories, Iceberg metadata) are not touched: they are the caller's to remove.

One account's items cannot be picked by key alone: an account's own items are keyed by its
catalog key (``region SEP account``), but what lies below a database or table is keyed by that
database's or table's uid. So ``empty_account`` first scans the databases, tables, transactions
and cleanup jobs to learn the account's uids, then scans every table and deletes the items keyed
by the account or one of those uids. That is two scans of the store: fine for a local catalog
(the all-accounts reset scans everything once too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pynamodb.models import Model

from chalicelib.store.dynamo.models import (ALL_MODELS, SEP, CatalogDocumentItem, CatalogEntryItem, CleanupJobItem,
                                            ColumnStatisticsItem, CommitStateItem, DatabaseItem, IdentityItem,
                                            IndexEntryItem, ManifestPartitionItem, ManifestPartitionVersionItem,
                                            ObjectItem, ObjectVersionItem, PaimonItem, PartitionDigestItem,
                                            PartitionItem, PendingWriteItem, SearchPostingItem, SettingItem,
                                            TableItem, TableVersionItem, TransactionItem)

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


def _catalog_id(catalog_key: Optional[str]) -> Optional[str]:
    """The catalog id of a ``region SEP catalog id`` key (or of a longer key starting with one)."""
    parts = (catalog_key or "").split(SEP)
    return parts[1] if len(parts) > 1 else None


@dataclass
class _Account:
    """What belongs to one account: its catalog id, and the uids found below it."""

    account: str
    databases: set[str] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)
    indexes: set[str] = field(default_factory=set)
    transactions: set[str] = field(default_factory=set)

    def owns(self, catalog_key: Optional[str]) -> bool:
        return _catalog_id(catalog_key) == self.account

    def add_indexes(self, indexes_json: Optional[str]) -> None:
        self.indexes.update(index["uid"] for index in json.loads(indexes_json or "[]"))


def _find(account: str) -> _Account:
    """The account's database, table, index and transaction uids, live or being cleaned up."""
    found = _Account(account)
    for database in DatabaseItem.scan(attributes_to_get=["catalog", "uid"]):
        if found.owns(database.catalog):
            found.databases.add(database.uid)
    jobs = list(CleanupJobItem.scan(attributes_to_get=["queue", "job", "kind", "uid", "catalog", "db_uid", "indexes"]))
    # A deleted database's tables stay below its uid until its cleanup job has purged them.
    found.databases.update(job.uid for job in jobs if job.kind == "database" and found.owns(job.catalog))
    for table in TableItem.scan(attributes_to_get=["db_uid", "name", "uid", "indexes"]):
        if table.db_uid in found.databases:
            found.tables.add(table.uid)
            found.add_indexes(table.indexes)
    for job in jobs:
        if job.kind == "table" and job.db_uid in found.databases:  # a deleted table not purged yet
            found.tables.add(job.uid)
            found.add_indexes(job.indexes)
    for transaction in TransactionItem.scan(attributes_to_get=["catalog", "transaction_id"]):
        if found.owns(transaction.catalog):
            found.transactions.add(transaction.transaction_id)
    return found


def _belongs(found: _Account) -> dict[type[Model], Callable[[Any], bool]]:
    """Per model: whether an item (its keys and the attributes ``_EXTRA`` names) is the account's."""
    below_table = lambda item: item.table_uid in found.tables  # noqa: E731

    def commit_state(item: Any) -> bool:
        kind, _, rest = item.name.partition(SEP)
        return found.owns(rest) if kind == "seq" else rest in found.tables  # lock / summaries: a table

    def catalog_entry(item: Any) -> bool:
        # ``region SEP catalog id SEP kind`` scopes; the crawl queue and schedule index are shared
        # scopes whose range keys start with the catalog key.
        return found.owns(item.scope if item.scope.count(SEP) >= 2 else item.key)

    def cleanup_job(item: Any) -> bool:
        return (found.owns(item.catalog) or item.db_uid in found.databases or item.table_uid in found.tables
                or item.uid in found.tables or item.uid in found.databases or item.uid in found.indexes
                or item.uid in found.transactions)

    return {
        DatabaseItem: lambda item: found.owns(item.catalog),
        TableItem: lambda item: item.db_uid in found.databases,
        TableVersionItem: below_table, PartitionItem: below_table, PartitionDigestItem: below_table,
        ColumnStatisticsItem: below_table, ObjectItem: below_table, ObjectVersionItem: below_table,
        ManifestPartitionItem: below_table, ManifestPartitionVersionItem: below_table,
        # A database's Paimon functions are keyed by the database's uid.
        PaimonItem: lambda item: item.table_uid in found.tables or item.table_uid in found.databases,
        IndexEntryItem: lambda item: item.index_uid in found.indexes,
        SearchPostingItem: lambda item: found.owns(item.term),
        TransactionItem: lambda item: found.owns(item.catalog),
        PendingWriteItem: lambda item: item.transaction_id in found.transactions,
        CommitStateItem: commit_state,
        CatalogEntryItem: catalog_entry,
        CatalogDocumentItem: lambda item: found.owns(item.catalog),
        CleanupJobItem: cleanup_job,
    }


# Attributes besides the keys that deciding needs.
_EXTRA: dict[type[Model], list[str]] = {CleanupJobItem: ["kind", "uid", "catalog", "db_uid", "table_uid"]}


def empty_account(account: str) -> int:
    """Delete every catalog item of one account (every region's catalog of that id, what lies
    below its databases and tables, its transactions, grants, crawlers and cleanup jobs); other
    accounts' items stay. The number deleted."""
    belongs = _belongs(_find(account))
    deleted = 0
    for model, mine in belongs.items():
        with model.batch_write() as batch:
            for item in model.scan(attributes_to_get=_key_names(model) + _EXTRA.get(model, [])):
                if mine(item):
                    batch.delete(item)
                    deleted += 1
    return deleted
