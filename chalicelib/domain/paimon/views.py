"""Paimon views as pure data: the ViewSchema JSON, its ViewChanges, and its Glue table form.

A Paimon view IS a Glue table of type VIRTUAL_VIEW (docs/design.md, "Paimon views and
functions"). ``to_glue`` writes a ViewSchema as a Glue ``TableInput``; ``from_glue`` reads any
VIRTUAL_VIEW table (made by Paimon or by a Glue client) back as a ViewSchema:

- fields -> StorageDescriptor.Columns (``glue_type``; the description is the column comment);
- query (the default) -> ViewOriginalText and ViewExpandedText;
- dialects -> ViewDefinition.Representations, one per dialect Glue's ViewDialect enum names
  (``spark`` SPARK, ``athena`` ATHENA, ``redshift`` REDSHIFT); the others (flink, trino, hive...)
  have no Glue form;
- comment -> Description; options -> Parameters;
- what Glue cannot hold exactly (field ids and Paimon types, every dialect with its name) ->
  one Parameter, ``paimon.view``, used on read only where Glue's members still agree with it.

JSON keys follow paimon-api's ViewSchema, ViewChange and GetViewResponse (Java; pypaimon 2.1.0
has no view client).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.hive_types import parse_hive_type
from chalicelib.domain.paimon.object_changes import apply_shared_change
from chalicelib.domain.paimon.types import AtomicType, DataField, DataType, glue_type, parse_field
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException

VIEW_TYPE = "VIRTUAL_VIEW"
STATE_PARAMETER = "paimon.view"  # Paimon-only state in the Glue Parameters (see module docstring)
# Paimon dialect name <-> Glue's ViewDialect enum (botocore glue model).
GLUE_DIALECTS = {"spark": "SPARK", "athena": "ATHENA", "redshift": "REDSHIFT"}
PAIMON_DIALECTS = {glue: paimon for paimon, glue in GLUE_DIALECTS.items()}
MAX_QUERY_CHARS = 409600  # Glue's ViewTextString
# Glue's limits on what a view's members become (botocore glue model: NameString,
# DescriptionString, CommentString, KeyString, ParametersMapValue).
MAX_NAME_CHARS = names.MAX_NAME_CHARS
MAX_COMMENT_CHARS = 2048
MAX_COLUMN_COMMENT_CHARS = 255
MAX_OPTION_VALUE_CHARS = 512000
RESOURCE_VIEW = "VIEW"
RESOURCE_DIALECT = "DIALECT"


def _bad(message: str) -> InvalidInputException:
    return InvalidInputException(message)


def _string_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _bad(f"{where} must be an object of string values")
    return dict(value)


def _query(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(f"{where} is required and must be a string")
    if len(value) > MAX_QUERY_CHARS:
        raise _bad(f"{where} is longer than {MAX_QUERY_CHARS} characters (Glue's view text limit)")
    return value


@dataclass
class ViewSchema:
    """A view's definition: fields, the default query, queries by dialect, comment, options.
    ``fields_json`` is the fields' JSON exactly as the client sent it (GET returns it so)."""

    fields: list[DataField]
    query: str
    dialects: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    fields_json: list[Any] | None = None

    @property
    def field_list(self) -> list[Any]:
        """The fields' JSON: as sent, or as parsed (a view read from Glue's columns)."""
        return self.fields_json if self.fields_json is not None else [f.to_json() for f in self.fields]

    @classmethod
    def from_json(cls, data: Any, where: str = "schema") -> "ViewSchema":
        """Parse and check a ViewSchema (400 naming the member for anything malformed)."""
        if not isinstance(data, dict):
            raise _bad(f"{where} is required and must be an object")
        raw_fields = data.get("fields")
        if raw_fields is None:
            raw_fields = []
        if not isinstance(raw_fields, list):
            raise _bad(f"{where}.fields must be a list")
        fields = [parse_field(item, f"{where}.fields[{i}]") for i, item in enumerate(raw_fields)]
        names = [f.name.lower() for f in fields]
        if len(set(names)) != len(names):
            raise _bad(f"{where}.fields: field names must be unique (ignoring case, as Glue columns)")
        comment = data.get("comment")
        if comment is not None and not isinstance(comment, str):
            raise _bad(f"{where}.comment must be a string")
        dialects = _string_map(data.get("dialects"), f"{where}.dialects")
        for name, text in dialects.items():
            _dialect_name(name, f"{where}.dialects")
            _query(text, f"{where}.dialects[{name}]")
        view = cls(fields, _query(data.get("query"), f"{where}.query"), dialects, comment,
                   _string_map(data.get("options"), f"{where}.options"), raw_fields)
        view.check_limits(f"{where}.options")
        return view

    def check_limits(self, where: str) -> None:
        """What Glue can hold: option keys and values, the comment, column comments (400 naming
        the limit); the one Parameter this catalog keeps for itself is not an option to set."""
        if STATE_PARAMETER in self.options:
            raise _bad(f"{where}: '{STATE_PARAMETER}' is reserved by the catalog")
        for key, value in self.options.items():
            if not 1 <= len(key) <= MAX_NAME_CHARS:
                raise _bad(f"{where}: option keys must be 1 to {MAX_NAME_CHARS} characters")
            if len(value) > MAX_OPTION_VALUE_CHARS:
                raise _bad(f"{where}[{key}]: an option value is at most {MAX_OPTION_VALUE_CHARS} characters")
        if self.comment is not None and len(self.comment) > MAX_COMMENT_CHARS:
            raise _bad(f"comment is longer than {MAX_COMMENT_CHARS} characters (Glue's Description limit)")
        for f in self.fields:
            if len(f.name) > MAX_NAME_CHARS:
                raise _bad(f"fields: the name of field {f.id} is longer than {MAX_NAME_CHARS} characters")
            if f.description is not None and len(f.description) > MAX_COLUMN_COMMENT_CHARS:
                raise _bad(f"fields: the description of field {f.name!r} is longer than "
                           f"{MAX_COLUMN_COMMENT_CHARS} characters (Glue's column Comment limit)")

    def to_json(self) -> dict[str, Any]:
        """ViewSchema JSON (``comment`` only when set, as paimon-api writes it)."""
        out: dict[str, Any] = {"fields": self.field_list, "query": self.query,
                               "dialects": dict(self.dialects), "options": dict(self.options)}
        if self.comment is not None:
            out["comment"] = self.comment
        return out


