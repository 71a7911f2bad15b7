"""Paimon SchemaChanges (AlterTableRequest.changes): parse their JSON and apply them to a TableSchema.

Follows Paimon's SchemaManager (paimon-core .../schema/SchemaManager.java and pypaimon's
schema/schema_manager.py): the result has id + 1, field ids are kept, a new column takes
highestFieldId + 1 (its nested ROW fields the ids after), and an invalid change raises before
anything is returned, so the caller stores all of a request's changes or none.

Errors: an unknown column is EntityNotFoundException with resource type COLUMN (Paimon's 404
ColumnNotExistException), a taken name AlreadyExistsException with COLUMN (409), anything else
Paimon refuses (partition/primary key changes, lossy types, NOT NULL additions) InvalidInputException.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from chalicelib.domain.paimon.schema import TableSchema
from chalicelib.domain.paimon.types import (ArrayType, DataField, DataType, MapType, RowType, parse_type,
                                            supports_cast, to_json)
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException

COLUMN = "COLUMN"
MOVE_TYPES = ("FIRST", "AFTER", "BEFORE", "LAST")
_NULL_TO_NOT_NULL_DISABLED = "alter-column-null-to-not-null.disabled"
_ADD_COLUMN_BEFORE_PARTITION = "add-column-before-partition"
# Options a table with snapshots can no longer change (Java CoreOptions.IMMUTABLE_OPTIONS, as in pypaimon).
IMMUTABLE_OPTIONS = frozenset({
    "type", "bucket-key", "bucket-function.type", "data-file.path-directory", "merge-engine",
    "sequence.snapshot-ordering", "aggregation.remove-record-on-delete", "partial-update.remove-record-on-delete",
    "partial-update.remove-record-on-sequence-group", "rowkind.field", "primary-key", "primary-key.nullable",
    "partition", "dynamic-bucket.initial-buckets", "force-lookup", "row-tracking.enabled", "data-evolution.enabled",
    "index-file-in-data-file-dir", "blob-field", "video-frame-field", "blob-descriptor-field", "blob-view-field",
    "pk-clustering-override",
})


def column_not_found(name: str) -> EntityNotFoundException:
    """Paimon's ColumnNotExistException (404, resourceType COLUMN)."""
    return EntityNotFoundException(f"Column {name} does not exist.", COLUMN, name)


def column_exists(name: str) -> AlreadyExistsException:
    """Paimon's ColumnAlreadyExistException (409, resourceType COLUMN)."""
    return AlreadyExistsException(f"Column {name} already exists.", COLUMN, name)


@dataclass
class Move:
    """Where a column goes: FIRST, LAST, AFTER/BEFORE ``reference``."""

    field_name: str
    reference: str | None
    type: str

    def to_json(self) -> dict[str, Any]:
        """``{"fieldName", "referenceFieldName", "type"}``."""
        return {"fieldName": self.field_name, "referenceFieldName": self.reference, "type": self.type}


@dataclass
class SchemaChange:
    """One change: ``action`` plus its arguments (JSON names in ``args``, types parsed)."""

    action: str
    args: dict[str, Any]


# -- parsing --------------------------------------------------------------------------------------

def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
    value = data.get(key)
    if value is None:
        if optional:
            return None
        raise InvalidInputException(f"{where}.{key} is required")
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InvalidInputException(f"{where}.{key} must be a {names}")
    return value


def _names(data: dict[str, Any], where: str) -> list[str]:
    value = _require(data, "fieldNames", list, where)
    if not value or not all(isinstance(n, str) and n for n in value):
        raise InvalidInputException(f"{where}.fieldNames must be a non-empty list of non-empty strings")
    return list(value)


