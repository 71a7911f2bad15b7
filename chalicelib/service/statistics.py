"""Column statistics of tables and partitions: read, write and delete them, by column name.

Statistics of a table or a partition are read with one Query whatever the number of columns.
Only statistics of columns that still exist with a compatible type are shown: a column dropped
by UpdateTable takes its statistics with it (its epoch moves on), even for partitions.

Protocol-free: callers name the table with a TableRef (and a partition by its values) and pass
and get ColumnStatistics documents as Glue shapes them; per-column problems come back as
ColumnError / ColumnStatisticsError documents, whole-call problems as the catalog's exceptions.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

from chalicelib.service import access
from chalicelib.domain.keycodec import base_type
from chalicelib.domain.statistics import COMPATIBLE_TYPES, problem_with
from chalicelib.errors import EntityNotFoundException, ServiceError
from chalicelib.service import partitions
from chalicelib.service.lookups import require_database, require_table
from chalicelib.service.table_ref import TableRef
from chalicelib.store import catalog
from chalicelib.store import statistics as store
from chalicelib.store.records import Table

# The owner of table-level statistics; a partition's statistics are owned by the partition's uid.
TABLE_OWNER = ""


class StatisticsRead(NamedTuple):
    """What a read finds: the ColumnStatistics documents shown, and a ColumnError per column
    asked for that has none (not a column, no statistics, or statistics of an older column)."""

    found: list[dict[str, Any]]
    errors: list[dict[str, Any]]


def _declared_types(table_doc: dict[str, Any], partition_doc: Optional[dict[str, Any]] = None) -> dict[str, str]:
    """Lowercase column name -> declared type (partition columns, if it has its own, else the
    table's; plus the partition keys for table-level statistics)."""
    columns = ((partition_doc or {}).get("StorageDescriptor") or {}).get("Columns") \
        or (table_doc.get("StorageDescriptor") or {}).get("Columns") or []
    declared = {c["Name"].lower(): c.get("Type", "string") for c in columns}
    if partition_doc is None:
        declared.update({k["Name"].lower(): k.get("Type", "string") for k in table_doc.get("PartitionKeys") or []})
    return declared


def _epochs(table: Table) -> dict[str, int]:
    return table.column_epochs()


def _detail(error: ServiceError) -> dict[str, str]:
    return {"ErrorCode": error.code, "ErrorMessage": error.message}


def _get(table: Table, owner: str, declared: dict[str, str], names: Sequence[str]) -> StatisticsRead:
    stored = store.load_statistics(table.uid, owner, names)
    epochs = _epochs(table)
    found: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for name in names:
        column = name.lower()
        hit = stored.get(column)
        if column not in declared:
            errors.append({"ColumnName": name, "Error": _detail(EntityNotFoundException(
                f"Column '{name}' is not a column of table {table.name}"))})
        elif hit is None or hit[1] != epochs.get(column, 0) or \
                base_type(declared[column]) not in COMPATIBLE_TYPES[hit[0]["StatisticsData"]["Type"]]:
            errors.append({"ColumnName": name, "Error": _detail(EntityNotFoundException(
                f"No statistics for column '{name}'"))})
        else:
            found.append(hit[0])
    return StatisticsRead(found, errors)


def _update(table: Table, owner: str, declared: dict[str, str],
            entries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], Optional[float]]:
    epochs = _epochs(table)
    valid: list[tuple[dict[str, Any], int]] = []
    errors: list[dict[str, Any]] = []
    for entry in entries:
        problem = problem_with(entry, declared.get(entry["ColumnName"].lower()))
        if problem:
            errors.append({"ColumnStatistics": entry, "Error": {"ErrorCode": "InvalidInputException",
                                                                 "ErrorMessage": problem}})
        else:
            valid.append((entry, epochs.get(entry["ColumnName"].lower(), 0)))
    # One BatchWriteItem may not name an item twice: a column given twice keeps its last entry.
    valid = list({entry["ColumnName"].lower(): (entry, epoch) for entry, epoch in valid}.values())
    if valid:
        store.save_statistics(table.uid, owner, valid)
    latest = max((entry["AnalyzedTime"] for entry, _ in valid), default=None)
    return errors, latest