def check_view_name(name: str, where: str) -> str:
    """A view name Glue accepts as a table name: 1 to 255 characters, none a control character."""
    if not 1 <= len(name) <= MAX_NAME_CHARS or any(ord(c) < 32 and c != "\t" for c in name) \
            or any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise _bad(f"{where} must be 1 to {MAX_NAME_CHARS} characters, without control characters")
    return name


def _dialect_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise _bad(f"{where}: a dialect name must be a non-empty string")
    return name


# -- changes --------------------------------------------------------------------------------------
def apply_changes(view: ViewSchema, changes: Any, view_name: str) -> ViewSchema:
    """The view after ``changes`` (AlterViewRequest.changes), applied in order as Paimon's server
    does; nothing is applied if one of them is invalid (the caller stores only the result).
    400 for a malformed change, 409 adding a dialect that exists, 404 updating or dropping one
    that does not (resource type DIALECT)."""
    if not isinstance(changes, list):
        raise _bad("changes is required and must be a list")
    result = ViewSchema(list(view.fields), view.query, dict(view.dialects), view.comment, dict(view.options),
                        view.fields_json)
    for i, change in enumerate(changes):
        where = f"changes[{i}]"
        if not isinstance(change, dict):
            raise _bad(f"{where} must be an object")
        action = change.get("action")
        if apply_shared_change(result, change, where):
            continue
        if action in ("addDialect", "updateDialect"):
            name = _dialect_name(change.get("dialect"), where)
            query = _query(change.get("query"), f"{where}.query")
            if action == "addDialect" and name in result.dialects:
                raise AlreadyExistsException(f"Dialect {name} already exists in view {view_name}.",
                                             RESOURCE_DIALECT, name)
            if action == "updateDialect" and name not in result.dialects:
                raise EntityNotFoundException(f"Dialect {name} does not exist in view {view_name}.",
                                              RESOURCE_DIALECT, name)
            result.dialects[name] = query
        elif action == "dropDialect":
            name = _dialect_name(change.get("dialect"), where)
            if name not in result.dialects:
                raise EntityNotFoundException(f"Dialect {name} does not exist in view {view_name}.",
                                              RESOURCE_DIALECT, name)
            del result.dialects[name]
        else:
            raise _bad(f"{where}.action must be one of setOption, removeOption, updateComment, addDialect, "
                       f"updateDialect, dropDialect, not {str(action)[:64]!r}")
    result.check_limits("changes")
    return result


# -- Glue form ------------------------------------------------------------------------------------
def _columns(fields: list[DataField]) -> list[dict[str, Any]]:
    columns = []
    for f in fields:
        column: dict[str, Any] = {"Name": f.name.lower(), "Type": glue_type(f.type)}
        if f.description is not None:
            column["Comment"] = f.description
        columns.append(column)
    return columns


def _representations(dialects: dict[str, str]) -> list[dict[str, Any]]:
    return [{"Dialect": GLUE_DIALECTS[name], "ViewOriginalText": text, "ViewExpandedText": text}
            for name, text in sorted(dialects.items()) if name in GLUE_DIALECTS]