def _move(data: Any, where: str) -> Move:
    if not isinstance(data, dict):
        raise InvalidInputException(f"{where} must be an object")
    move_type = _require(data, "type", str, where)
    if move_type not in MOVE_TYPES:
        raise InvalidInputException(f"{where}.type must be one of {list(MOVE_TYPES)}, not {move_type[:40]!r}")
    reference = _require(data, "referenceFieldName", str, where, optional=move_type in ("FIRST", "LAST"))
    return Move(_require(data, "fieldName", str, where), reference, move_type)


def parse_change(data: Any, where: str = "change") -> SchemaChange:
    """Parse one SchemaChange's JSON (``{"action": "addColumn", ...}``)."""
    if not isinstance(data, dict):
        raise InvalidInputException(f"{where} must be an object")
    action = _require(data, "action", str, where)
    args: dict[str, Any]
    if action == "setOption":
        args = {"key": _require(data, "key", str, where), "value": _require(data, "value", str, where)}
    elif action == "removeOption":
        args = {"key": _require(data, "key", str, where)}
    elif action == "updateComment":
        args = {"comment": _require(data, "comment", str, where, optional=True)}
    elif action == "addColumn":
        move = data.get("move")
        args = {"fieldNames": _names(data, where), "dataType": parse_type(data.get("dataType"), f"{where}.dataType"),
                "comment": _require(data, "comment", str, where, optional=True),
                "move": None if move is None else _move(move, f"{where}.move")}
    elif action == "renameColumn":
        args = {"fieldNames": _names(data, where), "newName": _require(data, "newName", str, where)}
    elif action == "dropColumn":
        args = {"fieldNames": _names(data, where)}
    elif action == "updateColumnType":
        args = {"fieldNames": _names(data, where),
                "newDataType": parse_type(data.get("newDataType"), f"{where}.newDataType"),
                "keepNullability": bool(_require(data, "keepNullability", bool, where, optional=True))}
    elif action == "updateColumnNullability":
        args = {"fieldNames": _names(data, where), "newNullability": _require(data, "newNullability", bool, where)}
    elif action == "updateColumnComment":
        args = {"fieldNames": _names(data, where), "newComment": _require(data, "newComment", str, where, optional=True)}
    elif action == "updateColumnDefaultValue":
        args = {"fieldNames": _names(data, where),
                "newDefaultValue": _require(data, "newDefaultValue", str, where, optional=True)}
    elif action == "updateColumnPosition":
        args = {"move": _move(data.get("move"), f"{where}.move")}
    elif action == "dropPrimaryKey":  # Flink's ALTER TABLE ... DROP PRIMARY KEY (no arguments)
        args = {}
    else:
        raise InvalidInputException(f"{where}.action {action[:60]!r} is not a SchemaChange action")
    return SchemaChange(action, args)


def parse_changes(data: Any, where: str = "changes") -> list[SchemaChange]:
    """Parse AlterTableRequest.changes (a list)."""
    if not isinstance(data, list):
        raise InvalidInputException(f"{where} must be a list of schema changes")
    return [parse_change(item, f"{where}[{i}]") for i, item in enumerate(data)]


# -- applying -------------------------------------------------------------------------------------

def _index(fields: list[DataField], name: str) -> int | None:
    for i, f in enumerate(fields):
        if f.name == name:
            return i
    return None


def _nested_fields(data_type: DataType, names: list[str], pos: int) -> tuple[list[DataField], int]:
    """The ROW fields reachable from ``data_type`` (through ARRAY 'element' / MAP 'value' steps) and
    how many path tokens that consumed."""
    if isinstance(data_type, RowType):
        return list(data_type.fields), 1
    if isinstance(data_type, (ArrayType, MapType)):
        expected = "element" if isinstance(data_type, ArrayType) else "value"
        if pos < len(names) and names[pos] != expected:
            raise column_not_found(".".join(names))
        inner = data_type.element if isinstance(data_type, ArrayType) else data_type.value
        found, used = _nested_fields(inner, names, pos + 1)
        return found, used + 1
    return [], 1


