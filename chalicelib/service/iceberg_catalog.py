"""Iceberg REST tables: an Iceberg table IS a Glue table with ``table_type=ICEBERG`` and
``metadata_location`` (what pyiceberg's GlueCatalog, Glue's OpenTableFormatInput and Glue's own
Iceberg endpoint all read and write), so a table committed here is the one every door sees.

A commit is Iceberg's optimistic protocol on Glue's VersionId lock: read the table (its version
and current metadata file), check the request's requirements against that metadata, apply its
updates (``domain.iceberg.table_commits``), write the next metadata file under a fresh name, then
move the table to it with an UpdateTable conditional on the version read. Of racing committers
exactly one moves the table; the others get ConcurrentModificationException (the wire's 409
CommitFailedException) and their file is deleted again (nothing references it either way).
Several tables commit together through one Lake Formation transaction: all of them or none.

Every entry point checks the caller's Lake Formation permissions under the Glue action it is
(through ``service.tables``, which checks before any read or write): LoadTable is GetTable,
a commit UpdateTable, a create CreateTable, a drop DeleteTable.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from chalicelib.domain.iceberg import metadata as iceberg_metadata
from chalicelib.domain.iceberg import table_commits
from chalicelib.domain.iceberg.metadata import ICEBERG, METADATA_LOCATION, TABLE_TYPE
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError, TransactionCanceledException)
from chalicelib.service import access, iceberg_files, iceberg_tables, tables, transactions
from chalicelib.service.iceberg_namespaces import not_found as namespace_not_found
from chalicelib.service.lookups import fold, require_database
from chalicelib.store import catalog, warehouse

log = logging.getLogger(__name__)

TABLE = "TABLE"  # the resource type the wire answers as NoSuchTableException
VIRTUAL_VIEW = "VIRTUAL_VIEW"
_MEMBER = "CommitTableRequest"


@dataclass
class IcebergTable:
    """A table as LoadTableResult shows it (``metadata_location`` None: staged, not yet created)."""

    metadata_location: Optional[str]
    metadata: dict[str, Any]
    # The metadata's JSON text when the service has it at hand (a commit's, as written to its
    # file): an answer splices it in rather than encoding the metadata again (500 KB at 1,000
    # snapshots: ~2 ms a commit).
    text: Optional[bytes] = None


@dataclass
class TableChange:
    """One table's part of a multi-table commit."""

    namespace: str
    name: str
    requirements: list[dict[str, Any]]
    updates: list[dict[str, Any]]


def table_not_found(namespace: str, name: str) -> EntityNotFoundException:
    """The 404 of a table, in Iceberg Java's words."""
    return EntityNotFoundException(f"Table does not exist: {fold(namespace)}.{fold(name)}", TABLE,
                                   f"{fold(namespace)}.{fold(name)}")


def _not_found_as(namespace: str, name: Optional[str], call: Callable[[], Any]) -> Any:
    """``call()``, its Glue EntityNotFoundException said as the namespace's or the table's 404."""
    try:
        return call()
    except EntityNotFoundException as error:
        if error.resource_type in ("NAMESPACE", TABLE, "VIEW"):
            raise
        if name is None or error.message.startswith("Database "):
            raise namespace_not_found(fold(namespace)) from None
        raise table_not_found(namespace, name) from None


def _is_iceberg(doc: dict[str, Any]) -> bool:
    parameters = doc.get("Parameters") or {}
    return (parameters.get(TABLE_TYPE) or "").upper() == ICEBERG and bool(parameters.get(METADATA_LOCATION))


