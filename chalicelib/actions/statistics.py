"""Column statistics: Get/Update/DeleteColumnStatisticsFor{Table,Partition}.

Statistics of a table or a partition are read with one Query whatever the number of columns.
Only statistics of columns that still exist with a compatible type are shown: a column dropped
by UpdateTable takes its statistics with it (its epoch moves on), even for partitions.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from chalicelib.actions import action
from chalicelib.actions.common import require_database, require_table, table_ref
from chalicelib.context import RequestContext
from chalicelib.domain.keycodec import base_type
from chalicelib.domain.statistics import COMPATIBLE_TYPES, problem_with
from chalicelib.errors import EntityNotFoundException, ServiceError
from chalicelib.service import partitions
from chalicelib.store import catalog
from chalicelib.store import statistics as store
from chalicelib.store.documents import decode_document
from chalicelib.store.models import TableItem

TABLE_OWNER = ""


def _declared_types(table_doc: dict[str, Any], partition_doc: Optional[dict[str, Any]] = None) -> dict[str, str]:
    """Lowercase column name -> declared type (partition columns, if it has its own, else the
    table's; plus the partition keys for table-level statistics)."""
    columns = ((partition_doc or {}).get("StorageDescriptor") or {}).get("Columns") \
        or (table_doc.get("StorageDescriptor") or {}).get("Columns") or []
    declared = {c["Name"].lower(): c.get("Type", "string") for c in columns}
    if partition_doc is None:
        declared.update({k["Name"].lower(): k.get("Type", "string") for k in table_doc.get("PartitionKeys") or []})
    return declared


def _epochs(table: TableItem) -> dict[str, int]:
    return json.loads(table.column_epochs or "{}")


def _detail(error: ServiceError) -> dict[str, str]:
    return {"ErrorCode": error.code, "ErrorMessage": error.message}


def _get(table: TableItem, owner: str, declared: dict[str, str], names: list[str]) -> dict[str, Any]:
    stored = store.load_statistics(table.uid, owner, names)
    epochs = _epochs(table)
    found, errors = [], []
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
    return {"ColumnStatisticsList": found, "Errors": errors}


def _update(table: TableItem, owner: str, declared: dict[str, str], entries: list[dict[str, Any]]) -> tuple[list, Optional[float]]:
    epochs = _epochs(table)
    valid, errors = [], []
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


def _table(ctx: RequestContext, params: dict[str, Any]) -> TableItem:
    return require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])


@action("glue", "GetColumnStatisticsForTable")
def get_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Statistics of up to 100 columns of a table (one store round trip)."""
    table = _table(ctx, params)
    return _get(table, TABLE_OWNER, _declared_types(catalog.load(table)), params["ColumnNames"])


@action("glue", "UpdateColumnStatisticsForTable")
def update_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create or replace statistics of up to 25 columns; bad entries are reported one by one."""
    table = _table(ctx, params)
    errors, latest = _update(table, TABLE_OWNER, _declared_types(catalog.load(table)),
                             params["ColumnStatisticsList"])
    if latest is not None:
        catalog.set_last_analyzed(table, latest)
    return {"Errors": errors}


@action("glue", "DeleteColumnStatisticsForTable")
def delete_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one column's table statistics."""
    table = _table(ctx, params)
    if not store.delete_statistics(table.uid, TABLE_OWNER, params["ColumnName"],
                                   _epochs(table).get(params["ColumnName"].lower(), 0)):
        raise EntityNotFoundException(f"No statistics for column '{params['ColumnName']}' of table {table.name}")
    return {}


def _partition(ctx: RequestContext, params: dict[str, Any]):
    table, item = partitions.find_partition(table_ref(ctx, params), params["PartitionValues"])
    return table, item, item.uid


@action("glue", "GetColumnStatisticsForPartition")
def get_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Statistics of up to 100 columns of one partition (one store round trip)."""
    table, item, owner = _partition(ctx, params)
    declared = _declared_types(catalog.load(table), decode_document(item.doc))
    return _get(table, owner, declared, params["ColumnNames"])


@action("glue", "UpdateColumnStatisticsForPartition")
def update_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create or replace statistics of up to 25 columns of one partition."""
    table, item, owner = _partition(ctx, params)
    declared = _declared_types(catalog.load(table), decode_document(item.doc))
    errors, latest = _update(table, owner, declared, params["ColumnStatisticsList"])
    if latest is not None:
        partitions.rewrite_partition_document(table_ref(ctx, params), params["PartitionValues"],
                                              lambda doc: {**doc, "LastAnalyzedTime": max(latest, doc.get("LastAnalyzedTime") or 0)})
    return {"Errors": errors}


@action("glue", "DeleteColumnStatisticsForPartition")
def delete_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one column's statistics of one partition."""
    table, item, owner = _partition(ctx, params)
    if not store.delete_statistics(table.uid, owner, params["ColumnName"],
                                   _epochs(table).get(params["ColumnName"].lower(), 0)):
        raise EntityNotFoundException(f"No statistics for column '{params['ColumnName']}' of this partition")
    return {}