def _rewrap(data_type: DataType, fields: list[DataField]) -> DataType:
    if isinstance(data_type, RowType):
        return RowType(fields, data_type.nullable)
    if isinstance(data_type, ArrayType):
        return ArrayType(_rewrap(data_type.element, fields), data_type.nullable)
    if isinstance(data_type, MapType):
        return MapType(data_type.key, _rewrap(data_type.value, fields), data_type.nullable)
    return data_type


def _walk(fields: list[DataField], previous: list[DataField], depth: int, prev_depth: int, names: list[str],
          last: Callable[[int, list[DataField], str], None]) -> None:
    """Find the field list holding the path's last name and run ``last`` on it, rebuilding parents."""
    if depth == len(names) - 1:
        last(depth, fields, names[depth])
        return
    if depth >= len(names):
        last(prev_depth, previous, names[prev_depth])
        return
    i = _index(fields, names[depth])
    if i is None:
        raise column_not_found(".".join(names[:depth + 1]))
    nested, used = _nested_fields(fields[i].type, names, depth + 1)
    _walk(nested, fields, depth + used, depth, names, last)
    f = fields[i]
    fields[i] = DataField(f.id, f.name, _rewrap(f.type, nested), f.description, f.default_value)


def _update_field(fields: list[DataField], names: list[str], update: Callable[[DataField, int], DataField]) -> None:
    def last(depth: int, holder: list[DataField], name: str) -> None:
        i = _index(holder, name)
        if i is None:
            raise column_not_found(".".join(names))
        holder[i] = update(holder[i], depth)
    _walk(fields, fields, 0, 0, names, last)


def _root_at(data_type: DataType, depth: int, max_depth: int) -> DataType:
    if depth == max_depth - 1:
        return data_type
    if isinstance(data_type, ArrayType):
        return _root_at(data_type.element, depth + 1, max_depth)
    if isinstance(data_type, MapType):
        return _root_at(data_type.value, depth + 1, max_depth)
    return data_type


def _replace_root(source: DataType, target: DataType, depth: int, max_depth: int) -> DataType:
    if depth == max_depth - 1:
        return target
    if isinstance(source, ArrayType):
        return ArrayType(_replace_root(source.element, target, depth + 1, max_depth), source.nullable)
    if isinstance(source, MapType):
        return MapType(source.key, _replace_root(source.value, target, depth + 1, max_depth), source.nullable)
    return target


def _reassign_ids(data_type: DataType, next_id: list[int]) -> DataType:
    """Give every nested ROW field of a new column a fresh id from the table's sequence."""
    if isinstance(data_type, RowType):
        fields = []
        for f in data_type.fields:
            next_id[0] += 1
            fields.append(DataField(next_id[0], f.name, _reassign_ids(f.type, next_id), f.description,
                                    f.default_value))
        return RowType(fields, data_type.nullable)
    if isinstance(data_type, ArrayType):
        return ArrayType(_reassign_ids(data_type.element, next_id), data_type.nullable)
    if isinstance(data_type, MapType):
        return MapType(_reassign_ids(data_type.key, next_id), _reassign_ids(data_type.value, next_id),
                       data_type.nullable)
    return data_type


def _apply_move(fields: list[DataField], new_field: DataField | None, move: Move) -> None:
    if new_field is None:
        i = _index(fields, move.field_name)
        if i is None:
            raise column_not_found(move.field_name)
        new_field = fields.pop(i)
    if move.type == "FIRST":
        fields.insert(0, new_field)
    elif move.type == "LAST":
        fields.append(new_field)
    else:
        assert move.reference is not None  # _move requires it for AFTER and BEFORE
        ref = _index(fields, move.reference)
        if ref is None:
            raise column_not_found(move.reference)
        fields.insert(ref + 1 if move.type == "AFTER" else ref, new_field)


def _check_not_null(old_nullable: bool, new_nullable: bool, name: str, disabled: bool) -> None:
    if disabled and old_nullable and not new_nullable:
        raise InvalidInputException(
            f"Cannot update column type from nullable to non nullable for {name}. You can set table "
            f"configuration option '{_NULL_TO_NOT_NULL_DISABLED}' = 'false' to allow converting null columns "
            "to not null")


