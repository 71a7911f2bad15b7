"""Partition reads: GetPartition, BatchGetPartition, and GetPartitions with the expression
planner (plus ``find_partition`` for column statistics)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

from chalicelib import json_text, timestamps
from chalicelib.actions import action
from chalicelib.actions import governed_partitions as governed
from chalicelib.actions.common import (MAX_PAGE_BYTES, fold, make_token, read_token, require_database,
                                       require_table, take_page)
from chalicelib.service.snapshots import database_snapshot, require_table_as_of
from chalicelib.actions.partition_indexes import index_specs, partition_keys_of
from chalicelib.actions.partition_table import (PartitionTableView, check_values, partition_key,
                                                read_partition_table)
from chalicelib.context import RequestContext
from chalicelib.domain import expressions, planner
from chalicelib.domain.partition_keys import segment_buckets
from chalicelib.errors import InvalidInputException, partition_not_found, table_not_found
from chalicelib.json_text import JsonFragments, with_members
from chalicelib.store import catalog
from chalicelib.store import partitions as store
from chalicelib.store.documents import decode_document_sized, document_text
from chalicelib.store.models import DatabaseItem, TableItem, TransactionItem


def _render(ctx: RequestContext, params: dict[str, Any], view: PartitionTableView, doc_bytes: bytes,
            exclude_columns: bool = False) -> dict[str, Any]:
    return _render_sized(ctx, params, view, doc_bytes, exclude_columns)[0]


def _render_sized(ctx: RequestContext, params: dict[str, Any], view: PartitionTableView, doc_bytes: bytes,
                  exclude_columns: bool = False) -> tuple[dict[str, Any], int]:
    """A stored partition as the API returns it, and (an upper bound of) its JSON size."""
    doc, size = decode_document_sized(doc_bytes)
    doc = timestamps.drop_unreadable(doc)  # stored before they were refused: would break the page
    if exclude_columns and "StorageDescriptor" in doc:
        doc["StorageDescriptor"] = {k: v for k, v in doc["StorageDescriptor"].items() if k != "Columns"}
    rendered = {**doc, **_names(ctx, params, view)}
    return rendered, size + len(view.database.name) + len(view.item.name) + 80


def _names(ctx: RequestContext, params: dict[str, Any], view: PartitionTableView) -> dict[str, str]:
    """The members a response adds to a stored partition document."""
    return _table_names(ctx, params, view.database, view.item)


def _table_names(ctx: RequestContext, params: dict[str, Any], database: DatabaseItem, table: TableItem) -> dict[str, str]:
    return {"DatabaseName": database.name, "TableName": table.name, "CatalogId": ctx.catalog_id(params)}


def _render_text(names: dict[str, str], doc_bytes: bytes) -> tuple[str, int]:
    """A stored partition as response JSON text, spliced from the stored text (decoded only in
    the rare case it may hold a timestamp no client can parse, which is then left out)."""
    text = with_members(timestamps.readable_text(document_text(doc_bytes)), names)
    return text, len(text)


@action("glue", "GetPartition")
def get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One partition by its values."""
    view = read_partition_table(ctx, params)
    values = params["PartitionValues"]
    check_values(view, values, "PartitionValues")
    key = partition_key(view, values)
    item = store.get_partition(view.item.uid, key)
    if item is None:
        made = _manifest_partitions(ctx, params, view, [key])
        if key not in made:
            raise partition_not_found()
        return {"Partition": made[key]}
    return {"Partition": _render(ctx, params, view, item.doc)}


