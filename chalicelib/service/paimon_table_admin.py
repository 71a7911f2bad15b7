"""The Java RESTCatalog's table calls beyond pypaimon's (protocol-free): GetTable by id,
rollback-schema, replace (CREATE OR REPLACE) and register (adopt an existing directory).

Semantics are Paimon's (``RESTCatalogServer``, ``SchemaManager.rollbackTo``,
``AbstractCatalog.replaceTable``); see docs/design.md, "The Java client's other routes".
"""

from __future__ import annotations

import json
import uuid as uuid_module
from typing import Optional

from chalicelib.context import RequestContext
from chalicelib.domain.paimon.glue_marks import is_paimon
from chalicelib.domain.paimon.schema import Schema, TableSchema
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib.service import access, paging, paimon_databases, paimon_tables, tables
from chalicelib.service import paimon_tag_files as tag_files
from chalicelib.service import paimon_truncate
from chalicelib.service.lookups import Database, fold
from chalicelib.service.paimon_databases import require_database
from chalicelib.service.paimon_tables import PATH, TABLE, PaimonTable, split_branch
from chalicelib.service.table_ref import TableRef
from chalicelib.store import catalog
from chalicelib.store import paimon as store
from chalicelib.store import paimon_history as history
from chalicelib.store import warehouse



_SCHEMA_ROUNDS = 8  # a replace's schema append, lost to concurrent alters, is tried this often


class NotServed(Exception):
    """A request Paimon's semantics allow that this catalog does not carry out (protocol: 501)."""


# ------------------------------------------------------------------------------ by id
def _uid_of(table_id: str) -> str:
    try:
        return uuid_module.UUID(table_id).hex
    except (ValueError, AttributeError):
        raise EntityNotFoundException(f"Table {table_id[:100]} does not exist.", TABLE, table_id[:100]) from None


def _named(catalog_key: str, uid: str) -> Optional[tuple[str, str]]:
    """(database, table) naming ``uid`` in the catalog: the locator when it is still right,
    else a walk of the catalog's tables within the work budget (a table created before
    locators, or renamed by another protocol), which records what it finds."""
    found = history.get_locator(uid)
    if found is not None and found.get("catalog") == catalog_key:
        database = catalog.get_database(catalog_key, found["database"])
        table = catalog.get_table(database.uid, found["name"]) if database is not None else None
        if database is not None and table is not None and table.uid == uid:
            return database.name, table.name
    if not history.has_state(uid):
        return None
    deadline = paging.work_deadline()
    after: Optional[str] = None
    while True:
        databases = list(catalog.query_databases(catalog_key, after, 100))
        for database in databases:
            table_after: Optional[str] = None
            while True:
                page = list(catalog.query_tables(database.uid, table_after, 500))
                for table in page:
                    if table.uid == uid:
                        history.put_locator(uid, catalog_key, database.name, table.name)
                        return database.name, table.name
                if len(page) < 500 or paging.out_of_time(deadline):
                    break
                table_after = page[-1].name
            if paging.out_of_time(deadline):
                return None
        if len(databases) < 100:
            return None
        after = databases[-1].name


def get_table_by_id(ctx: RequestContext, catalog_key: str, table_id: str) -> tuple[str, PaimonTable]:
    """The database name and GetTableResponse of the table whose Paimon id is ``table_id``
    (the Glue uid as a UUID); EntityNotFoundException (TABLE) when no table of the catalog has
    it. The caller's permissions are those of GetTable on the table found."""
    with access.checked():  # finding the name is the catalog's; reading the table is checked below
        named = _named(catalog_key, _uid_of(table_id))
    if named is None:
        raise EntityNotFoundException(f"Table {table_id[:100]} does not exist.", TABLE, table_id[:100])
    return named[0], paimon_tables.get_table(ctx, catalog_key, named[0], named[1])


# ------------------------------------------------------------------------------ schemas
def _paimon_table(catalog_key: str, database_name: str, name: str) -> tuple[Database, store.Head,
                                                                             str, dict, str]:
    """(database, head, table uid, Glue doc, path) of a Paimon table's main branch."""
    base, branch = split_branch(name)
    if branch != store.MAIN:
        raise InvalidInputException(f"Table {name} is a branch: this call takes the table itself.", TABLE, name)
    database = require_database(catalog_key, database_name)
    table = catalog.get_table(database.uid, fold(base))
    if table is None:
        raise paimon_tables.not_found(database.name, base)
    doc = catalog.load(table)
    if not is_paimon(doc):
        raise NotServed(f"Table {database.name}.{table.name} is a Glue table served as a format table")
    head = store.get_head(table.uid)
    if head is None:
        raise InvalidInputException(f"Table {table.name} has no Paimon state.", TABLE, table.name)
    return database, head, table.uid, doc, (doc.get("StorageDescriptor") or {}).get("Location") or ""


