"""Key-range Queries shared by every model whose sort key attribute is ``key``.

These are the hot reads (GetPartitions, index entries, object versions), so they skip
PynamoDB's model objects: the raw items become light ``Record``s with the same attribute
names, which roughly halves the CPU spent per item read.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from chalicelib import metrics
from chalicelib.store.config import table_connection


class Record:
    """A read-only item of one model: its declared attributes by name, None where the item
    lacks one (an absent nullable attribute); any other name is an AttributeError, so a typo
    fails instead of reading as "missing". One subclass per model (see :func:`record_type`)."""

    __slots__ = ("_values",)
    _fields: frozenset[str] = frozenset()

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            if name in self._fields:
                return None
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}") from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"


_record_types: dict[type, type[Record]] = {}


def record_type(model: Any) -> type[Record]:
    """The Record class of ``model``: its fields are the model's declared attributes (whose
    DynamoDB names are the Python names: checked here, as records are built from raw items)."""
    kind = _record_types.get(model)
    if kind is None:
        attributes = model.get_attributes()
        renamed = [name for name, attribute in attributes.items() if attribute.attr_name != name]
        if renamed:
            raise TypeError(f"{model.__name__}: attributes stored under another name: {renamed}")
        kind = type(f"{model.__name__}Record", (Record,), {"__slots__": (), "_fields": frozenset(attributes)})
        _record_types[model] = kind
    return kind


def _plain(value: dict[str, Any]) -> Any:
    data = value.get("S")
    if data is not None:  # most values are strings: answered without unpacking the pair
        return data
    kind, data = next(iter(value.items()))
    if kind == "B":
        return data
    if kind == "N":
        return int(data) if data.lstrip("-").isdigit() else float(data)
    if kind == "L":
        return [v["S"] if "S" in v else _plain(v) for v in data]
    if kind == "M":
        return {k: _plain(v) for k, v in data.items()}
    if kind == "NULL":
        return None
    if kind == "BOOL":
        return data
    return data


# Once a caller has had the items it announced (page_size) but keeps reading (some items did
# not match its filter), further DynamoDB pages are this small: a bounded over-read.
_MIN_PAGE_AFTER_BUDGET = 100


def _next_page_limit(page_size: Optional[int], yielded: int) -> Optional[int]:
    if page_size is None:
        return None
    return max(page_size - yielded, _MIN_PAGE_AFTER_BUDGET)


def query_key_range(model: Any, hash_key: str, low: Optional[str], high: Optional[str],
                    after: Optional[str] = None, segments: Optional[tuple[int, int]] = None,
                    page_size: Optional[int] = None) -> Iterator[Record]:
    """Items under ``hash_key`` with ``low <= key <= high`` (None: unbounded), in key order,
    resuming after ``after``; with ``segments``, only items whose ``segment`` attribute is in
    that inclusive range (filtered by DynamoDB, so the others never reach us, though DynamoDB
    still reads them). ``page_size``: at most that many items per DynamoDB page, for callers
    that will stop early (DynamoDB reads, and charges, a whole page even if we stop half-way).
    Every item DynamoDB read is counted for the request."""
    skip = None
    if after is not None and (low is None or after >= low):
        low = skip = after  # resume: DynamoDB has no exclusive BETWEEN, so skip the cursor item
    if low is not None and high is not None and low > high:
        return  # resuming past the range: nothing follows (and DynamoDB refuses such a BETWEEN)
    key = model.key
    if low is not None and high is not None:
        condition = key.between(low, high)
    elif low is not None:
        condition = key >= low
    elif high is not None:
        condition = key <= high
    else:
        condition = None
    in_segments = model.segment.between(*segments) if segments else None
    if page_size is not None and skip is not None:
        page_size += 1  # the cursor item comes back first and is dropped
    make = record_type(model)
    table = table_connection(model)
    start = None
    yielded = 0
    while True:
        page = table.query(hash_key, range_key_condition=condition, filter_condition=in_segments,
                           consistent_read=True, exclusive_start_key=start,
                           limit=_next_page_limit(page_size, yielded))
        metrics.count_read(page.get("ScannedCount", 0))
        for raw in page.get("Items", []):
            record = make({name: _plain(value) for name, value in raw.items()})
            if record.key != skip:
                yielded += 1
                yield record
        start = page.get("LastEvaluatedKey")
        if not start:
            return
