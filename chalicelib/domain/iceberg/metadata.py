"""Iceberg table metadata files (format version 2), as the Iceberg spec and pyiceberg write them:
the first one for a new table, and the next one after a Glue ``IcebergTableUpdate``.

A metadata file is named ``<location>/metadata/<NNNNN>-<uuid>.metadata.json``, NNNNN counting
up from 00000 (pyiceberg's and Iceberg Java's convention, which pyiceberg reads back to number
its own next file). A table's files are never rewritten: each change writes a new one and moves
Glue's ``metadata_location`` parameter to it.
"""

from __future__ import annotations

import copy
import operator
import re
from typing import Any, Optional

from chalicelib.domain.iceberg.types import (PARTITION_FIELD_ID_START, check_evolution, check_sources,
                                             highest_field_id, read_partition_spec, read_schema, read_sort_order,
                                             read_type)
from chalicelib import json_text
from chalicelib.errors import InvalidInputException

FORMAT_VERSION = 2
TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"

_METADATA_NAME = re.compile(r"(\d+)-.*\.metadata\.json")
# Glue's IcebergUpdateAction values this catalog applies; the encryption-key ones are format
# version 3 (encrypted tables), which it does not write.
_SCHEMA_ACTIONS = ("add-schema", "set-current-schema")
_SPEC_ACTIONS = ("add-spec", "set-default-spec")
_ORDER_ACTIONS = ("add-sort-order", "set-default-sort-order")


def metadata_file(location: str, number: int, file_uuid: str) -> str:
    """Where metadata file number ``number`` of a table at ``location`` goes."""
    return f"{location.rstrip('/')}/metadata/{number:05d}-{file_uuid}.metadata.json"


def metadata_number(metadata_location: str) -> int:
    """The number in a metadata file's name (-1 if it follows no numbering), as pyiceberg reads it."""
    match = _METADATA_NAME.fullmatch(metadata_location.rsplit("/", 1)[-1])
    return int(match.group(1)) if match else -1


def new_table_metadata(location: str, schema: dict[str, Any], partition_spec: Optional[dict[str, Any]],
                       write_order: Optional[dict[str, Any]], properties: dict[str, str], table_uuid: str,
                       now_ms: int, path: str) -> dict[str, Any]:
    """The first metadata file of a table from Glue's CreateIcebergTableInput members (``schema``
    already in the spec's form, see ``types.read_schema``); ``path`` names them in errors."""
    spec = read_partition_spec(partition_spec, schema, f"{path}.PartitionSpec",
                               (partition_spec or {}).get("SpecId", 0), PARTITION_FIELD_ID_START - 1)
    order = read_sort_order(write_order, schema, f"{path}.WriteOrder")
    problem = check_sources(spec, order, schema, [schema])
    if problem is not None:
        raise InvalidInputException(f"{path}: {problem}")
    return {
        "format-version": FORMAT_VERSION,
        "table-uuid": table_uuid,
        "location": location.rstrip("/"),
        "last-sequence-number": 0,
        "last-updated-ms": now_ms,
        "last-column-id": highest_field_id(schema),
        "current-schema-id": schema["schema-id"],
        "schemas": [schema],
        "default-spec-id": spec["spec-id"],
        "partition-specs": [spec],
        "last-partition-id": _last_partition_id(spec, PARTITION_FIELD_ID_START - 1),
        "default-sort-order-id": order["order-id"],
        "sort-orders": [order],
        "properties": dict(properties),
        "current-snapshot-id": -1,
        "refs": {},
        "snapshots": [],
        "statistics": [],
        "partition-statistics": [],
        "snapshot-log": [],
        "metadata-log": [],
    }


def _last_partition_id(spec: dict[str, Any], before: int) -> int:
    return max([before] + [f["field-id"] for f in spec["fields"]])


def encode(metadata: dict[str, Any]) -> str:
    """A metadata file's text (compact JSON, by orjson: a table of 1,000 snapshots is 500 KB)."""
    return encode_bytes(metadata).decode("utf-8")


def encode_bytes(metadata: dict[str, Any], snapshot_texts: Optional["SnapshotTexts"] = None) -> bytes:
    """``encode`` as UTF-8: the file's bytes, which are also the metadata's JSON in an answer.
    With ``snapshot_texts``, the snapshots' texts written before are reused (the same bytes)."""
    snapshots = metadata.get("snapshots")
    if snapshot_texts is None or not isinstance(snapshots, list) or len(snapshots) < _MEMO_FROM:
        return json_text.compact_lenient(metadata)
    # The member keeps its place in the object: the text is the one compact_lenient writes.
    return json_text.compact_lenient(json_text.Spliced(metadata, "snapshots", snapshot_texts.array(snapshots),
                                                        snapshots))


