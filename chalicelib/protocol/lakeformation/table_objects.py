"""Governed-table objects: UpdateTableObjects, GetTableObjects, DeleteObjectsOnCancel. The rules
(which object versions a reader sees, what a write records) live in
chalicelib/service/table_objects.py; these turn NextToken into a position and back."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, read_token, table_ref
from chalicelib.context import RequestContext
from chalicelib.service import table_objects as service


def update_table_objects(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add or delete up to 100 objects of a governed table within a transaction (without
    TransactionId: in a transaction of its own, committed at once)."""
    service.update_table_objects(ctx, table_ref(ctx, params), params.get("TransactionId"), params["WriteOperations"])
    return {}


def delete_objects_on_cancel(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Accepted and validated; this service never deletes S3 objects itself."""
    service.check_objects_on_cancel(ctx, table_ref(ctx, params), params["TransactionId"])
    return {}


def get_table_objects(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Objects of a governed table at a transaction's snapshot, a time, or the latest commit,
    optionally filtered by PartitionPredicate, grouped by partition, paged."""
    listing = service.list_table_objects(ctx, table_ref(ctx, params), params.get("TransactionId"),
                                         params.get("QueryAsOfTime"), params.get("PartitionPredicate"),
                                         params.get("MaxResults"))
    groups, last = listing.page(read_token(ctx, params, *listing.scope))
    token = make_token(ctx, last, *listing.scope)
    return {"Objects": groups, **({"NextToken": token} if token else {})}