# ---------------------------------------------------------------------------------- reads
def list_tables(ctx: Any, catalog_key: str, namespace: str, after: Optional[str],
                limit: int) -> tuple[list[str], Optional[str]]:
    """Up to ``limit`` table names of a namespace after ``after`` that the caller may see (every
    Glue table but views, as Glue's endpoint lists them), and the position to resume after."""
    listing = _not_found_as(namespace, None, lambda: tables.list_tables(ctx, catalog_key, namespace))

    def render(doc: dict[str, Any], version: int) -> Optional[str]:
        return None if doc.get("TableType") == VIRTUAL_VIEW else str(doc["Name"])

    return listing.page(after, limit, render)


def _read(ctx: Any, catalog_key: str, namespace: str, name: str,
          transaction_id: Optional[str] = None) -> tuple[dict[str, Any], int, str, dict[str, Any]]:
    """(Glue table, version, metadata location, metadata) of an Iceberg table."""
    doc, version = _not_found_as(namespace, name,
                                 lambda: tables.get_table(ctx, catalog_key, namespace, name, transaction_id))
    if doc.get("TableType") == VIRTUAL_VIEW:
        raise table_not_found(namespace, name)  # a view is no table to Iceberg
    if not _is_iceberg(doc):
        raise InvalidInputException(f"Table {fold(namespace)}.{fold(name)} is not an Iceberg table (its Glue "
                                    f"Parameters have no {TABLE_TYPE}=ICEBERG and {METADATA_LOCATION})")
    location = doc["Parameters"][METADATA_LOCATION]
    return doc, version, location, _current_metadata(location)


# ---------------------------------------------------------------------------------- metadata files
# The current metadata files this process read or wrote, decoded, by location: a metadata file is
# never rewritten (each commit writes a new one under a fresh name, as Iceberg's writers do), so
# the table's metadata_location names its content for good and the next commit or load on this
# process need not read and decode it again (a table of 1,000 snapshots: 500 KB of JSON). Bounded
# by the files' total size. The dicts are shared: no caller changes one (the commit's updates
# work on a copy, domain.iceberg.table_commits).
_FILES: OrderedDict[str, tuple[dict[str, Any], int]] = OrderedDict()
_FILES_MAX_BYTES = 8 * 1024 * 1024
_files_bytes = 0
_files_lock = threading.Lock()


def _remember(location: str, metadata: dict[str, Any], size: int, replaces: Optional[str] = None) -> None:
    """Keep a table's current metadata (``replaces``: the file it succeeds, no table's current one
    any more, let go at once rather than aged out: a hot table would otherwise fill the cache with
    its own past versions, which the garbage collector then walks on every full collection)."""
    global _files_bytes
    with _files_lock:
        if replaces is not None and replaces in _FILES:
            _files_bytes -= _FILES.pop(replaces)[1]
        if location in _FILES or size > _FILES_MAX_BYTES // 4:
            return
        _FILES[location] = (metadata, size)
        _files_bytes += size
        while _files_bytes > _FILES_MAX_BYTES:
            _, (_, dropped) = _FILES.popitem(last=False)
            _files_bytes -= dropped


def _current_metadata(location: str) -> dict[str, Any]:
    """The metadata at ``location`` (a table's current metadata file)."""
    with _files_lock:
        found = _FILES.get(location)
        if found is not None:
            _FILES.move_to_end(location)
            return found[0]
    text = _read_file(location)
    metadata = iceberg_metadata.decode(text, location)
    _remember(location, metadata, len(text))
    return metadata


def read_metadata(location: str) -> dict[str, Any]:
    """A metadata file, read back and checked (InvalidInputException when it cannot be used)."""
    return iceberg_metadata.decode(_read_file(location), location)


def _read_file(location: str) -> bytes:
    try:
        text = warehouse.get(location)
    except ServiceError:  # outside the roots the server may use, or refused by S3: said as such
        raise
    except Exception as error:  # an unreadable location: the table's writer's to fix
        raise InvalidInputException(f"cannot read the table's metadata file {location}: {error}") from None
    if text is None:
        raise InvalidInputException(f"the table's metadata file {location} does not exist")
    return text