_MEMO_FROM = 16  # snapshots: below that, one encoding of the whole is as quick
_MAX_ARRAYS = 16  # array texts kept (~500 KB each at 1,000 snapshots)


class SnapshotTexts:
    """The JSON texts of snapshot lists written before, by their snapshot objects (held, so an
    ``id`` stays its own). A commit's metadata shares every snapshot object but the new one with
    its base's (domain.iceberg.table_commits copies the list, never a snapshot, and never changes
    one in place), so the next file's snapshots are the base's array text, the new snapshot's
    text appended: one snapshot encoded, not 1,000 (~450 KB of a 500 KB file). Any other list
    (snapshots removed, a process that read the file) has its snapshots' texts reused one by one.
    Bounded: past ``limit`` snapshot objects held it starts afresh."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._texts: dict[int, tuple[Any, bytes]] = {}  # by id of the snapshot
        # By id of a list's first snapshot: the list's snapshots and its array text.
        self._arrays: dict[int, tuple[list[Any], bytes]] = {}

    def array(self, snapshots: list[Any]) -> bytes:
        """The JSON array of ``snapshots``, as compact_lenient writes it."""
        if len(self._texts) + len(snapshots) > self.limit:
            self._texts.clear()
            self._arrays.clear()
        known = self._arrays.get(id(snapshots[0]))
        if known is not None and len(known[0]) <= len(snapshots) and all(map(operator.is_, known[0], snapshots)):
            if len(known[0]) == len(snapshots):
                return known[1]
            # One copy of the known text (bytes + bytes copies both: a 450 KB text, each time).
            text = b"".join((memoryview(known[1])[:-1], b",", b",".join(map(self._text, snapshots[len(known[0]):])),
                             b"]"))
        else:
            text = b"[" + b",".join(map(self._text, snapshots)) + b"]"
        if len(self._arrays) >= _MAX_ARRAYS:
            self._arrays.clear()
        self._arrays[id(snapshots[0])] = (list(snapshots), text)
        return text

    def _text(self, snapshot: Any) -> bytes:
        hit = self._texts.get(id(snapshot))
        if hit is None or hit[0] is not snapshot:
            hit = (snapshot, json_text.compact_lenient(snapshot))
            self._texts[id(snapshot)] = hit
        return hit[1]


def decode(text: bytes, where: str) -> dict[str, Any]:
    """A metadata file read back; InvalidInputException if it is not one this catalog can update:
    not JSON, another format version, or a member format version 2 requires missing or of the
    wrong shape (the file was written by someone else: an update must refuse it, not fail
    half-way). Optional members the update writes (``properties``, ``metadata-log``) default to
    empty."""
    try:
        metadata = json_text.loads(text)
    except (ValueError, RecursionError):
        metadata = None
    if not isinstance(metadata, dict) or metadata.get("format-version") != FORMAT_VERSION:
        raise InvalidInputException(f"The table's current metadata file {where} is not Iceberg format version "
                                    f"{FORMAT_VERSION} metadata")
    try:
        _check_metadata(metadata)
    except (_Malformed, InvalidInputException) as error:  # the latter from read_type, naming the member
        raise InvalidInputException(f"The table's current metadata file {where} is not valid Iceberg format "
                                    f"version {FORMAT_VERSION} metadata: {error}") from None
    except RecursionError:
        raise InvalidInputException(f"The table's current metadata file {where} nests its types too deeply") from None
    metadata.setdefault("properties", {})
    metadata.setdefault("metadata-log", [])
    return metadata


class _Malformed(Exception):
    """A metadata member missing or of the wrong shape (its text names which)."""


def _member(container: Any, key: str, kind: type, path: str) -> Any:
    value = container.get(key) if isinstance(container, dict) else None
    # bool is an int to isinstance; no integer member of a metadata file is a boolean
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Malformed(f"{path}{key} is required and must be {_KIND_NAMES.get(kind, 'an object')}")
    return value


_KIND_NAMES: dict[type, str] = {int: "an integer", str: "a string", list: "a list", dict: "an object"}


def _check_metadata(metadata: dict[str, Any]) -> None:
    """Every member the spec requires of format version 2, with the shape the update reads."""
    for key in ("table-uuid", "location"):
        _member(metadata, key, str, "")
    for key in ("last-sequence-number", "last-updated-ms", "last-column-id", "current-schema-id",
                "default-spec-id", "last-partition-id", "default-sort-order-id"):
        _member(metadata, key, int, "")
    properties = metadata.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(v, str) for v in properties.values()):
        raise _Malformed("properties must be an object of strings")
    if "metadata-log" in metadata and not isinstance(metadata["metadata-log"], list):
        raise _Malformed("metadata-log must be a list")
    schemas = _member(metadata, "schemas", list, "")
    for i, schema in enumerate(schemas):
        where = f"schemas[{i}]."
        _member(schema, "schema-id", int, where)
        read_type({"type": "struct", "fields": _member(schema, "fields", list, where)}, where.rstrip("."), set())
    specs = _member(metadata, "partition-specs", list, "")
    for i, spec in enumerate(specs):
        where = f"partition-specs[{i}]."
        _member(spec, "spec-id", int, where)
        for j, field in enumerate(_member(spec, "fields", list, where)):
            for key in ("source-id", "field-id"):
                _member(field, key, int, f"{where}fields[{j}].")
            for key in ("name", "transform"):
                _member(field, key, str, f"{where}fields[{j}].")
    orders = _member(metadata, "sort-orders", list, "")
    for i, order in enumerate(orders):
        where = f"sort-orders[{i}]."
        _member(order, "order-id", int, where)
        for j, field in enumerate(_member(order, "fields", list, where)):
            _member(field, "source-id", int, f"{where}fields[{j}].")
            for key in ("transform", "direction", "null-order"):
                _member(field, key, str, f"{where}fields[{j}].")
    for current, listed, id_key in (("current-schema-id", schemas, "schema-id"),
                                    ("default-spec-id", specs, "spec-id"),
                                    ("default-sort-order-id", orders, "order-id")):
        if not any(entry[id_key] == metadata[current] for entry in listed):
            raise _Malformed(f"{current} {metadata[current]} names no entry of its list")


def apply_updates(current: dict[str, Any], current_location: str, updates: list[dict[str, Any]], now_ms: int,
                  path: str) -> dict[str, Any]:
    """The next metadata after Glue's IcebergTableUpdate list, each applied in order.

    Without an Action an update states the table's new state: its Schema becomes the current
    schema (added unless an identical one exists), its Location the location, a PartitionSpec or
    SortOrder the default one (likewise), its Properties are set. An Action limits it to that
    one change (``add-schema`` adds without making it current, ``remove-properties`` removes the
    Properties' keys, ...). The previous file goes into metadata-log.
    """
    metadata = copy.deepcopy(current)
    culprit = path
    for i, update in enumerate(updates):
        before = _defaults(metadata)
        _apply(metadata, update, f"{path}.Updates[{i}]")
        after = _defaults(metadata)
        if after != before:
            culprit = f"{path}.Updates[{i}]" + (".Schema" if after[0] != before[0] else "")
    _check_defaults(metadata, culprit)
    metadata["last-updated-ms"] = max(now_ms, current.get("last-updated-ms", 0) + 1)
    metadata["metadata-log"] = [*current.get("metadata-log", []),
                                {"metadata-file": current_location, "timestamp-ms": current.get("last-updated-ms", 0)}]
    return metadata


def _defaults(metadata: dict[str, Any]) -> tuple[int, int, int]:
    return metadata["current-schema-id"], metadata["default-spec-id"], metadata["default-sort-order-id"]


def _check_defaults(metadata: dict[str, Any], path: str) -> None:
    """The table the updates leave must be one Iceberg can write: its default partition spec and
    sort order stand on its current schema (pyiceberg checks the same after its own updates, and
    appends to a table whose spec names a dropped column fail: 'Cannot find source column for
    partition field'). ``path`` names the update that made them current."""
    schema = _schema(metadata, metadata["current-schema-id"])
    spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    order = next(o for o in metadata["sort-orders"] if o["order-id"] == metadata["default-sort-order-id"])
    problem = check_sources(spec, order, schema, metadata["schemas"])
    if problem is not None:
        raise InvalidInputException(f"{path}: {problem}")


def _apply(metadata: dict[str, Any], update: dict[str, Any], path: str) -> None:
    action = update.get("Action")
    if action in ("add-encryption-key", "remove-encryption-key"):
        raise InvalidInputException(f"{path}.Action: {action} needs Iceberg format version 3 (encrypted tables); "
                                    f"this table is format version {FORMAT_VERSION}")
    if action is None or action in _SCHEMA_ACTIONS:
        schema_id = _add_schema(metadata, update["Schema"], f"{path}.Schema", action == "set-current-schema")
        if action != "add-schema":
            metadata["current-schema-id"] = schema_id
    schema = _schema(metadata, metadata["current-schema-id"])
    if update.get("PartitionSpec") is not None and (action is None or action in _SPEC_ACTIONS):
        spec_id = _add_spec(metadata, update["PartitionSpec"], schema, f"{path}.PartitionSpec",
                            action == "set-default-spec")
        if action != "add-spec":
            metadata["default-spec-id"] = spec_id
    elif action in _SPEC_ACTIONS:
        raise InvalidInputException(f"{path}.PartitionSpec: {action} needs a PartitionSpec")
    if update.get("SortOrder") is not None and (action is None or action in _ORDER_ACTIONS):
        order_id = _add_order(metadata, update["SortOrder"], schema, f"{path}.SortOrder",
                              action == "set-default-sort-order")
        if action != "add-sort-order":
            metadata["default-sort-order-id"] = order_id
    elif action in _ORDER_ACTIONS:
        raise InvalidInputException(f"{path}.SortOrder: {action} needs a SortOrder")
    if action is None or action == "set-location":
        metadata["location"] = update["Location"].rstrip("/")
    properties = update.get("Properties") or {}
    if action == "remove-properties":
        for key in properties:
            metadata["properties"].pop(key, None)
    elif action is None or action == "set-properties":
        metadata["properties"].update(properties)


def _schema(metadata: dict[str, Any], schema_id: int) -> dict[str, Any]:
    return next(s for s in metadata["schemas"] if s["schema-id"] == schema_id)


def _same(one: dict[str, Any], other: dict[str, Any], id_key: str) -> bool:
    return {k: v for k, v in one.items() if k != id_key} == {k: v for k, v in other.items() if k != id_key}


def _add_schema(metadata: dict[str, Any], given: dict[str, Any], path: str, existing_only: bool) -> int:
    if existing_only:
        wanted = given.get("SchemaId")
        if wanted is None or not any(s["schema-id"] == wanted for s in metadata["schemas"]):
            raise InvalidInputException(f"{path}.SchemaId: set-current-schema names schema {wanted}, "
                                        "which the table does not have")
        return int(wanted)
    fresh = max(s["schema-id"] for s in metadata["schemas"]) + 1
    schema = read_schema(given, path, fresh)
    schema.setdefault("identifier-field-ids", [])
    for known in metadata["schemas"]:
        if _same({"identifier-field-ids": [], **known}, schema, "schema-id"):
            return int(known["schema-id"])
    _check_field_ids(metadata, schema, path)
    check_evolution(_schema(metadata, metadata["current-schema-id"]), schema, path)
    metadata["schemas"].append(schema)
    metadata["last-column-id"] = max(metadata["last-column-id"], highest_field_id(schema))
    return fresh


def _check_field_ids(metadata: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    """A field id the table already has must keep naming the same column (a rename keeps its
    id); two different top-level names claiming one old id would mix up data files."""
    known: dict[int, str] = {}
    for old in metadata["schemas"]:
        for field in old["fields"]:
            known.setdefault(field["id"], field["name"])
    for i, field in enumerate(schema["fields"]):
        old_name = known.get(field["id"])
        if old_name is not None and old_name != field["name"] and any(
                f["name"] == old_name for f in schema["fields"]):
            raise InvalidInputException(f"{path}.Fields[{i}].Id: field id {field['id']} belongs to column "
                                        f"{old_name!r}, which the schema still has")


def _add_spec(metadata: dict[str, Any], given: dict[str, Any], schema: dict[str, Any], path: str,
              existing_only: bool) -> int:
    if existing_only:
        wanted = given.get("SpecId")
        if wanted is None or not any(s["spec-id"] == wanted for s in metadata["partition-specs"]):
            raise InvalidInputException(f"{path}.SpecId: set-default-spec names spec {wanted}, "
                                        "which the table does not have")
        return int(wanted)
    fresh = max(s["spec-id"] for s in metadata["partition-specs"]) + 1
    known_ids = {(f["source-id"], f["transform"]): f["field-id"] for s in metadata["partition-specs"]
                 for f in s["fields"]}
    spec = read_partition_spec(given, schema, path, fresh, metadata["last-partition-id"], known_ids)
    for known in metadata["partition-specs"]:
        if [{k: v for k, v in f.items() if k != "field-id"} for f in known["fields"]] == \
                [{k: v for k, v in f.items() if k != "field-id"} for f in spec["fields"]]:
            return int(known["spec-id"])
    metadata["partition-specs"].append(spec)
    metadata["last-partition-id"] = _last_partition_id(spec, metadata["last-partition-id"])
    return fresh


def _add_order(metadata: dict[str, Any], given: dict[str, Any], schema: dict[str, Any], path: str,
               existing_only: bool) -> int:
    if existing_only:
        wanted = given.get("OrderId")
        if wanted is None or not any(o["order-id"] == wanted for o in metadata["sort-orders"]):
            raise InvalidInputException(f"{path}.OrderId: set-default-sort-order names order {wanted}, "
                                        "which the table does not have")
        return int(wanted)
    if not given.get("Fields"):
        order = read_sort_order(given, schema, path, 0)
    else:
        order = read_sort_order(given, schema, path, max(o["order-id"] for o in metadata["sort-orders"]) + 1)
    for known in metadata["sort-orders"]:
        if known["fields"] == order["fields"]:
            return int(known["order-id"])
    metadata["sort-orders"].append(order)
    return int(order["order-id"])
