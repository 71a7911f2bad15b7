"""Iceberg tables created and changed through Glue's OpenTableFormatInput and
UpdateOpenTableFormatInput, as AWS serves them: the catalog writes the table's metadata file
itself and keeps the Glue table pointing at it (``table_type=ICEBERG``, ``metadata_location``).

Order of writes, so that nothing is half-done: the new metadata file first (under a fresh uuid,
so no reader finds it before the table points at it), then the table item in one atomic store
write (CreateTable's, or UpdateTable's under the table's VersionId). If the table write is
refused (one of ``NOT_WRITTEN``, raised before anything is stored) the file is deleted again;
any other failure may come after the write landed (UpdateTable's search postings, column
epochs, statistics follow it), so the file is left: a crash, or an error that leaves it
unreferenced, makes an unreferenced file, which no reader ever opens (Iceberg's own "orphan
file"), while deleting a file the table points at would break the table.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Optional

from chalicelib.clock import now as clock_now
from chalicelib.context import RequestContext
from chalicelib.domain.iceberg import metadata as iceberg_metadata
from chalicelib.domain.iceberg.metadata import ICEBERG, METADATA_LOCATION, PREVIOUS_METADATA_LOCATION, TABLE_TYPE
from chalicelib.domain.iceberg.types import glue_columns, read_schema, schema_from_columns
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ResourceNumberLimitExceededException, ServiceError,
                               table_already_exists)
from chalicelib.service import tables
from chalicelib.service.lookups import fold, require_database
from chalicelib.service.table_versions import parse_version
from chalicelib.store import catalog, warehouse

log = logging.getLogger(__name__)

_CREATE = "OpenTableFormatInput.IcebergInput"
_UPDATE = "UpdateOpenTableFormatInput.UpdateIcebergInput.UpdateIcebergTableInput"
_SUPPORTED_VERSION = "2"
# The refusals tables.create_table / update_table raise only before their store write (a check
# or a failed write condition): after one of these no table points at the new file.
NOT_WRITTEN = (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                InvalidInputException, ResourceNumberLimitExceededException)


def create_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                 table_input: Optional[dict[str, Any]], iceberg_input: dict[str, Any],
                 partition_indexes: Optional[list[dict[str, Any]]] = None,
                 transaction_id: Optional[str] = None) -> None:
    """Create an Iceberg table: write its first metadata file (format version 2) under the
    table's location and create the Glue table pointing at it.

    The schema, partition spec, sort order and properties come from CreateIcebergTableInput;
    without it, from ``table_input``'s columns (Hive types) and partition keys (identity
    partitions), at its StorageDescriptor.Location or ``<database LocationUri>/<name>``.
    InvalidInputException for a bad Iceberg definition or an unusable location; otherwise as
    ``tables.create_table``.
    """
    database = require_database(catalog_key, database_name)
    version = iceberg_input.get("Version", _SUPPORTED_VERSION)
    if version != _SUPPORTED_VERSION:
        raise InvalidInputException(f"{_CREATE}.Version: Iceberg format version {version!r} is not supported; "
                                    f"tables are created at format version {_SUPPORTED_VERSION}")
    given = table_input or {}
    create = iceberg_input.get("CreateIcebergTableInput")
    if create is not None:
        where = f"{_CREATE}.CreateIcebergTableInput"
        location = create["Location"]
        schema = read_schema(create["Schema"], f"{where}.Schema")
        spec, order, properties = create.get("PartitionSpec"), create.get("WriteOrder"), create.get("Properties") or {}
        location_member = f"{where}.Location"
    else:
        where = "TableInput"
        storage = given.get("StorageDescriptor") or {}
        keys = given.get("PartitionKeys") or []
        schema = schema_from_columns([*(storage.get("Columns") or []), *keys], "TableInput.StorageDescriptor.Columns")
        by_name = {f["name"]: f["id"] for f in schema["fields"]}
        spec = {"Fields": [{"SourceId": by_name[k["Name"]], "Transform": "identity", "Name": k["Name"]}
                           for k in keys]}
        order, properties = None, {}
        database_location = catalog.load(database).get("LocationUri") or ""
        # The name as a directory name: itself when plain, else made safe (and unique).
        location = storage.get("Location") or (
            f"{database_location.rstrip('/')}/{warehouse.path_segment(fold(name), uuid.uuid4().hex)}"
            if database_location else "")
        location_member = "TableInput.StorageDescriptor.Location"
    check_location(location, location_member)
    metadata = iceberg_metadata.new_table_metadata(location, schema, spec, order, properties, str(uuid.uuid4()),
                                                   now_ms(), where)
    location_uri = iceberg_metadata.metadata_file(metadata["location"], 0, str(uuid.uuid4()))
    doc_input = glue_table_input(given, name, metadata, location_uri, None)
    if not transaction_id and catalog.get_table(database.uid, fold(name)) is not None:
        raise table_already_exists()  # before writing a file the create would only have to delete
    write_metadata(location_uri, metadata, location_member)
    try:
        tables.create_table(ctx, catalog_key, database_name, doc_input, partition_indexes, transaction_id)
    except NOT_WRITTEN:
        forget_metadata(location_uri)
        raise


def update_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                 table_input: Optional[dict[str, Any]], update_input: dict[str, Any],
                 version_id: Optional[str] = None, archive: bool = True,
                 transaction_id: Optional[str] = None) -> None:
    """Apply Glue's UpdateIcebergTableInput to an Iceberg table: write its next metadata file
    and move ``metadata_location`` to it (the old one kept as ``previous_metadata_location``)
    under the table's VersionId, the one read here or the caller's: of racing updates one wins,
    the others get ConcurrentModificationException. InvalidInputException if the table is not
    an Iceberg table or an update is bad; otherwise as ``tables.update_table``.
    """
    doc, version = tables.get_table(ctx, catalog_key, database_name, name, transaction_id)
    if version_id is not None and parse_version(version_id) != version:
        raise ConcurrentModificationException("Update table failed due to concurrent modifications.")
    parameters = doc.get("Parameters") or {}
    current_location = parameters.get(METADATA_LOCATION)
    if (parameters.get(TABLE_TYPE) or "").upper() != ICEBERG or not current_location:
        raise InvalidInputException(f"UpdateOpenTableFormatInput: table {doc['Name']} is not an Iceberg table "
                                    f"(it has no Parameters {TABLE_TYPE}=ICEBERG and {METADATA_LOCATION})")
    try:
        text = warehouse.get(current_location)
    except ServiceError:  # outside the roots the server may use, or refused by S3: said as such
        raise
    except Exception as error:  # an unreadable location (bucket gone, no access): the caller's to fix
        raise InvalidInputException(f"cannot read the table's metadata file {current_location}: {error}") from None
    if text is None:
        raise InvalidInputException(f"the table's metadata file {current_location} does not exist")
    current = iceberg_metadata.decode(text, current_location)
    updated = iceberg_metadata.apply_updates(current, current_location, update_input["Updates"], now_ms(), _UPDATE)
    check_location(updated["location"], f"{_UPDATE}.Updates.Location")
    number = iceberg_metadata.metadata_number(current_location) + 1
    location_uri = iceberg_metadata.metadata_file(updated["location"], number, str(uuid.uuid4()))
    # Without a TableInput the stored Table is kept: tables.table_document takes only its
    # TableInput members, dropping those the catalog sets itself (CreateTime, VersionId, ...).
    base = table_input if table_input is not None else doc
    doc_input = glue_table_input(base, name, updated, location_uri, current_location)
    write_metadata(location_uri, updated, f"{_UPDATE}.Updates.Location")
    try:
        tables.update_table(ctx, catalog_key, database_name, doc_input, str(version), archive, transaction_id)
    except NOT_WRITTEN:
        forget_metadata(location_uri)
        raise


def glue_table_input(given: dict[str, Any], name: str, metadata: dict[str, Any], location_uri: str,
                 previous: Optional[str]) -> dict[str, Any]:
    """The TableInput stored for an Iceberg table: the caller's members, with the columns,
    location and Iceberg parameters the metadata file dictates (as pyiceberg's GlueCatalog
    writes them, so both produce the same Glue table)."""
    parameters = {**(given.get("Parameters") or {}), TABLE_TYPE: ICEBERG, METADATA_LOCATION: location_uri}
    if previous is not None:
        parameters[PREVIOUS_METADATA_LOCATION] = previous
    storage = {**(given.get("StorageDescriptor") or {}),
               "Columns": glue_columns(metadata["schemas"], metadata["current-schema-id"]),
               "Location": metadata["location"]}
    return {**given, "Name": name, "TableType": given.get("TableType") or "EXTERNAL_TABLE",
            "Parameters": parameters, "StorageDescriptor": storage, "PartitionKeys": []}


def check_location(location: str, member: str) -> None:
    if not location:
        raise InvalidInputException(f"{member} is required: an Iceberg table needs a location (give one, or "
                                    "create the database with a LocationUri)")
    if not warehouse.serves(location) or location.split("://", 1)[1].strip("/") == "":
        raise InvalidInputException(f"{member}: {location!r} is not a location this catalog can write "
                                    "(file:///path or s3://bucket/prefix)")
    try:
        warehouse.check_caller_location(location)
    except ServiceError as error:
        error.message = f"{member}: {error.message}"
        raise


# The snapshots' JSON texts this process wrote into metadata files (see SnapshotTexts): about
# 500 bytes each, so at most ~10 MB.
_SNAPSHOT_TEXTS = iceberg_metadata.SnapshotTexts(20_000)


def write_metadata(uri: str, metadata: dict[str, Any], member: str) -> int:
    """Write a metadata file; its size in bytes."""
    return len(write_metadata_text(uri, metadata, member))


def write_metadata_text(uri: str, metadata: dict[str, Any], member: str) -> bytes:
    """Write a metadata file; its text (UTF-8): the metadata's JSON, for an answer to splice in."""
    text = iceberg_metadata.encode_bytes(metadata, _SNAPSHOT_TEXTS)
    try:
        warehouse.put(uri, text)
    except ServiceError as error:  # outside the roots, or refused by S3: said as such, naming the member
        error.message = f"{member}: {error.message}"
        raise
    except Exception as error:  # no such bucket, no access, a read-only path: the location is the caller's
        raise InvalidInputException(f"{member}: cannot write the Iceberg metadata file {uri}: {error}") from None
    return text


def forget_metadata(uri: str) -> None:
    """Delete a metadata file no table points at (the table write was refused); a failure to is
    only logged: the file is unreferenced either way."""
    try:
        warehouse.delete(uri)
    except Exception:
        log.warning("could not delete unreferenced Iceberg metadata file %s", uri, exc_info=True)


def now_ms() -> int:
    return int(clock_now() * 1000)