def _table(ref: TableRef) -> Table:
    return require_table(require_database(ref.catalog_key, ref.database), ref.table)


def _partition(ref: TableRef, values: Sequence[str]) -> tuple[Table, Any]:
    return partitions.find_partition(ref, values)


def table_statistics(ref: TableRef, column_names: Sequence[str]) -> StatisticsRead:
    """Statistics of the named columns of a table (one store round trip).

    EntityNotFoundException if the database or table does not exist; a column without current
    statistics is reported in ``errors``, in the order asked.
    """
    access.require("GetColumnStatisticsForTable", ref.catalog_key, ref.database, ref.table)
    table = _table(ref)
    return _get(table, TABLE_OWNER, _declared_types(catalog.load(table)), column_names)


def update_table_statistics(ref: TableRef, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Create or replace the statistics of a table's columns (≤ 25 entries: one batch write).

    Entries that do not fit their column are skipped and returned as ColumnStatisticsError
    documents; the valid ones are written (a column named twice keeps its last entry), and the
    table's LastAnalyzedTime is raised to the latest AnalyzedTime written, without a new version.
    """
    access.require("UpdateColumnStatisticsForTable", ref.catalog_key, ref.database, ref.table)
    table = _table(ref)
    errors, latest = _update(table, TABLE_OWNER, _declared_types(catalog.load(table)), entries)
    if latest is not None:
        catalog.set_last_analyzed(table, latest)
    return errors


def delete_table_statistics(ref: TableRef, column_name: str) -> None:
    """Delete one column's table statistics; EntityNotFoundException if it has none (statistics
    of a dropped column count as none)."""
    access.require("DeleteColumnStatisticsForTable", ref.catalog_key, ref.database, ref.table)
    table = _table(ref)
    if not store.delete_statistics(table.uid, TABLE_OWNER, column_name,
                                   _epochs(table).get(column_name.lower(), 0)):
        raise EntityNotFoundException(f"No statistics for column '{column_name}' of table {table.name}")


def partition_statistics(ref: TableRef, values: Sequence[str], column_names: Sequence[str]) -> StatisticsRead:
    """Statistics of the named columns of one partition (one store round trip); as
    table_statistics, with the partition's own columns when it has them."""
    access.require("GetColumnStatisticsForPartition", ref.catalog_key, ref.database, ref.table)
    table, item = _partition(ref, values)
    declared = _declared_types(catalog.load(table), catalog.load(item))
    return _get(table, item.uid, declared, column_names)


def update_partition_statistics(ref: TableRef, values: Sequence[str],
                                entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Create or replace the statistics of one partition's columns; as update_table_statistics,
    raising the partition's LastAnalyzedTime (never lowering it) instead of the table's."""
    access.require("UpdateColumnStatisticsForPartition", ref.catalog_key, ref.database, ref.table)
    table, item = _partition(ref, values)
    declared = _declared_types(catalog.load(table), catalog.load(item))
    errors, latest = _update(table, item.uid, declared, entries)
    if latest is not None:
        partitions.rewrite_partition_document(
            ref, values, lambda doc: {**doc, "LastAnalyzedTime": max(latest, doc.get("LastAnalyzedTime") or 0)})
    return errors


def delete_partition_statistics(ref: TableRef, values: Sequence[str], column_name: str) -> None:
    """Delete one column's statistics of one partition; EntityNotFoundException if it has none."""
    access.require("DeleteColumnStatisticsForPartition", ref.catalog_key, ref.database, ref.table)
    table, item = _partition(ref, values)
    if not store.delete_statistics(table.uid, item.uid, column_name, _epochs(table).get(column_name.lower(), 0)):
        raise EntityNotFoundException(f"No statistics for column '{column_name}' of this partition")
