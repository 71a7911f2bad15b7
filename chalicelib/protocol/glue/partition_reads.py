"""Partition reads: GetPartition, BatchGetPartition and GetPartitions. The rules (who reads at
which snapshot, planner-driven listing, segments, governed tables' manifest) live in
chalicelib/service/partitions.py and service/governed_partitions.py; these turn NextToken into a
position and back, and splice the partition texts into the response."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, read_token, table_ref
from chalicelib.context import RequestContext
from chalicelib.json_text import JsonFragments
from chalicelib.service import partitions


def get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One partition by its values."""
    return {"Partition": partitions.get_partition(table_ref(ctx, params), params["PartitionValues"])}


def batch_get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Up to 1,000 partitions by values; what does not fit in one response is UnprocessedKeys."""
    found, unprocessed = partitions.batch_get_partitions(table_ref(ctx, params),
                                                         [p["Values"] for p in params["PartitionsToGet"]])
    return {"Partitions": found, "UnprocessedKeys": [{"Values": values} for values in unprocessed]}


def get_partitions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Partitions matching an expression, in key order of the plan's source, paged; with
    Segment, only the partitions of that segment (segments are disjoint and cover all).
    Governed tables: the partitions their manifest holds as the reader sees it."""
    segment = params.get("Segment")

    def read_position(scope: tuple) -> Any:
        return read_token(ctx, params, *scope)

    lister = partitions.list_partitions(ctx, table_ref(ctx, params), params.get("TransactionId"),
                                        params.get("QueryAsOfTime"), params.get("Expression"),
                                        (segment["TotalSegments"], segment["SegmentNumber"]) if segment else None,
                                        bool(params.get("ExcludeColumnSchema")), params.get("MaxResults"),
                                        read_position)
    if lister is None:
        return {"Partitions": []}  # created by its own transaction: no partitions yet
    page, last = lister.page(read_position(lister.scope))
    token = make_token(ctx, last, *lister.scope)
    return {"Partitions": JsonFragments(page), **({"NextToken": token} if token else {})}
