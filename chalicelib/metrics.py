"""Per-request counters (DynamoDB items read), reported in a response header for benchmarks.

Each request is served on one thread, so a thread-local counter is exact without locking.
"""

from __future__ import annotations

import threading

_local = threading.local()


def reset() -> None:
    """Start counting for a new request."""
    _local.items_read = 0


def count_read(items: int = 1) -> None:
    """Record DynamoDB items read on behalf of the current request."""
    _local.items_read = getattr(_local, "items_read", 0) + items


def items_read() -> int:
    """DynamoDB items read so far by the current request."""
    return getattr(_local, "items_read", 0)
