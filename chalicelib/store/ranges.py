"""Key-range Queries shared by every model whose sort key attribute is ``key``."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from chalicelib import metrics


def query_key_range(model: Any, hash_key: str, low: Optional[str], high: Optional[str],
                    after: Optional[str] = None) -> Iterator[Any]:
    """Items under ``hash_key`` with ``low <= key <= high`` (None: unbounded), in key order,
    resuming after ``after``; every item read is counted for the request."""
    skip = None
    if after is not None and (low is None or after >= low):
        low = skip = after  # resume: DynamoDB has no exclusive BETWEEN, so skip the cursor item
    key = model.key
    if low is not None and high is not None:
        condition = key.between(low, high)
    elif low is not None:
        condition = key >= low
    elif high is not None:
        condition = key <= high
    else:
        condition = None
    for item in model.query(hash_key, range_key_condition=condition, consistent_read=True, page_size=500):
        metrics.count_read()
        if item.key != skip:
            yield item