def load_table(ctx: Any, catalog_key: str, namespace: str, name: str, snapshots: str = "all") -> IcebergTable:
    """The table's current metadata (``snapshots="refs"``: only the snapshots its refs name)."""
    _, _, location, metadata = _read(ctx, catalog_key, namespace, name)
    if snapshots == "refs":
        named = {ref["snapshot-id"] for ref in (metadata.get("refs") or {}).values()}
        metadata = {**metadata, "snapshots": [s for s in metadata.get("snapshots") or []
                                              if s.get("snapshot-id") in named]}
    return IcebergTable(location, table_commits.load_result(metadata))


def table_exists(ctx: Any, catalog_key: str, namespace: str, name: str) -> bool:
    """Whether the namespace holds a table (not a view) of that name."""
    try:
        doc, _ = _not_found_as(namespace, name, lambda: tables.get_table(ctx, catalog_key, namespace, name))
    except EntityNotFoundException:
        return False
    return doc.get("TableType") != VIRTUAL_VIEW


# ---------------------------------------------------------------------------------- creates
def _default_location(catalog_key: str, namespace: str, name: str) -> str:
    """Where a table created without a location goes: under its namespace's LocationUri (as Glue
    places it), else in a directory of its own in the warehouse's managed area, which the server
    tags as this catalog's (``service.iceberg_files``): a dropped table's files never mix with a
    new one's, and a purge can prove the directory its to delete."""
    database = _not_found_as(namespace, None, lambda: require_database(catalog_key, namespace))
    database_location = (catalog.load(database).get("LocationUri") or "").rstrip("/")
    if database_location:
        return f"{database_location}/{warehouse.path_segment(fold(name), uuid.uuid4().hex)}"
    return iceberg_files.managed_directory(catalog_key, database, name)


def create_table(ctx: Any, catalog_key: str, namespace: str, request: dict[str, Any],
                 stage: bool = False) -> IcebergTable:
    """Create a table from a CreateTableRequest: its first metadata file, then the Glue table
    pointing at it (one atomic store write). ``stage``: only the metadata, nothing written (a
    staged create, committed later with assert-create). AlreadyExistsException if the name is
    taken; EntityNotFoundException (NAMESPACE) if the namespace does not exist."""
    name = fold(request["name"])
    access.require("CreateTable", catalog_key, namespace)
    database = _not_found_as(namespace, None, lambda: require_database(catalog_key, namespace))
    if catalog.get_table(database.uid, name) is not None:
        raise AlreadyExistsException(f"Table already exists: {database.name}.{name}")
    location = request.get("location") or _default_location(catalog_key, namespace, name)
    if request.get("location"):
        iceberg_tables.check_location(location, "location")
    metadata = table_commits.new_table_metadata(request, location.rstrip("/"), str(uuid.uuid4()),
                                                iceberg_tables.now_ms())
    if stage:
        return IcebergTable(None, metadata)
    return _create(ctx, catalog_key, namespace, name, metadata)


def _create(ctx: Any, catalog_key: str, namespace: str, name: str, metadata: dict[str, Any],
            transaction_id: Optional[str] = None) -> IcebergTable:
    """Write metadata file 0 and create the Glue table pointing at it."""
    location_uri = iceberg_files.metadata_file(catalog_key, metadata["location"], 0)
    doc_input = iceberg_tables.glue_table_input({}, name, metadata, location_uri, None)
    iceberg_tables.write_metadata(location_uri, metadata, "location")
    try:
        _not_found_as(namespace, None, lambda: tables.create_table(ctx, catalog_key, namespace, doc_input,
                                                                   None, transaction_id))
    except AlreadyExistsException:
        iceberg_tables.forget_metadata(location_uri)
        raise AlreadyExistsException(f"Table already exists: {fold(namespace)}.{name}") from None
    except iceberg_tables.NOT_WRITTEN:
        iceberg_tables.forget_metadata(location_uri)
        raise
    return IcebergTable(location_uri, metadata)


