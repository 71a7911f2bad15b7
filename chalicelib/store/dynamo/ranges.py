"""Key-range Queries shared by every model whose sort key attribute is ``key``.

These are the hot reads (GetPartitions, index entries, object versions), so they skip
PynamoDB's model objects: the raw items become light ``Record``s with the same attribute
names, which roughly halves the CPU spent per item read.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

from chalicelib import metrics
from chalicelib.store.dynamo import fast_parse
from chalicelib.store.dynamo.config import table_connection
from chalicelib.store.demand import Demand
from chalicelib.store.dynamo.models import DocumentAttribute


class Record:
    """A read-only item of one model: its declared attributes by name, None where the item
    lacks one (an absent nullable attribute); any other name is an AttributeError, so a typo
    fails instead of reading as "missing". One subclass per model (see :func:`record_type`).

    It keeps the item as DynamoDB returned it and converts an attribute when it is read: a scan
    reads a few attributes of each item it examines (key, values, segment) and the rest only of
    the items it keeps, so converting every attribute up front cost more than the filter."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        # Reached only for a name that is no field (fields are properties of the subclass).
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({ {name: _plain(value) for name, value in self._raw.items()}!r})"


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
        fields = {name: _field(name, attribute) for name, attribute in attributes.items()}
        kind = type(f"{model.__name__}Record", (Record,), {"__slots__": (), **fields})
        _record_types[model] = kind
    return kind


def _field(name: str, attribute: Any) -> property:
    """A field of a record: its value converted when read, None when the item lacks it. A
    property, not a ``__getattr__`` fallback: that ran only after the ordinary lookup had failed,
    which cost more than the conversion (a listing reads four fields of every item)."""
    convert = _converter(attribute)

    def read(record: Record) -> Any:
        value = record._raw.get(name)
        return None if value is None else convert(value)
    return property(read)


def _converter(attribute: Any) -> Callable[[dict[str, Any]], Any]:
    """The conversion of an attribute's declared type: it takes its own wire key first and
    leaves anything else to ``_plain`` (a list of strings read by ``_plain`` cost a third more,
    and a listing reads one per item)."""
    if isinstance(attribute, DocumentAttribute):
        return _document
    element = getattr(attribute, "element_type", None)
    if attribute.attr_type == "L" and element is not None and element.attr_type == "S":
        return _strings
    return {"B": _binary, "N": _number}.get(attribute.attr_type, _string)


def _string(value: dict[str, Any]) -> Any:
    data = value.get("S")
    return data if data is not None else _plain(value)


def _strings(value: dict[str, Any]) -> Any:
    data = value.get("L")
    if data is not None:
        try:
            return [member["S"] for member in data]
        except KeyError:
            pass  # a member of another type: converted as any value
    return _plain(value)


def _number(value: dict[str, Any]) -> Any:
    data = value.get("N")
    return _number_of(data) if data is not None else _plain(value)


def _binary(value: dict[str, Any]) -> Any:
    data = value.get("B")
    return _bytes_of(data) if data is not None else _plain(value)


def _document(value: dict[str, Any]) -> Any:
    data = value.get("S")  # a plain-JSON document, stored as text (models.DocumentAttribute)
    return data.encode("utf-8") if data is not None else _binary(value)


def _number_of(data: str) -> int | float:
    return int(data) if data.lstrip("-").isdigit() else float(data)


def _bytes_of(data: str | bytes) -> bytes:
    # Base64 text when the item was read within fast_parse.items_left_encoded (decoded here,
    # on use), bytes when it was decoded on arrival.
    return data if isinstance(data, bytes) else fast_parse.b64decode(data)


def _plain(value: dict[str, Any]) -> Any:
    data = value.get("S")
    if data is not None:  # most values are strings: answered without unpacking the pair
        return data
    kind, data = next(iter(value.items()))
    if kind == "B":
        return _bytes_of(data)
    if kind == "N":
        return _number_of(data)
    if kind == "L":
        return [v["S"] if "S" in v else _plain(v) for v in data]
    if kind == "M":
        return {k: _plain(v) for k, v in data.items()}
    if kind == "NULL":
        return None
    if kind == "BOOL":
        return data
    return data


def query_key_range(model: Any, hash_key: str, low: Optional[str], high: Optional[str],
                    after: Optional[str] = None, segments: Optional[tuple[int, int]] = None,
                    demand: Optional[Demand] = None) -> Iterator[Record]:
    """Items under ``hash_key`` with ``low <= key <= high`` (None: unbounded), in key order,
    resuming after ``after``; with ``segments``, only items whose ``segment`` attribute is in
    that inclusive range (filtered by DynamoDB, so the others never reach us, though DynamoDB
    still reads them). ``demand``: what the reader means to return, which sizes the DynamoDB
    pages (see :class:`Demand`); None: 1 MB pages. Every item DynamoDB read is counted for the
    request."""
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
    make = record_type(model)
    table = table_connection(model)
    start = None
    # Items DynamoDB read (Limit counts them before the segment filter), so the share a reader
    # keeps is of what a page's Limit buys.
    scanned = 0
    kept_before = demand.kept if demand is not None else 0
    while True:
        limit = demand.next_page(scanned, kept_before) if demand is not None else None
        if limit is not None and skip is not None and start is None:
            limit += 1  # the cursor item comes back first and is dropped
        with fast_parse.items_left_encoded():
            page = table.query(hash_key, range_key_condition=condition, filter_condition=in_segments,
                               consistent_read=True, exclusive_start_key=start, limit=limit)
        metrics.count_read(page.get("ScannedCount", 0))
        scanned += page.get("ScannedCount", 0)
        for raw in page.get("Items", []):
            record = make(raw)
            if record.key != skip:
                yield record
        start = page.get("LastEvaluatedKey")
        if not start:
            return
