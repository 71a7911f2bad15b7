"""Per-request counters (DynamoDB items read, DynamoDB requests sent), reported in response
headers for benchmarks.

Each request is served on one thread, so a thread-local counter is exact without locking.
"""

from __future__ import annotations

import threading

_local = threading.local()


def reset() -> None:
    """Start counting for a new request."""
    _local.items_read = 0
    _local.requests = 0
    _local.permission_items = 0


def count_read(items: int = 1) -> None:
    """Record DynamoDB items read on behalf of the current request."""
    _local.items_read = getattr(_local, "items_read", 0) + items


def count_permission_read(items: int) -> None:
    """Record grant and settings items the permission check read: kept apart from
    ``items_read``, which measures what the catalog read to answer (read amplification)."""
    _local.permission_items = getattr(_local, "permission_items", 0) + items


def permission_items_read() -> int:
    """Grant and settings items the current request's permission checks read."""
    return getattr(_local, "permission_items", 0)


def items_read() -> int:
    """DynamoDB items read so far by the current request."""
    return getattr(_local, "items_read", 0)


def count_request(*_args: object, **_kwargs: object) -> None:
    """Record one HTTP request to DynamoDB (a round trip; retries count again). Takes and ignores
    any arguments, so it can be a botocore event handler."""
    _local.requests = getattr(_local, "requests", 0) + 1


def requests() -> int:
    """DynamoDB requests sent so far by the current request."""
    return getattr(_local, "requests", 0)


def add(items: int, requests_sent: int) -> None:
    """Add what another thread read and sent on behalf of the current request."""
    count_read(items)
    _local.requests = getattr(_local, "requests", 0) + requests_sent