def to_glue(name: str, view: ViewSchema, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Glue ``TableInput`` of a view (``base``: the stored Table being altered, whose other
    members, e.g. Owner or a Glue client's ViewDefinition details, are kept)."""
    table: dict[str, Any] = {k: v for k, v in (base or {}).items()
                             if k not in ("DatabaseName", "CreateTime", "UpdateTime", "IsRegisteredWithLakeFormation",
                                          "VersionId", "CatalogId", "CreatedBy")}
    table.update({"Name": name, "TableType": VIEW_TYPE, "ViewOriginalText": view.query,
                  "ViewExpandedText": view.query})
    storage = dict(table.get("StorageDescriptor") or {})
    storage["Columns"] = _columns(view.fields)
    table["StorageDescriptor"] = storage
    table.pop("Description", None)
    if view.comment is not None:
        table["Description"] = view.comment
    state = {"fields": view.field_list, "dialects": dict(view.dialects)}
    table["Parameters"] = {**view.options, STATE_PARAMETER: json.dumps(state, separators=(",", ":"))}
    representations = _representations(view.dialects)
    old_definition = table.get("ViewDefinition") or {}
    # A Glue client's details of a representation (DialectVersion, ValidationConnection) stay
    # with its dialect; Paimon has no word for them.
    details = {rep.get("Dialect"): {k: v for k, v in rep.items()
                                    if k in ("DialectVersion", "ValidationConnection")}
               for rep in old_definition.get("Representations") or [] if isinstance(rep, dict)}
    representations = [{**rep, **details.get(rep["Dialect"], {})} for rep in representations]
    definition = {k: v for k, v in old_definition.items() if k != "Representations"}
    if representations:
        table["ViewDefinition"] = {**definition, "Representations": representations}
    else:
        table.pop("ViewDefinition", None)
    return table


def _same_representations(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> bool:
    def key(rep: dict[str, Any]) -> tuple[str, str]:
        return str(rep.get("Dialect")), str(rep.get("ViewOriginalText"))
    return sorted(map(key, expected)) == sorted(map(key, actual))


def _same_columns(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> bool:
    def key(column: dict[str, Any]) -> tuple[str, str, Any]:
        return str(column.get("Name", "")).lower(), str(column.get("Type", "")).lower(), column.get("Comment")
    return [key(c) for c in expected] == [key(c) for c in actual]


def from_glue(table: dict[str, Any]) -> ViewSchema:
    """The ViewSchema of a stored VIRTUAL_VIEW Table. Glue's members are the truth (a Glue client
    may have changed them); the ``paimon.view`` state supplies field ids, Paimon types and the
    dialects Glue has no name for, as long as the Glue members it was written with are unchanged."""
    parameters = dict(table.get("Parameters") or {})
    state: dict[str, Any] = {}
    try:
        loaded = json.loads(parameters.pop(STATE_PARAMETER, "") or "{}")
        state = loaded if isinstance(loaded, dict) else {}
    except ValueError:
        state = {}
    columns = (table.get("StorageDescriptor") or {}).get("Columns") or []
    fields = _state_fields(state)
    fields_json: list[Any] | None = state.get("fields")
    if fields is None or not _same_columns(_columns(fields), columns):
        fields_json = None
        fields = [DataField(i, str(c.get("Name", "")), _column_type(c), c.get("Comment"))
                  for i, c in enumerate(columns)]
    representations = (table.get("ViewDefinition") or {}).get("Representations") or []
    stored = state.get("dialects")
    dialects = {str(k): str(v) for k, v in stored.items()} if isinstance(stored, dict) else {}
    if not _same_representations(_representations(dialects), representations):
        dialects = {k: v for k, v in dialects.items() if k not in GLUE_DIALECTS}
        for rep in representations:
            name = PAIMON_DIALECTS.get(str(rep.get("Dialect")), str(rep.get("Dialect", "")).lower())
            dialects[name] = str(rep.get("ViewOriginalText") or rep.get("ViewExpandedText") or "")
    query = table.get("ViewOriginalText") or table.get("ViewExpandedText") or ""
    return ViewSchema(fields, query, dialects, table.get("Description"), parameters, fields_json)


def _column_type(column: dict[str, Any]) -> DataType:
    """A Glue view column's type as Paimon's; one Paimon has no counterpart for (or a malformed
    one) reads as STRING, since a view's column types are informational (the query defines them)."""
    try:
        return parse_hive_type(str(column.get("Type") or "string"))
    except ValueError:
        return AtomicType("STRING")


def _state_fields(state: dict[str, Any]) -> list[DataField] | None:
    raw = state.get("fields")
    if not isinstance(raw, list):
        return None
    try:
        return [parse_field(item) for item in raw]
    except InvalidInputException:
        return None