def _key_guard(schema: TableSchema, names: list[str], operation: str, partition: bool, primary: bool) -> None:
    if len(names) > 1:
        return  # nested fields are never keys
    name = names[0]
    if partition and name in schema.partition_keys:
        raise InvalidInputException(f"Cannot {operation} partition column: [{name}]")
    if primary and name in schema.primary_keys:
        raise InvalidInputException(f"Cannot {operation} primary key")


def apply_changes(old: TableSchema, changes: list[SchemaChange], time_millis: int,
                  has_snapshots: bool = False) -> TableSchema:
    """The TableSchema after ``changes`` (id + 1); raises on the first invalid change.

    ``has_snapshots``: whether the table has a snapshot; then IMMUTABLE_OPTIONS cannot change.
    """
    fields = copy.deepcopy(old.fields)
    options = dict(old.options)
    comment = old.comment
    next_id = [old.highest_field_id]
    null_to_not_null_disabled = old.options.get(_NULL_TO_NOT_NULL_DISABLED, "true").lower() != "false"
    before_partition = old.options.get(_ADD_COLUMN_BEFORE_PARTITION, "false").lower() == "true"
    renames: dict[str, str] = {}
    primary_keys = list(old.primary_keys)

    for change in changes:
        a = change.args
        if change.action == "setOption":
            if options.get(a["key"]) == a["value"]:
                continue
            if a["key"] == "type" or (has_snapshots and a["key"] in IMMUTABLE_OPTIONS):
                raise InvalidInputException(f"Change '{a['key']}' is not supported yet.")
            options[a["key"]] = a["value"]
        elif change.action == "removeOption":
            if a["key"] == "type" or (has_snapshots and a["key"] in IMMUTABLE_OPTIONS):
                raise InvalidInputException(f"Change '{a['key']}' is not supported yet.")
            options.pop(a["key"], None)
        elif change.action == "updateComment":
            comment = a["comment"]
        elif change.action == "addColumn":
            _add_column(fields, a, next_id, old.partition_keys, before_partition)
        elif change.action == "renameColumn":
            _key_guard(old, a["fieldNames"], "rename", partition=True, primary=False)
            _rename_column(fields, a["fieldNames"], a["newName"])
            if len(a["fieldNames"]) == 1:
                renames[a["fieldNames"][0]] = a["newName"]
        elif change.action == "dropColumn":
            names = a["fieldNames"]
            if len(names) == 1 and (names[0] in old.partition_keys or names[0] in old.primary_keys):
                raise InvalidInputException(f"Cannot drop partition key or primary key: [{names[0]}]")
            _drop_column(fields, names)
        elif change.action == "updateColumnType":
            _key_guard(old, a["fieldNames"], "update", partition=True, primary=True)
            _update_type(fields, a["fieldNames"], a["newDataType"], a["keepNullability"], null_to_not_null_disabled)
        elif change.action == "updateColumnNullability":
            if a["newNullability"]:
                _key_guard(old, a["fieldNames"], "change nullability of", partition=False, primary=True)
            _update_nullability(fields, a["fieldNames"], a["newNullability"], null_to_not_null_disabled)
        elif change.action == "updateColumnComment":
            _update_field(fields, a["fieldNames"],
                          lambda f, _d: DataField(f.id, f.name, f.type, a["newComment"], f.default_value))
        elif change.action == "updateColumnDefaultValue":
            _update_field(fields, a["fieldNames"],
                          lambda f, _d: DataField(f.id, f.name, f.type, f.description, a["newDefaultValue"]))
        elif change.action == "updateColumnPosition":
            _apply_move(fields, None, a["move"])
        elif change.action == "dropPrimaryKey":
            # As SchemaManager: a table with data keeps its keys (its files are sorted by them).
            if has_snapshots:
                raise InvalidInputException("Cannot drop primary keys on a non-empty table.")
            primary_keys = []
        else:  # parse_change admits no other action
            raise InvalidInputException(f"Unsupported schema change {change.action!r}")

    primary_keys = [renames.get(k, k) for k in primary_keys]
    for option in ("bucket-key", "sequence.field"):
        if renames and option in options:
            options[option] = ",".join(renames.get(k, k) for k in options[option].split(","))
    return TableSchema(old.id + 1, fields, next_id[0], list(old.partition_keys), primary_keys, options, comment,
                       time_millis, old.version)


