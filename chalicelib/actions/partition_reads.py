"""Partition reads: GetPartition, BatchGetPartition and GetPartitions. The rules (planner-driven
listing, segments, governed tables' manifest) live in chalicelib/service/partitions.py and
service/governed_partitions.py; these resolve who reads (TransactionId, QueryAsOfTime), turn
NextToken into a position and back, and splice the partition texts into the response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from chalicelib.actions import action
from chalicelib.actions.common import fold, make_token, read_token, require_database, require_table, table_ref
from chalicelib.actions.partition_indexes import partition_keys_of
from chalicelib.actions.table_objects import snapshot_of
from chalicelib.context import RequestContext
from chalicelib.errors import table_not_found
from chalicelib.json_text import JsonFragments
from chalicelib.service import governed_partitions as governed
from chalicelib.service import partitions
from chalicelib.service.snapshots import database_snapshot, require_table_as_of
from chalicelib.store import catalog
from chalicelib.store.models import DatabaseItem, TableItem, TransactionItem


@action("glue", "GetPartition")
def get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One partition by its values."""
    return {"Partition": partitions.get_partition(table_ref(ctx, params), params["PartitionValues"])}


@action("glue", "BatchGetPartition")
def batch_get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Up to 1,000 partitions by values; what does not fit in one response is UnprocessedKeys."""
    found, unprocessed = partitions.batch_get_partitions(table_ref(ctx, params),
                                                         [p["Values"] for p in params["PartitionsToGet"]])
    return {"Partitions": found, "UnprocessedKeys": [{"Values": values} for values in unprocessed]}


@dataclass
class _TableAsRead:
    """With a TransactionId or QueryAsOfTime, the table as that reader sees it."""

    database: DatabaseItem
    item: TableItem
    doc: dict[str, Any]
    stored: bool  # False: created by the reading transaction, not committed yet
    transaction: Optional[TransactionItem]  # the reading transaction, loaded and checked


def _table_as_read(ctx: RequestContext, params: dict[str, Any]) -> _TableAsRead:
    """EntityNotFoundException if the reader does not see the table."""
    database = require_database(ctx, params, params["DatabaseName"])
    name = fold(params["TableName"])
    if params.get("QueryAsOfTime") is not None:
        item = require_table(database, name)
        return _TableAsRead(database, item, require_table_as_of(item, params["QueryAsOfTime"])[0], True, None)
    view = database_snapshot(ctx, params.get("TransactionId"), database, name)
    seen = view.get(name)
    if seen is None:
        raise table_not_found(name)
    stored = catalog.get_table(database.uid, name)
    return _TableAsRead(database, seen[0], seen[1], stored is not None and stored.uid == seen[0].uid,
                        view.transaction)


def _listing(params: dict[str, Any], keys: list[tuple[str, str]]) -> governed.Listing:
    segment = params.get("Segment")
    return partitions.listing(keys, params.get("Expression"),
                              (segment["TotalSegments"], segment["SegmentNumber"]) if segment else None,
                              bool(params.get("ExcludeColumnSchema")), params.get("MaxResults"))


def _manifest_listing(ctx: RequestContext, params: dict[str, Any], table: TableItem, table_doc: dict[str, Any],
                      names: dict[str, str], listing: governed.Listing,
                      reader: Optional[TransactionItem] = None) -> governed.ManifestListing:
    """A governed table's listing at the reader's snapshot (``reader``: the request's
    transaction, when loaded and checked already)."""
    snapshot, reader = (int(reader.snapshot_seq), reader) if reader is not None else snapshot_of(ctx, params)
    return governed.ManifestListing(ctx.catalog_key(params), table, table_doc, names, listing, snapshot, reader,
                                    params.get("QueryAsOfTime"), params.get("TransactionId"))


@action("glue", "GetPartitions")
def get_partitions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Partitions matching an expression, in key order of the plan's source, paged; with
    Segment, only the partitions of that segment (segments are disjoint and cover all).
    Governed tables: the partitions their manifest holds as the reader sees it."""
    lister: partitions.StoredListing | governed.ManifestListing
    if params.get("TransactionId") or params.get("QueryAsOfTime") is not None:
        read = _table_as_read(ctx, params)
        if governed.is_governed(read.doc):
            names = partitions.table_names(ctx.catalog_id(params), read.database, read.item)
            lister = _manifest_listing(ctx, params, read.item, read.doc, names,
                                       _listing(params, partition_keys_of(read.doc)), read.transaction)
            return _page(ctx, params, lister)
        if not read.stored:
            return {"Partitions": []}  # created by its own transaction: no partitions yet
    ref = table_ref(ctx, params)
    view = partitions.read_partition_table(ref)
    listing = _listing(params, view.keys)
    names = partitions.table_names(ref.catalog_id, view.database, view.item)
    if view.governed:
        lister = _manifest_listing(ctx, params, view.item, view.doc, names, listing)
    else:
        lister = partitions.StoredListing(view, names, listing)
    return _page(ctx, params, lister)


def _page(ctx: RequestContext, params: dict[str, Any],
          lister: partitions.StoredListing | governed.ManifestListing) -> dict[str, Any]:
    """One page of a listing from the request's NextToken, spliced into the response."""
    page, last = lister.page(read_token(ctx, params, *lister.scope))
    token = make_token(ctx, last, *lister.scope)
    return {"Partitions": JsonFragments(page), **({"NextToken": token} if token else {})}
