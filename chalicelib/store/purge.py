"""What purging an unlinked table or database deletes: the one list of every family's items.

Deleting a database or table only unlinks it and records a cleanup job (``catalog``); a cleaner
(``service.cleanup``) then deletes what was below it, a bounded chunk at a time, through here.
Every step deletes what is still there, so a chunk cut short by its budget (``catalog.purging``)
or a crash is simply run again. A family that stores items below a table adds them to
``purge_table``: nothing registers at import, so a process that never imported a family's module
(the scheduled cleaner, a server that only served Glue calls) still purges its items.
"""

from __future__ import annotations

from typing import Iterable

from chalicelib.store.catalog import delete_all
from chalicelib.store.dynamo.models import (ColumnStatisticsItem, CommitStateItem, IndexEntryItem,
                                            ManifestPartitionItem, ManifestPartitionVersionItem, ObjectItem,
                                            ObjectVersionItem, PaimonItem, PartitionDigestItem, PartitionItem,
                                            TableVersionItem)
from chalicelib.store.manifest_partitions import summaries_marker
from chalicelib.store.paimon_functions import purge_database as purge_functions


def purge_table(table_uid: str, index_uids: Iterable[str]) -> None:
    """Delete everything stored below an unlinked table (``index_uids``: its partition
    indexes), within the current budget (``catalog.purging``; BudgetSpent when it runs out)."""
    delete_all(TableVersionItem, table_uid, "version")  # archived versions (catalog)
    # Partitions before index entries: a backfill still running writes an entry only while its
    # partition is there (partitions.write_entries_checked), so purged entries cannot come back.
    delete_all(PartitionItem, table_uid, "key")
    for index_uid in index_uids:
        delete_all(IndexEntryItem, index_uid, "key")
    delete_all(PartitionDigestItem, table_uid, "key")  # the partition digest (digests)
    delete_all(ColumnStatisticsItem, table_uid, "key")  # column statistics (statistics)
    # A governed table's objects (transactions) and its manifest's partitions (manifest_partitions).
    delete_all(ObjectVersionItem, table_uid, "key")
    delete_all(ObjectItem, table_uid, "uri")
    delete_all(ManifestPartitionVersionItem, table_uid, "key")
    delete_all(ManifestPartitionItem, table_uid, "key")
    CommitStateItem(summaries_marker(table_uid)).delete()
    delete_all(PaimonItem, table_uid, "key")  # Paimon schemas, heads, snapshots, tags, branches (paimon)


def purge_database(db_uid: str) -> None:
    """Delete what is stored below an unlinked database itself, besides its tables (which the
    cleaner purges one by one): its Paimon functions (paimon_functions; a Glue DeleteDatabase
    must not leave them behind either), within the current budget."""
    purge_functions(db_uid)
