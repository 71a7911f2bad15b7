"""Iceberg REST views: an Iceberg view IS a Glue table of TableType VIRTUAL_VIEW (as a Paimon view
is, ``service.paimon_views``), so one view reads the same through Glue, Paimon and Iceberg.

A view made here keeps its Iceberg metadata in a file (``<location>/metadata/<NNNNN>-<uuid>
.metadata.json``) that the Glue table points at (``table_type=ICEBERG-VIEW``,
``metadata_location``, as Iceberg Java's Hive catalog marks its views), while the Glue members
mirror the current version (``domain.iceberg.view_metadata.glue_view_input``). A Glue view
without a file (made by CreateTable, Athena or Paimon) loads as metadata built from its Glue
definition; its first replace writes its first file. Its ``metadata-location`` in an answer is
then a marker, ``glue:<namespace>.<view>#<Glue version>``, that changes with the view (what the
spec has clients compare it for) and names no file.

A replace is Iceberg's optimistic protocol on Glue's VersionId, as a table commit is: read the
view and its version, check the requirements, apply the updates, write the next file under a
fresh name, then UpdateTable conditional on the version read. Of racing replaces exactly one
moves the view; the others get ConcurrentModificationException (the wire's 409
CommitFailedException) and their file is deleted again.

A view made here gets its Glue table's uid as its view UUID. Dropping a view deletes files
only for a view the catalog placed in its managed area (``<warehouse>/<db>.db/<name>-<uid>``)
whose metadata carries that UUID: a Glue table pointing at someone else's files never makes
a drop delete them (Glue itself never deletes data on DeleteTable).

Every entry point checks the caller's Lake Formation permissions under the Glue action it is
(``service.access``) before it reads or writes anything: CreateTable, GetTable, UpdateTable,
DeleteTable, GetDatabase for listings; listings show only the views the caller may see.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

from chalicelib.context import RequestContext
from chalicelib.domain.iceberg import view_metadata
from chalicelib.domain.iceberg.metadata import METADATA_LOCATION, metadata_file, metadata_number
from chalicelib.domain.iceberg.view_metadata import VIRTUAL_VIEW
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError)
from chalicelib.service import access, iceberg_tables, tables
from chalicelib.service.iceberg_namespaces import not_found as namespace_not_found
from chalicelib.service.lookups import Database, Table, fold
from chalicelib.store import catalog, warehouse

log = logging.getLogger(__name__)

VIEW = "VIEW"  # the resource type the wire answers as NoSuchViewException
_MAX_NAME = 255
T = TypeVar("T")


@dataclass
class IcebergView:
    """A view as LoadViewResult shows it."""

    metadata_location: str
    metadata: dict[str, Any]


def view_not_found(namespace: str, name: str) -> EntityNotFoundException:
    """The 404 of a view, in Iceberg Java's words."""
    return EntityNotFoundException(f"View does not exist: {fold(namespace)}.{fold(name)}", VIEW,
                                   f"{fold(namespace)}.{fold(name)}")


def _taken(database: Database, name: str, doc: Optional[dict[str, Any]]) -> AlreadyExistsException:
    """409 for a name a view or a table holds (Iceberg Java's two wordings)."""
    what = "View already exists" if doc is not None and doc.get("TableType") == VIRTUAL_VIEW \
        else "Table with same name already exists"
    return AlreadyExistsException(f"{what}: {database.name}.{fold(name)}")


def _database(catalog_key: str, namespace: str) -> Database:
    item = catalog.get_database(catalog_key, fold(namespace)) if len(namespace) <= _MAX_NAME else None
    if item is None:
        raise namespace_not_found(fold(namespace))
    return item


def _entry(database: Database, name: str) -> Optional[tuple[Table, dict[str, Any]]]:
    """The table item and Table object of that name (a view or not), or None."""
    item = catalog.get_table(database.uid, fold(name)) if len(name) <= _MAX_NAME else None
    return None if item is None else (item, catalog.load(item))