def register_table(ctx: Any, catalog_key: str, namespace: str, name: str, metadata_location: str,
                   overwrite: bool = False) -> IcebergTable:
    """Register an existing metadata file as a table (``overwrite``: move an existing Iceberg table
    of that name to it). The file must lie where the server may read, and its table location
    where a caller may place a table; in the warehouse's managed area, only in a directory the
    server made for a table of this catalog (a dropped one's, say: ``service.iceberg_files``),
    never another catalog's. A taken name is AlreadyExistsException before the file is looked
    at, as the spec's 409 and clients expect."""
    name = fold(name)
    if not overwrite:
        access.require("CreateTable", catalog_key, namespace)
        if table_exists(ctx, catalog_key, namespace, name):
            raise AlreadyExistsException(f"Table already exists: {fold(namespace)}.{name}")
    managed = warehouse.in_managed_area(metadata_location)
    if not managed:
        iceberg_tables.check_location(metadata_location, "metadata-location")
    metadata = read_metadata(metadata_location)
    location = str(metadata["location"]).rstrip("/")
    if managed and not (iceberg_files.is_managed_directory(catalog_key, location)
                        and metadata_location.startswith(location + "/")):
        # Another catalog's managed table, or no table the server placed: not the caller's to adopt.
        iceberg_tables.check_location(metadata_location, "metadata-location")
    if not managed:
        iceberg_tables.check_location(location, "metadata-location's table location")
    doc_input = iceberg_tables.glue_table_input({}, name, metadata, metadata_location, None)
    if overwrite and table_exists(ctx, catalog_key, namespace, name):
        doc, version, current, _ = _read(ctx, catalog_key, namespace, name)
        doc_input = iceberg_tables.glue_table_input(doc, name, metadata, metadata_location, current)
        _not_found_as(namespace, name, lambda: tables.update_table(ctx, catalog_key, namespace, doc_input,
                                                                   str(version)))
        return IcebergTable(metadata_location, metadata)
    try:
        _not_found_as(namespace, None, lambda: tables.create_table(ctx, catalog_key, namespace, doc_input))
    except AlreadyExistsException:
        raise AlreadyExistsException(f"Table already exists: {fold(namespace)}.{name}") from None
    return IcebergTable(metadata_location, metadata)


# ---------------------------------------------------------------------------------- commits
def _is_create(requirements: Iterable[dict[str, Any]]) -> bool:
    return any(isinstance(r, dict) and r.get("type") == "assert-create" for r in requirements)


def commit_table(ctx: Any, catalog_key: str, namespace: str, name: str, requirements: list[dict[str, Any]],
                 updates: list[dict[str, Any]]) -> IcebergTable:
    """Apply a CommitTableRequest: the requirements hold against the current metadata, the
    updates make the next one, the table moves to it under the version read.
    ConcurrentModificationException (409) for a failed requirement or a lost race (nothing
    written); InvalidInputException (400) for a bad update; EntityNotFoundException (TABLE)."""
    if _is_create(requirements):
        return _commit_create(ctx, catalog_key, namespace, name, requirements, updates)
    doc, version, location, base = _read(ctx, catalog_key, namespace, name)
    table_commits.check_requirements(base, requirements)
    updated = table_commits.apply_updates(base, location, updates, iceberg_tables.now_ms())
    if updated == base:  # a commit that changes nothing writes nothing (as Iceberg Java answers it)
        return IcebergTable(location, base)
    new_location, text = _write_next(catalog_key, updated, base, location)
    try:
        _not_found_as(namespace, name, lambda: tables.update_table(
            ctx, catalog_key, namespace, iceberg_tables.glue_table_input(doc, fold(name), updated, new_location, location),
            str(version)))
    except ConcurrentModificationException:
        iceberg_tables.forget_metadata(new_location)
        raise ConcurrentModificationException(f"Commit failed: table {fold(namespace)}.{fold(name)} was changed "
                                              "by another commit; refresh and retry") from None
    except iceberg_tables.NOT_WRITTEN:
        iceberg_tables.forget_metadata(new_location)
        raise
    _remember(new_location, updated, len(text), replaces=location)
    return IcebergTable(new_location, updated, text)