def _mirror_exactly(ctx: RequestContext, catalog_key: str, database: Database, name: str,
                    schema: TableSchema) -> None:
    """The Glue mirror set to ``schema`` even when it shows a later one (after a rollback)."""
    for _ in range(8):
        table = catalog.get_table(database.uid, name)
        if table is None:
            return
        doc = catalog.load(table)
        path = (doc.get("StorageDescriptor") or {}).get("Location") or ""
        external = str((doc.get("Parameters") or {}).get("EXTERNAL", "")).upper() == "TRUE"
        try:
            with access.checked():
                tables.update_table(ctx, catalog_key, database.name,
                                    paimon_tables._glue_input(table.name, schema, path, external, None, doc),
                                    version_id=str(table.version))
            return
        except ConcurrentModificationException:
            continue


def rollback_schema(ctx: RequestContext, catalog_key: str, database_name: str, name: str, schema_id: int) -> None:
    """Drop the schemas above ``schema_id`` (items, then files, newest first), as Paimon's
    ``SchemaManager.rollbackTo``: refused (400) when the target does not exist or a snapshot or
    tag still uses a schema above it. Snapshots commit with the latest schema, so the latest
    snapshot's schema is the highest any snapshot uses; tags are read one by one."""
    access.require("PaimonRollback", catalog_key, database_name, split_branch(name)[0])
    database, head, uid, doc, path = _paimon_table(catalog_key, database_name, name)
    schemas = dict(store.list_schemas(uid))
    if schema_id not in schemas:
        raise InvalidInputException(f"Schema {schema_id} does not exist.")
    used: set[int] = set()
    if head.snapshot_id is not None:
        latest = store.get_snapshot(uid, head.snapshot_id)
        if latest is not None:
            used.add(int(latest.snapshot().get("schemaId", 0)))
    for tag_name in tag_files.all_tag_names(uid, path):
        tag = tag_files.find_tag(uid, path, tag_name)
        if tag is not None:
            used.add(int(tag.tagged().get("schemaId", 0)))
    conflict = min((i for i in used if i > schema_id), default=None)
    if conflict is not None:
        raise InvalidInputException(f"Cannot rollback to schema {schema_id}, schema {conflict} is still referenced "
                                    "by snapshots/tags/changelogs.")
    above = sorted((i for i in schemas if i > schema_id), reverse=True)
    if not above:
        return
    # Items first: the latest item is what the catalog serves; a crash between leaves files
    # above it, which the next alter of that id writes over.
    history.delete_schemas_above(uid, schema_id, above)
    warehouse.delete_many([warehouse.schema_file(path, i) for i in above])
    _mirror_exactly(ctx, catalog_key, database, fold(split_branch(name)[0]),
                    TableSchema.from_json(store.schema_json(schemas[schema_id])))


# ------------------------------------------------------------------------------ replace
def replace_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str, schema: Schema) -> None:
    """CREATE OR REPLACE of an existing Paimon table (``AbstractCatalog.replaceTable``): same
    id, path and partition keys, the new schema appended as latest + 1 (its options are the
    new ones). Paimon truncates the data first with a commit of its own; the catalog writes no
    manifests, so a table that has snapshots is not replaced here (NotServed, 501), nor is a
    change of partition keys (Paimon: UnsupportedOperationException) or of ``type``."""
    access.require("PaimonReplaceTable", catalog_key, database_name, split_branch(name)[0])
    database, head, uid, doc, path = _paimon_table(catalog_key, database_name, name)
    old = TableSchema.from_json(store.schema_json(store.latest_schema(uid)[1]))  # type: ignore[index]
    if list(schema.partition_keys) != list(old.partition_keys):
        raise NotServed(f"replaceTable does not support changing partition keys (old={old.partition_keys}, "
                        f"new={list(schema.partition_keys)}). Drop and re-create the table instead.")
    options = dict(schema.options)
    given = options.pop(PATH, None)
    if given is not None and str(given).rstrip("/") != path.rstrip("/"):
        raise InvalidInputException(f"options.path {str(given)[:200]} is not the table's path: a replace keeps it")
    if options.get("type", "table") != "table":
        raise NotServed("replaceTable does not support format tables.")
    if head.snapshot_id is not None:
        # Paimon truncates first, with a commit of its own (paimon_truncate), then appends the
        # schema: not atomic there either. A failure between leaves the table truncated under
        # its old schema, and the client's retry of the replace truncates (nothing) again.
        paimon_truncate.truncate(TableRef(catalog_key, ctx.catalog_id({}), database.name, fold(split_branch(name)[0])))
    base = Schema(schema.fields, schema.partition_keys, schema.primary_keys, options, schema.comment)
    for _ in range(_SCHEMA_ROUNDS):  # Paimon's appendNewSchema: latest + 1 by compare-and-set, retried
        latest = store.latest_schema(uid)
        new = TableSchema.from_schema((latest[0] if latest is not None else old.id) + 1, base,
                                      paimon_tables._now_ms())
        text = paimon_tables._schema_text(new)
        if store.append_schema(uid, new.id, text):
            break
    else:
        raise ConcurrentModificationException("The table's schema changed meanwhile; retry.")
    warehouse.put(warehouse.schema_file(path, new.id), text)
    _mirror_exactly(ctx, catalog_key, database, fold(split_branch(name)[0]), new)