def _require_view(database: Database, name: str) -> tuple[Table, dict[str, Any]]:
    """The view's item and Table object; 404 VIEW for no table, or a table that is no view."""
    entry = _entry(database, name)
    if entry is None or entry[1].get("TableType") != VIRTUAL_VIEW:
        raise view_not_found(database.name, name)
    return entry


def _current(database: Database, item: Table, doc: dict[str, Any]) -> tuple[str, dict[str, Any], bool]:
    """(metadata location, metadata, whether it is a file) of a view: its metadata file, or the
    metadata its Glue definition makes."""
    if view_metadata.is_iceberg_view(doc):
        location = str(doc["Parameters"][METADATA_LOCATION])
        return location, read_metadata(location), True
    built = view_metadata.from_glue(doc, database.name, view_metadata.uid_uuid(item.uid), int(item.version))
    return f"glue:{database.name}.{item.name}#{int(item.version)}", built, False


def read_metadata(location: str) -> dict[str, Any]:
    """A view metadata file, read back and checked (InvalidInputException if unusable)."""
    try:
        text = warehouse.get(location)
    except ServiceError:  # outside the roots the server may use, or refused by S3: said as such
        raise
    except Exception as error:  # an unreadable location: the view's writer's to fix
        raise InvalidInputException(f"cannot read the view's metadata file {location}: {error}") from None
    if text is None:
        raise InvalidInputException(f"the view's metadata file {location} does not exist")
    return view_metadata.decode(text, location)


def _default_location(database: Database, name: str, uid: str) -> str:
    """Where a view made without a location goes: under its namespace's LocationUri, else in the
    warehouse's managed area, in a directory of its own named with the view's uid."""
    database_location = (catalog.load(database).get("LocationUri") or "").rstrip("/")
    if database_location:
        return f"{database_location}/{warehouse.path_segment(fold(name), uid)}-{uid}"
    return f"{warehouse.table_path(database.name, fold(name), database_uid=database.uid, table_uid=uid)}-{uid}"


def _database_gone(namespace: str, call: Callable[[], T]) -> T:
    """``call()``, Glue's missing database said as the namespace's 404."""
    try:
        return call()
    except EntityNotFoundException as error:
        if error.message.startswith("Database "):
            raise namespace_not_found(fold(namespace)) from None
        raise


# ---------------------------------------------------------------------------------- reads
def list_views(ctx: RequestContext, catalog_key: str, namespace: str, after: Optional[str],
               limit: int) -> tuple[list[str], Optional[str]]:
    """Up to ``limit`` view names of a namespace after ``after`` that the caller may see (tables
    are not views), and the position to resume after (None: the last)."""
    listing = _database_gone(namespace, lambda: tables.list_tables(ctx, catalog_key, namespace))

    def render(doc: dict[str, Any], version: int) -> Optional[str]:
        return str(doc["Name"]) if doc.get("TableType") == VIRTUAL_VIEW else None

    return listing.page(after, limit, render)


def load_view(catalog_key: str, namespace: str, name: str) -> IcebergView:
    """The view's current metadata; 404 for the namespace, or if the name is no view."""
    access.require("GetTable", catalog_key, namespace, name)
    database = _database(catalog_key, namespace)
    location, metadata, _ = _current(database, *_require_view(database, name))
    return IcebergView(location, metadata)


def view_exists(catalog_key: str, namespace: str, name: str) -> bool:
    """Whether the namespace holds a view (not a table) of that name."""
    access.require("GetTable", catalog_key, namespace, name)
    try:
        _require_view(_database(catalog_key, namespace), name)
    except EntityNotFoundException:
        return False
    return True