def _write_next(catalog_key: str, updated: dict[str, Any], base: Optional[dict[str, Any]],
                base_location: Optional[str]) -> tuple[str, bytes]:
    """Write the next metadata file (numbered after the base's): where, and its text. A location the
    commit moves the table to is the caller's choice, checked as one (the table's own, perhaps
    the server's managed area, stays usable)."""
    if base is None or updated["location"] != base.get("location"):
        iceberg_tables.check_location(updated["location"], f"{_MEMBER}.updates (set-location)")
    number = iceberg_metadata.metadata_number(base_location) + 1 if base_location else 0
    new_location = iceberg_files.metadata_file(catalog_key, updated["location"], max(number, 0))
    return new_location, iceberg_tables.write_metadata_text(new_location, updated, f"{_MEMBER}.updates")


def _commit_create(ctx: Any, catalog_key: str, namespace: str, name: str, requirements: list[dict[str, Any]],
                   updates: list[dict[str, Any]], transaction_id: Optional[str] = None) -> IcebergTable:
    """A staged create's commit: the table must not exist (assert-create), its metadata is the
    updates applied to nothing."""
    access.require("CreateTable", catalog_key, namespace)
    database = _not_found_as(namespace, None, lambda: require_database(catalog_key, namespace))
    exists = catalog.get_table(database.uid, fold(name)) is not None
    table_commits.check_requirements({} if exists else None, requirements)
    metadata = table_commits.apply_updates(None, None, updates, iceberg_tables.now_ms())
    if not metadata.get("location"):
        metadata["location"] = _default_location(catalog_key, namespace, name)
    elif not iceberg_files.is_managed_directory(catalog_key, metadata["location"]):
        iceberg_tables.check_location(metadata["location"], f"{_MEMBER}.updates (set-location)")
    try:
        return _create(ctx, catalog_key, namespace, fold(name), metadata, transaction_id)
    except AlreadyExistsException:
        raise ConcurrentModificationException("Requirement failed: table already exists") from None


def commit_transaction(ctx: Any, catalog_key: str, changes: list[TableChange]) -> None:
    """Commit several tables at once: every change lands or none does. The changes are made in
    one Lake Formation transaction (each table read as the transaction sees it, its new
    metadata file written, its UpdateTable recorded), then the transaction commits; a failed
    requirement, a bad update or a racing commit anywhere cancels it and deletes the files."""
    if len({(fold(c.namespace), fold(c.name)) for c in changes}) != len(changes):
        raise InvalidInputException("CommitTransactionRequest.table-changes names a table twice")
    transaction = transactions.start(ctx)
    written: list[str] = []
    try:
        for change in changes:
            written.append(_commit_in(ctx, catalog_key, change, transaction.transaction_id))
    except BaseException:
        _cancel(ctx, transaction.transaction_id)
        _forget_all(written)
        raise
    try:
        status = transactions.commit_transaction(ctx, transaction.transaction_id)
    except TransactionCanceledException:
        _forget_all(written)  # aborted: none of its writes is visible, none ever will be
        raise ConcurrentModificationException("Commit failed: the transaction was aborted while committing; "
                                              "retry") from None
    except BaseException:
        if not _may_have_landed(ctx, transaction.transaction_id):
            _forget_all(written)
        raise
    if status not in ("COMMITTED", "COMMIT_IN_PROGRESS"):  # decided either way: in progress only finishes
        raise ConcurrentModificationException(f"Commit failed: the transaction ended {status}")


def _forget_all(locations: list[str]) -> None:
    for location in locations:
        iceberg_tables.forget_metadata(location)


