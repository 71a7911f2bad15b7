"""Iceberg view metadata (view format version 1) as pure data: the first metadata of a view from
a CreateViewRequest, a CommitViewRequest's requirements and updates, the metadata file's text,
and the view's Glue table form both ways.

The update semantics and error wording are Iceberg Java's ``ViewMetadata.Builder`` (the one the
spec's reference server, ``CatalogHandlers``, runs): a schema or version equal to a known one is
reused under its id, ``-1`` names the last one added by this commit, a replace may not drop a
dialect unless ``replace.drop-dialect.allowed`` says so, and old versions expire past
``version.history.num-entries`` (10). A failed requirement is ConcurrentModificationException
(the wire's 409 CommitFailedException); a bad update InvalidInputException (400), as Java's
ValidationException and IllegalArgumentException answer 400 there.

A view IS a Glue table of TableType VIRTUAL_VIEW (as Paimon views are, ``domain.paimon.views``):
``glue_view_input`` writes the current version's Glue-named dialects (spark, athena, redshift)
as ``ViewDefinition.Representations``, the first representation's SQL as ViewOriginalText and
ViewExpandedText, the schema as columns, the properties as Parameters, and marks the table as
Iceberg Java's Hive catalog marks its views: ``table_type=ICEBERG-VIEW``, ``metadata_location``,
``previous_metadata_location``. ``from_glue`` reads a view made by any Glue client (no metadata
file) as Iceberg view metadata.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import uuid
from typing import Any, Optional

from chalicelib.domain.iceberg.metadata import METADATA_LOCATION, PREVIOUS_METADATA_LOCATION, TABLE_TYPE
from chalicelib.domain.iceberg.types import glue_columns, read_type, schema_from_columns
from chalicelib.domain.paimon.views import GLUE_DIALECTS, STATE_PARAMETER
from chalicelib.errors import ConcurrentModificationException, InvalidInputException

FORMAT_VERSION = 1
ICEBERG_VIEW = "ICEBERG-VIEW"  # Iceberg Java's HiveOperationsBase.ICEBERG_VIEW_TYPE_VALUE, upper-cased as written
VIRTUAL_VIEW = "VIRTUAL_VIEW"
LAST_ADDED = -1
VERSION_HISTORY_SIZE = "version.history.num-entries"
VERSION_HISTORY_SIZE_DEFAULT = 10
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
COMMENT = "comment"
MAX_SQL_CHARS = 409600  # Glue's ViewTextString: what ViewOriginalText and a Representation hold
_MAX_KEY, _MAX_VALUE, _MAX_DESCRIPTION = 255, 512000, 2048  # Glue's Parameters and Description
# Parameters the catalog writes itself: never view properties.
RESERVED_PARAMETERS = frozenset({TABLE_TYPE, METADATA_LOCATION, PREVIOUS_METADATA_LOCATION, STATE_PARAMETER})
_PRESTO_VIEW = ("/* Presto View: ", "*/")  # how Athena and Trino keep a view in ViewOriginalText
_GLUE_ONLY_DIALECT = "hive"  # the dialect of a plain ViewOriginalText (what Iceberg's Hive catalog reads)


def _bad(message: str) -> InvalidInputException:
    return InvalidInputException(message)


def _int(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(f"{path} is required and must be an integer")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _bad(f"{path} is required and must be a string")
    return value


def _string_map(value: Any, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _bad(f"{path} must be an object of string values")
    return dict(value)


def _properties(value: Any, path: str) -> dict[str, str]:
    """View properties, within what Glue Parameters hold (they are copied there)."""
    properties = _string_map(value, path)
    for key, item in properties.items():
        if not 1 <= len(key) <= _MAX_KEY or len(item) > _MAX_VALUE:
            raise _bad(f"{path}: keys must be 1 to {_MAX_KEY} characters and values at most {_MAX_VALUE}")
        if key in RESERVED_PARAMETERS:
            raise _bad(f"{path}: {key!r} is reserved: the catalog writes it")
    return properties


# ------------------------------------------------------------------------------ reading members
def read_schema(value: Any, path: str) -> dict[str, Any]:
    """A schema in the spec's JSON form, checked and normalised (its ``schema-id`` kept, 0 if
    absent: the builder assigns ids anyway)."""
    if not isinstance(value, dict):
        raise _bad(f"{path} is required and must be an object")
    fields = value.get("fields")
    if not isinstance(fields, list):
        raise _bad(f"{path}.fields is required and must be a list")
    struct = read_type({"type": "struct", "fields": fields}, path, set())
    schema_id = value.get("schema-id", 0)
    out: dict[str, Any] = {"type": "struct", "schema-id": _int(schema_id, f"{path}.schema-id"),
                           "fields": struct["fields"]}
    identifiers = value.get("identifier-field-ids") or []
    if not isinstance(identifiers, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                    for i in identifiers):
        raise _bad(f"{path}.identifier-field-ids must be a list of integers")
    if identifiers:
        out["identifier-field-ids"] = list(identifiers)
    return out


def read_version(value: Any, path: str) -> dict[str, Any]:
    """A ViewVersion, checked: SQL representations only, one per dialect (ignoring case)."""
    if not isinstance(value, dict):
        raise _bad(f"{path} is required and must be an object")
    representations = value.get("representations")
    if not isinstance(representations, list):
        raise _bad(f"{path}.representations is required and must be a list")
    unsupported = sorted({str(r.get("type")) for r in representations if isinstance(r, dict) and r.get("type") != "sql"})
    if unsupported:
        raise _bad(f"Found unsupported view representations: {unsupported}")
    reps = []
    for i, rep in enumerate(representations):
        where = f"{path}.representations[{i}]"
        if not isinstance(rep, dict):
            raise _bad(f"{where} must be an object")
        sql = _str(rep.get("sql"), f"{where}.sql")
        if len(sql) > MAX_SQL_CHARS:
            raise _bad(f"{where}.sql is longer than {MAX_SQL_CHARS} characters (Glue's view text limit)")
        reps.append({"type": "sql", "sql": sql, "dialect": _str(rep.get("dialect"), f"{where}.dialect")})
    namespace = value.get("default-namespace")
    if not isinstance(namespace, list) or not all(isinstance(part, str) for part in namespace):
        raise _bad(f"{path}.default-namespace is required and must be a list of strings")
    out: dict[str, Any] = {"version-id": _int(value.get("version-id"), f"{path}.version-id"),
                           "timestamp-ms": _int(value.get("timestamp-ms"), f"{path}.timestamp-ms"),
                           "schema-id": _int(value.get("schema-id"), f"{path}.schema-id"),
                           "summary": _string_map(value.get("summary"), f"{path}.summary"),
                           "representations": reps, "default-namespace": list(namespace)}
    if value.get("default-catalog") is not None:
        out["default-catalog"] = _str(value["default-catalog"], f"{path}.default-catalog")
    return out


def _dialects(version: dict[str, Any]) -> list[str]:
    return [rep["dialect"].lower() for rep in version["representations"]]


# ------------------------------------------------------------------------------ create
def new_view_metadata(request: dict[str, Any], location: str, view_uuid: str, now_ms: int) -> dict[str, Any]:
    """The first metadata of a view from a CreateViewRequest, as Iceberg Java's view builder makes
    it: the schema as schema 0, the version as version 1 on it, created now."""
    schema = {**read_schema(request.get("schema"), "schema"), "schema-id": 0}
    version = read_version(request.get("view-version"), "view-version")
    if not version["representations"]:
        raise _bad("Cannot create view without specifying a query")
    start = {"view-uuid": view_uuid, "format-version": FORMAT_VERSION, "location": location,
             "schemas": [], "current-version-id": LAST_ADDED, "versions": [], "version-log": [],
             "properties": {}}
    updates = [{"action": "set-properties", "updates": request.get("properties") or {}},
               {"action": "add-schema", "schema": schema},
               {"action": "add-view-version", "view-version": {**version, "version-id": 1, "schema-id": LAST_ADDED,
                                                               "timestamp-ms": now_ms}},
               {"action": "set-current-view-version", "view-version-id": LAST_ADDED}]
    return _Builder(start, now_ms, new=True).apply(updates, "").build()


# ------------------------------------------------------------------------------ commits
def check_requirements(metadata: dict[str, Any], requirements: Any) -> None:
    """CommitViewRequest.requirements against the current metadata (409 when one fails)."""
    if requirements is None:
        return
    if not isinstance(requirements, list):
        raise _bad("requirements must be a list")
    for i, requirement in enumerate(requirements):
        where = f"requirements[{i}]"
        if not isinstance(requirement, dict):
            raise _bad(f"{where} must be an object")
        if requirement.get("type") != "assert-view-uuid":
            raise _bad(f"{where}.type must be assert-view-uuid, not {str(requirement.get('type'))[:64]!r}")
        expected = _str(requirement.get("uuid"), f"{where}.uuid")
        if expected.lower() != str(metadata["view-uuid"]).lower():
            raise ConcurrentModificationException(
                f"Requirement failed: view UUID does not match: expected {metadata['view-uuid']} != {expected}")


def apply_updates(base: dict[str, Any], updates: Any, now_ms: int) -> dict[str, Any]:
    """The metadata after CommitViewRequest.updates, applied in order (nothing applied if one of
    them is invalid: the caller stores only the result)."""
    if not isinstance(updates, list):
        raise _bad("updates is required and must be a list")
    return _Builder(base, now_ms).apply(updates, "updates").build()


class _Builder:
    """Iceberg Java's ViewMetadata.Builder over the JSON form."""

    def __init__(self, base: dict[str, Any], now_ms: int, new: bool = False) -> None:
        self.metadata = copy.deepcopy(base)
        self.now_ms = now_ms
        self.previous = None if new else current_version(base)
        self.last_added_schema: Optional[int] = None
        self.last_added_version: Optional[int] = None
        self.added_versions: set[int] = set()
        self.history_entry: Optional[dict[str, int]] = None

    def apply(self, updates: list[Any], path: str) -> "_Builder":
        for i, update in enumerate(updates):
            where = f"{path}[{i}]" if path else f"[{i}]"
            if not isinstance(update, dict):
                raise _bad(f"{where} must be an object")
            action = update.get("action")
            handler = _ACTIONS.get(action) if isinstance(action, str) else None
            if handler is None:
                raise _bad(f"{where}.action: cannot apply update {str(action)[:64]!r} to a view (one of "
                           f"{', '.join(_ACTIONS)})")
            handler(self, update, where)
        return self

    # -- the updates
    def assign_uuid(self, update: dict[str, Any], where: str) -> None:
        given = _str(update.get("uuid"), f"{where}.uuid")
        if given != self.metadata["view-uuid"]:
            raise _bad("Cannot reassign uuid")

    def upgrade_format_version(self, update: dict[str, Any], where: str) -> None:
        version = _int(update.get("format-version"), f"{where}.format-version")
        if version < self.metadata["format-version"]:
            raise _bad(f"Cannot downgrade v{self.metadata['format-version']} view to v{version}")
        if version > FORMAT_VERSION:
            raise _bad(f"Unsupported format version: {version}")

    def add_schema(self, update: dict[str, Any], where: str) -> None:
        schema = read_schema(update.get("schema"), f"{where}.schema")
        new_id = 0
        for known in self.metadata["schemas"]:
            if _same_schema(known, schema):
                return  # known already (or added by this commit): nothing new
            new_id = max(new_id, known["schema-id"] + 1)
        self.metadata["schemas"].append({**schema, "schema-id": new_id})
        self.last_added_schema = new_id

    def set_location(self, update: dict[str, Any], where: str) -> None:
        location = _str(update.get("location"), f"{where}.location").rstrip("/")
        if not location:
            raise _bad(f"{where}.location: Invalid location: empty")
        self.metadata["location"] = location

    def set_properties(self, update: dict[str, Any], where: str) -> None:
        self.metadata["properties"].update(_properties(update.get("updates"), f"{where}.updates"))

    def remove_properties(self, update: dict[str, Any], where: str) -> None:
        removals = update.get("removals")
        if not isinstance(removals, list) or not all(isinstance(key, str) for key in removals):
            raise _bad(f"{where}.removals is required and must be a list of strings")
        for key in removals:
            self.metadata["properties"].pop(key, None)

    def add_view_version(self, update: dict[str, Any], where: str) -> None:
        version = read_version(update.get("view-version"), f"{where}.view-version")
        versions = self.metadata["versions"]
        new_id = version["version-id"]
        for known in versions:
            if _same_version(known, version):
                new_id = known["version-id"]
                break
            if known["version-id"] >= new_id:
                new_id = known["version-id"] + 1
        if any(known["version-id"] == new_id for known in versions):
            self.last_added_version = new_id if new_id in self.added_versions else None
            return
        version["version-id"] = new_id
        if version["schema-id"] == LAST_ADDED:
            if self.last_added_schema is None:
                raise _bad("Cannot set last added schema: no schema has been added")
            version["schema-id"] = self.last_added_schema
        if not any(schema["schema-id"] == version["schema-id"] for schema in self.metadata["schemas"]):
            raise _bad(f"Cannot add version with unknown schema: {version['schema-id']}")
        seen: set[str] = set()
        for dialect in _dialects(version):
            if dialect in seen:
                raise _bad(f"Invalid view version: Cannot add multiple queries for dialect {dialect}")
            seen.add(dialect)
        versions.append(version)
        self.added_versions.add(new_id)
        self.last_added_version = new_id

    def set_current_view_version(self, update: dict[str, Any], where: str) -> None:
        version_id = _int(update.get("view-version-id"), f"{where}.view-version-id")
        if version_id == LAST_ADDED:
            if self.last_added_version is None:
                raise _bad("Cannot set last version id: no current version id has been set")
            version_id = self.last_added_version
        if version_id == self.metadata["current-version-id"]:
            return
        version = _version(self.metadata, version_id)
        if version is None:
            raise _bad(f"Cannot set current version to unknown version: {version_id}")
        self.metadata["current-version-id"] = version_id
        # A version added by this commit keeps its own time; one made current again is current now.
        when = version["timestamp-ms"] if version_id in self.added_versions else self.now_ms
        self.history_entry = {"timestamp-ms": when, "version-id": version_id}

    # -- the result
    def build(self) -> dict[str, Any]:
        metadata = self.metadata
        if not metadata.get("location"):
            raise _bad("Invalid location: null")
        if not metadata["versions"]:
            raise _bad("Invalid view: no versions were added")
        current = current_version(metadata)
        if self.history_entry is not None:
            metadata["version-log"].append(self.history_entry)
        allowed = metadata["properties"].get(REPLACE_DROP_DIALECT_ALLOWED, "false").strip().lower() == "true"
        if self.previous is not None and not allowed:
            before, after = set(_dialects(self.previous)), set(_dialects(current))
            if not before <= after:
                raise _bad(f"Cannot replace view due to loss of view dialects ({REPLACE_DROP_DIALECT_ALLOWED}=false):\n"
                           f"Previous dialects: {sorted(before)}\nNew dialects: {sorted(after)}")
        text = metadata["properties"].get(VERSION_HISTORY_SIZE, str(VERSION_HISTORY_SIZE_DEFAULT))
        try:
            history_size = int(text)
        except ValueError:
            raise _bad(f"{VERSION_HISTORY_SIZE} must be an integer, not {text[:32]!r}") from None
        if history_size <= 0:
            raise _bad(f"{VERSION_HISTORY_SIZE} must be positive but was {history_size}")
        keep = max(len(self.added_versions | {metadata["current-version-id"]}), history_size)
        if len(metadata["versions"]) > keep:
            _expire(metadata, keep)
        return metadata


