"""Lake Formation transactions: Start/Commit/Cancel/Describe/List/ExtendTransaction.

Each action takes the validated request, calls the transaction core
(``chalicelib.service.transactions``, which also holds the commit protocol) and shapes the answer.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.protocol.aws_json.common import make_token, read_token
from chalicelib.context import RequestContext
from chalicelib.errors import InvalidInputException
from chalicelib.service import paging
from chalicelib.service import transactions as service


def _describe(item: service.Transaction) -> dict[str, Any]:
    description = {"TransactionId": item.transaction_id, "TransactionStatus": item.status,
                   "TransactionStartTime": item.start_time}
    if item.end_time is not None:
        description["TransactionEndTime"] = item.end_time
    return description


def start_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Start a READ_AND_WRITE (default) or READ_ONLY transaction."""
    return {"TransactionId": service.start(ctx, params.get("TransactionType") or "READ_AND_WRITE").transaction_id}


def commit_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Commit a transaction: all of its writes become visible at once, or none."""
    return {"TransactionStatus": service.commit_transaction(ctx, params["TransactionId"])}


def cancel_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Abort an ACTIVE transaction; its writes are discarded."""
    service.cancel_transaction(ctx, params["TransactionId"])
    return {}


def describe_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Status and start/end times of a transaction."""
    return {"TransactionDescription": _describe(service.load_transaction(ctx, params["TransactionId"]))}


def extend_transaction(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Keep an ACTIVE transaction from being aborted as idle."""
    if not params.get("TransactionId"):
        raise InvalidInputException("TransactionId is required")
    service.extend_transaction(ctx, params["TransactionId"])
    return {}


def list_transactions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The caller's transactions in start order, filtered by status, paged."""
    catalog = ctx.catalog_key(params)
    status_filter = params.get("StatusFilter") or "ALL"
    scope = (catalog, status_filter)
    after: Optional[str] = read_token(ctx, params, *scope)
    deadline = paging.work_deadline()
    # Settling transactions and skipping those the filter leaves out both count against the
    # work budget: a page may come back short (or empty) with a NextToken, as Glue's do.
    found, last = paging.take_page(
        service.list_transactions(catalog, status_filter, after, deadline), params.get("MaxResults") or 100,
        lambda listed: _describe(listed[0]) if listed[1] else None,
        lambda listed: listed[0].transaction_id, deadline=deadline)
    token = make_token(ctx, last, *scope)
    return {"Transactions": found, **({"NextToken": token} if token else {})}