def _may_have_landed(ctx: Any, transaction_id: str) -> bool:
    """Whether a commit that raised may still have made its writes visible: the files they point
    at must then stay (an unreferenced file is harmless; a referenced one deleted breaks a table)."""
    try:
        return transactions.load_transaction(ctx, transaction_id).status != "ABORTED"
    except Exception:  # noqa: BLE001 - unsure: keep the files
        return True


def _commit_in(ctx: Any, catalog_key: str, change: TableChange, transaction_id: str) -> str:
    """One table's change inside the transaction; the metadata file it wrote."""
    if _is_create(change.requirements):
        return str(_commit_create(ctx, catalog_key, change.namespace, change.name, change.requirements,
                                  change.updates, transaction_id).metadata_location)
    doc, version, location, base = _read(ctx, catalog_key, change.namespace, change.name, transaction_id)
    table_commits.check_requirements(base, change.requirements)
    updated = table_commits.apply_updates(base, location, change.updates, iceberg_tables.now_ms())
    new_location, _ = _write_next(catalog_key, updated, base, location)
    try:
        _not_found_as(change.namespace, change.name, lambda: tables.update_table(
            ctx, catalog_key, change.namespace,
            iceberg_tables.glue_table_input(doc, fold(change.name), updated, new_location, location), str(version),
            transaction_id=transaction_id))
    except BaseException:
        iceberg_tables.forget_metadata(new_location)
        raise
    return new_location


def _cancel(ctx: Any, transaction_id: str) -> None:
    try:
        transactions.cancel_transaction(ctx, transaction_id)
    except ServiceError:
        pass  # committed or aborted already: nothing of it is left to cancel
    except Exception:
        log.warning("could not cancel Iceberg multi-table transaction %s", transaction_id, exc_info=True)


# ---------------------------------------------------------------------------------- renames, drops
def rename_table(ctx: Any, catalog_key: str, namespace: str, name: str, new_namespace: str, new_name: str) -> None:
    """Rename a table, within its namespace or into another (its identity, versions and grants go
    with it). EntityNotFoundException for the source table or either namespace;
    AlreadyExistsException if the new name is taken."""
    if not table_exists(ctx, catalog_key, namespace, name):
        raise table_not_found(namespace, name)
    try:
        tables.rename_table(ctx, catalog_key, namespace, name, new_namespace, new_name)
    except AlreadyExistsException:
        raise AlreadyExistsException(f"Table already exists: {fold(new_namespace)}.{fold(new_name)}") from None
    except EntityNotFoundException as error:
        if error.message.startswith("Database "):
            missing = new_namespace if catalog.get_database(catalog_key, fold(namespace)) else namespace
            raise namespace_not_found(fold(missing)) from None
        raise table_not_found(namespace, name) from None


def drop_table(ctx: Any, catalog_key: str, namespace: str, name: str, purge: bool = False) -> None:
    """Drop a table (not a view). ``purge``: also its files, where the server may delete them: the
    whole directory of a table the catalog placed in its managed area, else only the metadata
    files the catalog wrote (data under a location the caller chose stays, as Glue leaves it)."""
    doc, _ = _not_found_as(namespace, name, lambda: tables.get_table(ctx, catalog_key, namespace, name))
    if doc.get("TableType") == VIRTUAL_VIEW:
        raise table_not_found(namespace, name)
    metadata: Optional[dict[str, Any]] = None
    location = str((doc.get("Parameters") or {}).get(METADATA_LOCATION) or "")
    if purge and _is_iceberg(doc):
        try:
            metadata = read_metadata(location)
        except ServiceError:
            metadata = None  # unreadable: nothing it names can be proved the catalog's
    _not_found_as(namespace, name, lambda: tables.delete_table(ctx, catalog_key, namespace, name))
    if purge and metadata is not None:
        iceberg_files.purge(catalog_key, location, metadata)