# ------------------------------------------------------------------------------ register
_LATEST_PROBES = 100  # snapshot files looked for past the LATEST hint before listing the directory


def _snapshot_ids_listed(path: str) -> list[int]:
    """The ids of the directory's ``snapshot/snapshot-N`` files (a LIST: 1,000 names a page)."""
    names = []
    for uri in warehouse.list_prefix(f"{path}/snapshot"):
        tail = uri.rsplit("/", 1)[-1]
        if tail.startswith("snapshot-") and tail[len("snapshot-"):].isdigit():
            names.append(int(tail[len("snapshot-"):]))
    return sorted(names)


def _latest_snapshot_id(path: str) -> Optional[int]:
    """The directory's latest snapshot id as Paimon's SnapshotManager finds it: the LATEST
    hint, then the files after it while they exist; the highest file listed when the hint is
    absent, stale beyond the probes, or names no file. None: no snapshot."""
    raw = warehouse.get(warehouse.latest_file(path))
    try:
        hint = int(raw.decode("ascii").strip()) if raw is not None else None
    except (ValueError, UnicodeDecodeError):
        hint = None
    if hint is not None and hint > 0 and warehouse.exists(warehouse.snapshot_file(path, hint)):
        for _ in range(_LATEST_PROBES):
            if not warehouse.exists(warehouse.snapshot_file(path, hint + 1)):
                return hint
            hint += 1
    listed = _snapshot_ids_listed(path)
    return listed[-1] if listed else None


def _latest_snapshot(path: str) -> Optional[tuple[int, Optional[str], str]]:
    """(id, uuid, JSON) of the directory's latest snapshot file, None when it has none."""
    number = _latest_snapshot_id(path)
    if number is None:
        return None
    found = history.read_snapshot_file(path, number)
    if found is None:
        raise InvalidInputException(f"{path[:300]}/snapshot/snapshot-{number} is not a Paimon snapshot")
    return found.snapshot_id, found.uuid, found.text


def register_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str, path: str) -> None:
    """Adopt the Paimon table directory at ``path`` as an external table ``name`` (its files
    are the caller's: a drop leaves them). ``path`` is a location the caller chose: it must lie
    inside the roots the server owns and outside the warehouse's managed ``<name>.db``
    directories (``warehouse.check_caller_location``, as an external create), and needs Lake
    Formation's data-location access where registered. Its schemas and its latest snapshot
    become the table's items; every older snapshot is read from its file when asked for
    (``paimon_history``), so a register costs the same whatever the history's length (the
    schema files, the LATEST hint, a probe past it and one snapshot file). The name is never
    part of a path."""
    access.require("CreateTable", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    folded = fold(name)
    if "$" in folded:
        raise InvalidInputException(f"Cannot register table {folded}: '$' marks Paimon's system tables.",
                                    TABLE, f"{database.name}.{folded}")
    if catalog.get_table(database.uid, folded) is not None:
        raise paimon_tables.already_exists(database.name, folded)
    path = path.rstrip("/")
    warehouse.check_caller_location(path)
    access.require_location(catalog_key, path)
    ids = history.schema_file_ids(path)
    if not ids or ids[0] != 0:
        raise InvalidInputException(f"{path[:300]} holds no Paimon table (no schema/schema-0)")
    schemas = []
    for number in ids:
        raw = warehouse.get(warehouse.schema_file(path, number))
        try:
            parsed = TableSchema.from_json(json.loads(raw or b""))
        except (ValueError, InvalidInputException):
            raise InvalidInputException(f"{path[:300]}/schema/schema-{number} is not a Paimon schema") from None
        schemas.append((number, json.dumps(parsed.to_json(), ensure_ascii=False)))
    snapshot = _latest_snapshot(path)
    latest = TableSchema.from_json(json.loads(schemas[-1][1]))
    uid = catalog.new_uid()
    store.create_table_state(uid, schemas[0][1], None)
    records = 0
    if snapshot is not None:
        total = json.loads(snapshot[2]).get("totalRecordCount")
        records = total if isinstance(total, int) else 0
    history.adopt(uid, schemas[1:], snapshot, records)
    try:
        tables.create_table(ctx, catalog_key, database.name,
                            paimon_tables._glue_input(folded, latest, path, True, ctx.account_id), uid=uid)
    except AlreadyExistsException:
        raise paimon_tables.already_exists(database.name, folded) from None
    except EntityNotFoundException:
        raise paimon_databases.not_found(database.name) from None
    history.put_locator(uid, catalog_key, database.name, folded)