_ACTIONS = {"assign-uuid": _Builder.assign_uuid, "upgrade-format-version": _Builder.upgrade_format_version,
            "add-schema": _Builder.add_schema, "set-location": _Builder.set_location,
            "set-properties": _Builder.set_properties, "remove-properties": _Builder.remove_properties,
            "add-view-version": _Builder.add_view_version,
            "set-current-view-version": _Builder.set_current_view_version}


def _same_schema(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Java's Schema.sameSchema: the same struct and identifier fields, whatever the ids."""
    return (one["fields"] == other["fields"]
            and sorted(one.get("identifier-field-ids") or []) == sorted(other.get("identifier-field-ids") or []))


def _same_version(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """Java's sameViewVersion: would behave the same, whatever the id, time and operation."""
    return all(one.get(key) == other.get(key)
               for key in ("summary", "representations", "default-catalog", "default-namespace", "schema-id"))


def _expire(metadata: dict[str, Any], keep: int) -> None:
    """Keep the current version and the newest others up to ``keep``; the log loses every entry
    up to the last one of a version no longer kept (Java's expireVersions / updateHistory)."""
    current = metadata["current-version-id"]
    newest = sorted((v["version-id"] for v in metadata["versions"] if v["version-id"] != current), reverse=True)
    kept = {current, *newest[:keep - 1]}
    metadata["versions"] = [v for v in metadata["versions"] if v["version-id"] in kept]
    log: list[dict[str, Any]] = []
    for entry in metadata["version-log"]:
        log = [*log, entry] if entry["version-id"] in kept else []
    metadata["version-log"] = log


def _version(metadata: dict[str, Any], version_id: int) -> Optional[dict[str, Any]]:
    return next((v for v in metadata["versions"] if v["version-id"] == version_id), None)


def current_version(metadata: dict[str, Any]) -> dict[str, Any]:
    """The current ViewVersion (InvalidInputException if the metadata names none)."""
    version = _version(metadata, metadata["current-version-id"])
    if version is None:
        known = sorted(v["version-id"] for v in metadata["versions"])
        raise _bad(f"Cannot find current version {metadata['current-version-id']} in view versions: {known}")
    return version


def current_schema(metadata: dict[str, Any]) -> dict[str, Any]:
    """The current version's schema."""
    schema_id = current_version(metadata)["schema-id"]
    schema = next((s for s in metadata["schemas"] if s["schema-id"] == schema_id), None)
    if schema is None:
        known = sorted(s["schema-id"] for s in metadata["schemas"])
        raise _bad(f"Cannot find current schema with id {schema_id} in schemas: {known}")
    return schema


# ------------------------------------------------------------------------------ metadata files
def encode(metadata: dict[str, Any]) -> str:
    """A view metadata file's text (plain JSON: ``.metadata.json``)."""
    return json.dumps(metadata, separators=(",", ":"))


def decode(text: bytes, where: str) -> dict[str, Any]:
    """A view metadata file read back (plain or gzip, as Iceberg writes ``.gz.metadata.json``),
    checked as far as loading and updating it reads; InvalidInputException if it is not one."""
    if text[:2] == b"\x1f\x8b":
        try:
            text = gzip.decompress(text)
        except (OSError, EOFError):
            raise _bad(f"The view metadata file {where} is not valid gzip") from None
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError):
        metadata = None
    if not isinstance(metadata, dict) or metadata.get("format-version") != FORMAT_VERSION:
        raise _bad(f"The file {where} is not Iceberg view metadata of format version {FORMAT_VERSION}")
    try:
        for key in ("view-uuid", "location"):
            _str(metadata.get(key), key)
        _int(metadata.get("current-version-id"), "current-version-id")
        metadata["schemas"] = [read_schema(s, f"schemas[{i}]") for i, s in enumerate(_list(metadata, "schemas"))]
        metadata["versions"] = [read_version(v, f"versions[{i}]") for i, v in enumerate(_list(metadata, "versions"))]
        for i, entry in enumerate(_list(metadata, "version-log")):
            for key in ("timestamp-ms", "version-id"):
                _int(entry.get(key) if isinstance(entry, dict) else None, f"version-log[{i}].{key}")
        metadata["properties"] = _string_map(metadata.get("properties"), "properties")
        current_schema(metadata)
    except InvalidInputException as error:
        raise _bad(f"The view metadata file {where} is not valid: {error.message}") from None
    except RecursionError:
        raise _bad(f"The view metadata file {where} nests its types too deeply") from None
    return metadata


def _list(metadata: dict[str, Any], key: str) -> list[Any]:
    value = metadata.get(key)
    if not isinstance(value, list):
        raise _bad(f"{key} is required and must be a list")
    return value


# ------------------------------------------------------------------------------ the Glue form
def glue_view_input(base: dict[str, Any], name: str, metadata: dict[str, Any], metadata_location: str,
                    previous_location: Optional[str], base_properties: dict[str, str]) -> dict[str, Any]:
    """The TableInput of a view: ``base`` (the stored Table being replaced, {} for a new view) with
    what the metadata dictates. Parameters keep what others wrote (but the properties the view
    had, now replaced by its current ones, and Paimon's state of an older definition)."""
    version, schema = current_version(metadata), current_schema(metadata)
    reps = version["representations"]
    details = {rep.get("Dialect"): {k: v for k, v in rep.items() if k in ("DialectVersion", "ValidationConnection")}
               for rep in (base.get("ViewDefinition") or {}).get("Representations") or [] if isinstance(rep, dict)}
    engine = (version["summary"].get("engine-name") or "").lower()
    glue_reps: list[dict[str, Any]] = []
    for rep in reps:
        dialect = GLUE_DIALECTS.get(rep["dialect"].lower())
        if dialect is None or any(r["Dialect"] == dialect for r in glue_reps):
            continue
        entry: dict[str, Any] = {"Dialect": dialect, **details.get(dialect, {}), "ViewOriginalText": rep["sql"],
                                 "ViewExpandedText": rep["sql"]}
        if engine == rep["dialect"].lower() and 1 <= len(version["summary"].get("engine-version") or "") <= 255:
            entry["DialectVersion"] = version["summary"]["engine-version"]
        glue_reps.append(entry)
    kept = {k: v for k, v in (base.get("Parameters") or {}).items()
            if k not in base_properties and k not in RESERVED_PARAMETERS}
    parameters = {**kept, **metadata["properties"], TABLE_TYPE: ICEBERG_VIEW, METADATA_LOCATION: metadata_location}
    if previous_location:
        parameters[PREVIOUS_METADATA_LOCATION] = previous_location
    storage = {**(base.get("StorageDescriptor") or {}),
               "Columns": glue_columns([schema], schema["schema-id"]), "Location": metadata["location"]}
    table: dict[str, Any] = {**base, "Name": name, "TableType": VIRTUAL_VIEW, "Parameters": parameters,
                             "StorageDescriptor": storage, "PartitionKeys": []}
    sql = reps[0]["sql"] if reps else ""
    table["ViewOriginalText"] = table["ViewExpandedText"] = sql
    definition = {k: v for k, v in (base.get("ViewDefinition") or {}).items() if k != "Representations"}
    if glue_reps:
        table["ViewDefinition"] = {**definition, "Representations": glue_reps}
    else:
        table.pop("ViewDefinition", None)
    comment = metadata["properties"].get(COMMENT)
    if comment is not None and len(comment) <= _MAX_DESCRIPTION:
        table["Description"] = comment
    return table


def is_iceberg_view(doc: dict[str, Any]) -> bool:
    """Whether a Glue view keeps Iceberg view metadata in a file (else ``from_glue`` reads it)."""
    parameters = doc.get("Parameters") or {}
    return (str(parameters.get(TABLE_TYPE) or "").upper() == ICEBERG_VIEW
            and bool(parameters.get(METADATA_LOCATION)))


def from_glue(doc: dict[str, Any], namespace: str, view_uuid: str, version: int) -> dict[str, Any]:
    """The Iceberg view metadata of a Glue view without a metadata file (made by a Glue client,
    Athena or Paimon): one version, numbered after the Glue table's version (so it changes when
    the view does), of the Glue definition: its Representations, else its ViewOriginalText (a
    Presto view's SQL as ``trino``, other text as ``hive``), its columns and Parameters."""
    columns, names = [], set()
    for column in (doc.get("StorageDescriptor") or {}).get("Columns") or []:
        name = str(column.get("Name") or "") if isinstance(column, dict) else ""
        if name and name.lower() not in names:  # a nameless or repeated column is no field
            names.add(name.lower())
            columns.append(_readable({**column, "Name": name}))
    schema = schema_from_columns(columns, "StorageDescriptor.Columns")
    reps = [{"type": "sql", "sql": str(rep.get("ViewOriginalText") or rep.get("ViewExpandedText") or ""),
             "dialect": str(rep.get("Dialect") or "").lower()}
            for rep in (doc.get("ViewDefinition") or {}).get("Representations") or [] if isinstance(rep, dict)]
    text = str(doc.get("ViewOriginalText") or doc.get("ViewExpandedText") or "")
    if not reps and text:
        reps = [_text_representation(text)]
    when = int(round(float(doc.get("UpdateTime") or doc.get("CreateTime") or 0) * 1000))
    version_id = version + 1
    properties = {k: v for k, v in (doc.get("Parameters") or {}).items()
                  if k not in RESERVED_PARAMETERS and isinstance(v, str)}
    if doc.get("Description") and COMMENT not in properties:
        properties[COMMENT] = doc["Description"]
    return {"view-uuid": view_uuid, "format-version": FORMAT_VERSION,
            "location": str((doc.get("StorageDescriptor") or {}).get("Location") or ""),
            "schemas": [schema], "current-version-id": version_id,
            "versions": [{"version-id": version_id, "timestamp-ms": when, "schema-id": 0, "summary": {},
                          "representations": reps, "default-namespace": [namespace]}],
            "version-log": [{"timestamp-ms": when, "version-id": version_id}], "properties": properties}


def _readable(column: dict[str, Any]) -> dict[str, Any]:
    """A Glue column whose type Iceberg has no counterpart for reads as a string column: a view's
    column types are informational (its query defines them)."""
    try:
        schema_from_columns([column], "column")
        return column
    except InvalidInputException:
        return {**column, "Type": "string"}


def _text_representation(text: str) -> dict[str, str]:
    start, end = _PRESTO_VIEW
    stripped = text.strip()
    if stripped.startswith(start) and stripped.endswith(end):
        try:
            encoded = stripped[len(start):-len(end)].strip()
            sql = json.loads(base64.b64decode(encoded))["originalSql"]
            if isinstance(sql, str):
                return {"type": "sql", "sql": sql, "dialect": "trino"}
        except (ValueError, KeyError, TypeError):
            pass  # not a Presto view after all: the text as it is
    return {"type": "sql", "sql": text, "dialect": _GLUE_ONLY_DIALECT}


def uid_uuid(uid: str) -> str:
    """A Glue table's uid as a view UUID (a view made here gets its table's uid as its UUID)."""
    return str(uuid.UUID(hex=uid))