# ---------------------------------------------------------------------------------- writes
def create_view(ctx: RequestContext, catalog_key: str, namespace: str, request: dict[str, Any]) -> IcebergView:
    """Create a view from a CreateViewRequest: its first metadata file, then the Glue table
    pointing at it (one atomic store write: of racing creates exactly one wins).
    AlreadyExistsException if a view or table has the name; InvalidInputException for a bad
    request or an unusable location; EntityNotFoundException (NAMESPACE)."""
    access.require("CreateTable", catalog_key, namespace)
    database = _database(catalog_key, namespace)
    name = fold(request["name"])
    existing = _entry(database, name)
    if existing is not None:
        raise _taken(database, name, existing[1])
    uid = uuid.uuid4().hex
    location = (request.get("location") or "").rstrip("/")
    if location:
        iceberg_tables.check_location(location, "location")
    else:
        location = _default_location(database, name, uid)
    metadata = view_metadata.new_view_metadata(request, location, view_metadata.uid_uuid(uid),
                                               iceberg_tables.now_ms())
    metadata_location = metadata_file(location, 0, str(uuid.uuid4()))
    doc_input = view_metadata.glue_view_input({}, name, metadata, metadata_location, None, {})
    _write(metadata_location, metadata, "location")
    try:
        _database_gone(namespace, lambda: tables.create_table(ctx, catalog_key, database.name, doc_input, uid=uid))
    except AlreadyExistsException:
        iceberg_tables.forget_metadata(metadata_location)
        entry = _entry(database, name)
        raise _taken(database, name, entry[1] if entry else None) from None
    except iceberg_tables.NOT_WRITTEN:
        iceberg_tables.forget_metadata(metadata_location)
        raise
    return IcebergView(metadata_location, metadata)


def register_view(ctx: RequestContext, catalog_key: str, namespace: str, name: str,
                  metadata_location: str) -> IcebergView:
    """Register an existing view metadata file as a view. The file must lie where the server may
    read, and its view location where a caller may place a view."""
    access.require("CreateTable", catalog_key, namespace)
    database = _database(catalog_key, namespace)
    existing = _entry(database, name)
    if existing is not None:
        raise _taken(database, name, existing[1])
    iceberg_tables.check_location(metadata_location, "metadata-location")
    metadata = read_metadata(metadata_location)
    iceberg_tables.check_location(metadata["location"], "metadata-location's view location")
    doc_input = view_metadata.glue_view_input({}, fold(name), metadata, metadata_location, None, {})
    try:
        _database_gone(namespace, lambda: tables.create_table(ctx, catalog_key, database.name, doc_input))
    except AlreadyExistsException:
        entry = _entry(database, name)
        raise _taken(database, name, entry[1] if entry else None) from None
    return IcebergView(metadata_location, metadata)


def replace_view(ctx: RequestContext, catalog_key: str, namespace: str, name: str, requirements: Any,
                 updates: Any) -> IcebergView:
    """Apply a CommitViewRequest: the requirements hold against the current metadata, the
    updates make the next, the view moves to it under the Glue version read.
    ConcurrentModificationException (409) for a failed requirement or a lost race (nothing
    written); InvalidInputException (400) for a bad update; EntityNotFoundException (VIEW)."""
    access.require("UpdateTable", catalog_key, namespace, name)
    database = _database(catalog_key, namespace)
    item, doc = _require_view(database, name)
    location, loaded, is_file = _current(database, item, doc)
    view_metadata.check_requirements(loaded, requirements)
    # A Glue view may have no location: it gets the one a new view would (the catalog's choice).
    chosen = None if loaded["location"] else _default_location(database, item.name, item.uid)
    base = loaded if chosen is None else {**loaded, "location": chosen}
    updated = view_metadata.apply_updates(base, updates, iceberg_tables.now_ms())
    if updated == base:
        return IcebergView(location, loaded)  # nothing changed: nothing to write (Java's BaseViewOperations)
    if updated["location"] != chosen and (updated["location"] != base["location"] or not is_file):
        iceberg_tables.check_location(updated["location"], "updates (set-location)")
    number = metadata_number(location) + 1 if is_file else 0
    new_location = metadata_file(updated["location"], max(number, 0), str(uuid.uuid4()))
    doc_input = view_metadata.glue_view_input(doc, item.name, updated, new_location, location if is_file else None,
                                              base["properties"])
    _write(new_location, updated, "updates")
    try:
        tables.update_table(ctx, catalog_key, database.name, doc_input, version_id=str(int(item.version)))
    except ConcurrentModificationException:
        iceberg_tables.forget_metadata(new_location)
        raise ConcurrentModificationException(f"Commit failed: view {database.name}.{item.name} was changed by "
                                              "another commit; refresh and retry") from None
    except EntityNotFoundException:
        iceberg_tables.forget_metadata(new_location)
        raise view_not_found(database.name, item.name) from None
    except iceberg_tables.NOT_WRITTEN:
        iceberg_tables.forget_metadata(new_location)
        raise
    return IcebergView(new_location, updated)