def _manifest_partitions(ctx: RequestContext, params: dict[str, Any], view: PartitionTableView,
                         keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Partitions of a governed table that hold objects without being registered, by key."""
    if not view.governed or not keys:
        return {}
    made = governed.manifest_partitions(ctx, params, view.item, view.doc, view.keys, keys)
    names = _names(ctx, params, view)
    return {key: {**doc, **names} for key, doc in made.items()}


@action("glue", "BatchGetPartition")
def batch_get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Up to 1,000 partitions by values; what does not fit in one response is UnprocessedKeys."""
    view = read_partition_table(ctx, params)
    wanted = [p["Values"] for p in params["PartitionsToGet"]]
    for values in wanted:
        check_values(view, values, "PartitionsToGet.Values")
    keys = [partition_key(view, values) for values in wanted]
    found = store.get_partitions(view.item.uid, keys)
    made = _manifest_partitions(ctx, params, view, [key for key in keys if key not in found])
    partitions, unprocessed, size = [], [], 0
    for values, key in zip(wanted, keys):
        item = found.get(key)
        if item is None and key not in made:
            continue
        if size > MAX_PAGE_BYTES:
            unprocessed.append({"Values": values})
            continue
        rendered = _render(ctx, params, view, item.doc) if item else made[key]
        size += len(json.dumps(rendered, default=str))
        partitions.append(rendered)
    return {"Partitions": partitions, "UnprocessedKeys": unprocessed}


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
    expression = (params.get("Expression") or "").strip()
    bound = expressions.bind(expressions.parse_expression(expression), keys)
    segment = params.get("Segment")
    total, number = (segment["TotalSegments"], segment["SegmentNumber"]) if segment else (1, 0)
    if number >= total:
        raise InvalidInputException(
            f"Segment.SegmentNumber ({number}) must be less than Segment.TotalSegments ({total})")
    # A segment is a contiguous run of buckets, filtered by DynamoDB (see segment_buckets).
    return governed.Listing(expression, bound, keys, segment_buckets(total, number),
                            (total, number) if segment else None, bool(params.get("ExcludeColumnSchema")),
                            params.get("MaxResults") or 1000)


@action("glue", "GetPartitions")
def get_partitions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Partitions matching an expression, in key order of the plan's source, paged; with
    Segment, only the partitions of that segment (segments are disjoint and cover all).
    Governed tables: the partitions their manifest holds as the reader sees it."""
    if params.get("TransactionId") or params.get("QueryAsOfTime") is not None:
        read = _table_as_read(ctx, params)
        if governed.is_governed(read.doc):
            return governed.get_partitions(ctx, params, read.item, read.doc,
                                           _table_names(ctx, params, read.database, read.item),
                                           _listing(params, partition_keys_of(read.doc)), read.transaction)
        if not read.stored:
            return {"Partitions": []}  # created by its own transaction: no partitions yet
    view = read_partition_table(ctx, params)
    listing = _listing(params, view.keys)
    if view.governed:
        return governed.get_partitions(ctx, params, view.item, view.doc, _names(ctx, params, view), listing)
    bound, buckets, expression = listing.bound, listing.buckets, listing.expression
    active = index_specs(view.item, view.keys, ("ACTIVE",))
    plan = planner.choose_plan(bound, view.keys, view.key_types, active)
    total, number = listing.segment or (1, 0)
    segments_filter = buckets if listing.segment else None
    exclude, limit = listing.exclude_columns, listing.limit
    scope = (view.item.uid, expression, total, number, exclude, plan.source)
    position = read_token(ctx, params, *scope)
    start_range, after = position if position else (0, None)

    def candidates() -> Iterator[tuple[int, Any]]:
        index_uid = plan.index.uid if plan.index else None
        for number_of_range in range(start_range, len(plan.bounds)):
            low, high = plan.bounds[number_of_range]
            resume = after if number_of_range == start_range else None
            # A page needs at most limit + 1 items (the one after says whether a token is due).
            for item in store.scan_range(view.item.uid, low, high, resume, index_uid, segments_filter, limit + 1):
                yield number_of_range, item

    names = _names(ctx, params, view)

    def render(pair: tuple[int, Any]) -> tuple[Any, int] | None:
        item = pair[1]
        if not buckets[0] <= item.segment <= buckets[1] or not expressions.evaluate(bound, item.values):
            return None
        if exclude:  # rare: the document must be edited, so decode it
            rendered, size = _render_sized(ctx, params, view, item.doc, exclude)
            return json_text.dumps(rendered), size
        return _render_text(names, item.doc)

    page, last = take_page(candidates(), limit, render, lambda pair: [pair[0], pair[1].key], sized=True)
    token = make_token(ctx, last, *scope)
    return {"Partitions": JsonFragments(page), **({"NextToken": token} if token else {})}


# ------------------------------------------------------------- used by column statistics
def find_partition(ctx: RequestContext, params: dict[str, Any], values: Sequence[str]) -> tuple[TableItem, Any]:
    """The table item and the partition item with these values, or EntityNotFoundException."""
    view = read_partition_table(ctx, params)
    check_values(view, values, "PartitionValues")
    item = store.get_partition(view.item.uid, partition_key(view, values))
    if item is None:
        raise partition_not_found()
    return view.item, item