def _add_column(fields: list[DataField], a: dict[str, Any], next_id: list[int], partition_keys: list[str],
                before_partition: bool) -> None:
    names: list[str] = a["fieldNames"]
    data_type: DataType = a["dataType"]
    if not data_type.nullable:
        raise InvalidInputException(f"Column {'.'.join(names)} cannot specify NOT NULL in the table.")
    next_id[0] += 1
    new_field = DataField(next_id[0], names[-1], _reassign_ids(data_type, next_id), a["comment"])

    def last(_depth: int, holder: list[DataField], name: str) -> None:
        if _index(holder, name) is not None:
            raise column_exists(name)
        if a["move"] is not None:
            _apply_move(holder, new_field, a["move"])
        elif before_partition and partition_keys and len(names) == 1:
            at = next((i for i, f in enumerate(holder) if f.name in partition_keys), len(holder))
            holder.insert(at, new_field)
        else:
            holder.append(new_field)
    _walk(fields, fields, 0, 0, names, last)


def _rename_column(fields: list[DataField], names: list[str], new_name: str) -> None:
    def last(_depth: int, holder: list[DataField], name: str) -> None:
        i = _index(holder, name)
        if i is None:
            raise column_not_found(name)
        if _index(holder, new_name) is not None:
            raise column_exists(new_name)
        f = holder[i]
        holder[i] = DataField(f.id, new_name, f.type, f.description, f.default_value)
    _walk(fields, fields, 0, 0, names, last)


def _drop_column(fields: list[DataField], names: list[str]) -> None:
    def last(_depth: int, holder: list[DataField], name: str) -> None:
        i = _index(holder, name)
        if i is None:
            raise column_not_found(name)
        holder.pop(i)
        if not holder:
            raise InvalidInputException("Cannot drop all fields in table")
    _walk(fields, fields, 0, 0, names, last)


def _update_type(fields: list[DataField], names: list[str], new_type: DataType, keep_nullability: bool,
                 not_null_disabled: bool) -> None:
    def update(f: DataField, depth: int) -> DataField:
        source = _root_at(f.type, depth, len(names))
        target = parse_type(to_json(new_type))
        if keep_nullability:
            target.nullable = source.nullable
        else:
            _check_not_null(source.nullable, target.nullable, ".".join(names), not_null_disabled)
        if not supports_cast(source, target):
            raise InvalidInputException(
                f"Column type {f.name}[{_sql(source)}] cannot be converted to {_sql(target)} without losing "
                "information.")
        return DataField(f.id, f.name, _replace_root(f.type, target, depth, len(names)), f.description,
                         f.default_value)
    _update_field(fields, names, update)


def _update_nullability(fields: list[DataField], names: list[str], nullable: bool, not_null_disabled: bool) -> None:
    def update(f: DataField, depth: int) -> DataField:
        source = _root_at(f.type, depth, len(names))
        _check_not_null(source.nullable, nullable, ".".join(names), not_null_disabled)
        target = parse_type(to_json(source))
        target.nullable = nullable
        return DataField(f.id, f.name, _replace_root(f.type, target, depth, len(names)), f.description,
                         f.default_value)
    _update_field(fields, names, update)


def _sql(data_type: DataType) -> str:
    text = to_json(data_type)
    return text if isinstance(text, str) else str(text.get("type"))