def _write(uri: str, metadata: dict[str, Any], member: str) -> None:
    try:
        warehouse.put(uri, view_metadata.encode(metadata))
    except ServiceError as error:  # outside the roots, or refused by S3: said as such, naming the member
        error.message = f"{member}: {error.message}"
        raise
    except Exception as error:  # no such bucket, no access, a read-only path: the location is the caller's
        raise InvalidInputException(f"{member}: cannot write the view metadata file {uri}: {error}") from None


def drop_view(ctx: RequestContext, catalog_key: str, namespace: str, name: str) -> None:
    """Drop a view (not a table); its files go only where the catalog placed them itself (see
    the module docstring)."""
    access.require("DeleteTable", catalog_key, namespace, name)
    database = _database(catalog_key, namespace)
    item, doc = _require_view(database, name)
    try:
        tables.delete_table(ctx, catalog_key, database.name, item.name)
    except EntityNotFoundException:
        raise view_not_found(database.name, item.name) from None
    if view_metadata.is_iceberg_view(doc):
        _delete_own_files(item, str(doc["Parameters"][METADATA_LOCATION]))


def _delete_own_files(item: Table, metadata_location: str) -> None:
    """Delete a dropped view's directory if the catalog made it (a storage error is logged, not
    raised: the drop has happened)."""
    try:
        metadata = read_metadata(metadata_location)
        location = str(metadata["location"]).rstrip("/")
        if (metadata["view-uuid"] == view_metadata.uid_uuid(item.uid) and location.endswith(f"-{item.uid}")
                and warehouse.in_managed_area(location) and metadata_location.startswith(location + "/metadata/")):
            warehouse.delete_tree(location)
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("files of dropped Iceberg view at %s not deleted", metadata_location, exc_info=True)


def rename_view(ctx: RequestContext, catalog_key: str, source: tuple[str, str], destination: tuple[str, str]) -> None:
    """Rename a view, within its namespace or into another (its identity, versions and grants go
    with it; its files stay where they are). 404 VIEW for the source, NAMESPACE for either
    namespace; 409 if the destination is a view or table already (itself included, as Iceberg
    Java's catalogs answer)."""
    access.require("UpdateTable", catalog_key, source[0], source[1])
    if fold(destination[0]) != fold(source[0]):
        access.require("CreateTable", catalog_key, destination[0])
    source_db = _database(catalog_key, source[0])
    item, _ = _require_view(source_db, source[1])
    target_db = _database(catalog_key, destination[0])
    target = fold(destination[1])

    def taken(doc: Optional[dict[str, Any]]) -> AlreadyExistsException:
        what = "View" if doc is None or doc.get("TableType") == VIRTUAL_VIEW else "Table"
        return AlreadyExistsException(f"Cannot rename {source_db.name}.{item.name} to {target_db.name}.{target}. "
                                      f"{what} already exists")

    existing = _entry(target_db, target)
    if existing is not None:
        raise taken(existing[1])
    try:
        tables.rename_table(ctx, catalog_key, source_db.name, item.name, target_db.name, target, current=item)
    except AlreadyExistsException:
        entry = _entry(target_db, target)
        raise taken(entry[1] if entry else None) from None
    except EntityNotFoundException as error:
        if error.message.startswith("Database "):
            missing = destination[0] if catalog.get_database(catalog_key, source_db.name) else source[0]
            raise namespace_not_found(fold(missing)) from None
        raise view_not_found(source_db.name, item.name) from None
