"""Paimon tables: create with a Schema, get, list, alter (SchemaChanges), rename, drop.

A Paimon table IS a Glue table item (``Parameters.table_type`` = ``PAIMON``, the non-partition
fields as ``StorageDescriptor.Columns``, the partition fields as ``PartitionKeys``,
``StorageDescriptor.Location`` = the table path, ``Parameters["paimon.schema-id"]`` = the latest
schema id); its schema history lives in ``store.paimon`` items keyed by the table uid and in the
table directory's ``schema/schema-N`` files, which pypaimon reads on its own. The design (write
order, crash repair, costs) is docs/design.md, "The Paimon catalog".

Every entry point checks the caller's Lake Formation permissions (``service.access``) under
the Glue action it is (CreateTable, GetTable, GetTables' GetDatabase, UpdateTable, DeleteTable;
PaimonRenameTable) before it reads or writes anything: a refused create writes no schema file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any, Optional

from chalicelib import clock
from chalicelib.context import RequestContext
from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.glue_marks import PAIMON, TABLE_TYPE, is_external, is_paimon
from chalicelib.domain.paimon.hive_types import fields_from_columns
from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.domain.paimon.schema import Schema, TableSchema
from chalicelib.domain.paimon.schema_changes import SchemaChange, apply_changes
from chalicelib.domain.paimon.types import DataField, glue_type, highest_field_id
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib.service import access, cleanup, lookups, paging, paimon_databases, tables
from chalicelib.service.lookups import Database, Table, fold, require_table
from chalicelib.service.paimon_databases import require_database
from chalicelib.store import catalog
from chalicelib.store import paimon as store
from chalicelib.store import paimon_history as history
from chalicelib.store import warehouse
from chalicelib.attempts import Policy, attempts

TABLE = "TABLE"  # ErrorResponse.resourceType
SCHEMA_ID = "paimon.schema-id"
PATH = "path"  # CoreOptions.PATH: given at creation, the table is external
FORMAT_TABLE = "format-table"  # CoreOptions.TYPE of a Glue table served as Paimon's FormatTable
BRANCH_SUFFIX = names.BRANCH_SUFFIX  # pypaimon's Identifier: "<table>$branch_<name>" addresses a branch
# Glue's member limits (botocore): a longer Paimon comment is cut when mirrored into Glue.
_GLUE_COMMENT = 255
_GLUE_DESCRIPTION = 2048

log = logging.getLogger(__name__)


@dataclass
class PaimonTable:
    """A table as Paimon's GetTableResponse shows it (times in epoch milliseconds)."""

    id: str
    name: str
    path: str
    is_external: bool
    schema_id: int
    schema: Schema
    owner: Optional[str]
    created_at: Optional[int]
    updated_at: Optional[int]


def not_found(database: str, name: str) -> EntityNotFoundException:
    """Paimon's 404 for a table (resource type TABLE, named ``database.table``)."""
    full = f"{fold(database)}.{fold(name)}"
    return EntityNotFoundException(f"Table {full} does not exist.", TABLE, full)


def already_exists(database: str, name: str) -> AlreadyExistsException:
    """Paimon's 409 for a table name that is taken."""
    full = f"{fold(database)}.{fold(name)}"
    return AlreadyExistsException(f"Table {full} already exists.", TABLE, full)


def split_branch(name: str) -> tuple[str, str]:
    """(table name, branch) of a path's table segment (``t$branch_b`` addresses branch b)."""
    if BRANCH_SUFFIX in name:
        table, branch = name.split(BRANCH_SUFFIX, 1)
        if not table or not branch:
            raise InvalidInputException(f"table name {name!r} names no table or no branch")
        return table, branch
    return name, store.MAIN


def _table(database: Database, name: str) -> Table:
    try:
        return require_table(database, name)
    except EntityNotFoundException:
        raise not_found(database.name, name) from None


def _now_ms() -> int:
    return int(time.time() * 1000)


# ------------------------------------------------------------------------------ Glue mirror
def _glue_column(data_field: DataField) -> dict[str, Any]:
    column: dict[str, Any] = {"Name": data_field.name, "Type": glue_type(data_field.type)}
    if data_field.description:
        column["Comment"] = data_field.description[:_GLUE_COMMENT]
    return column


def _glue_input(name: str, schema: TableSchema, path: str, external: bool, owner: Optional[str],
                base: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The Glue TableInput mirroring ``schema``; ``base``: the stored Table object whose other
    members (Parameters a Glue user added, SerDe info, ...) are kept."""
    keys = set(schema.partition_keys)
    by_name = {f.name: f for f in schema.fields}
    old = dict(base or {})
    storage = dict(old.get("StorageDescriptor") or {})
    storage["Columns"] = [_glue_column(f) for f in schema.fields if f.name not in keys]
    storage["Location"] = path
    parameters = dict(old.get("Parameters") or {})
    parameters.update({TABLE_TYPE: PAIMON, SCHEMA_ID: str(schema.id)})
    if external:
        parameters["EXTERNAL"] = "TRUE"
    table_input: dict[str, Any] = {
        "Name": name,
        "TableType": "EXTERNAL_TABLE" if external else "MANAGED_TABLE",
        "Parameters": parameters,
        "StorageDescriptor": storage,
        "PartitionKeys": [_glue_column(by_name[k]) for k in schema.partition_keys],
    }
    if schema.comment:
        table_input["Description"] = schema.comment[:_GLUE_DESCRIPTION]
    owner = old.get("Owner", owner)
    if owner:
        table_input["Owner"] = owner
    for member in ("Retention", "LastAccessTime", "LastAnalyzedTime"):
        if old.get(member) is not None:
            table_input[member] = old[member]
    return table_input


# A schema item holds the schema-N text as is; DynamoDB items stop at 400 KB.
MAX_SCHEMA_BYTES = 380_000


def _schema_text(schema: TableSchema) -> str:
    """The schema-N file's text; InvalidInputException when it is too large to be stored whole."""
    text = json.dumps(schema.to_json(), ensure_ascii=False)
    size = len(text.encode("utf-8"))
    if size > MAX_SCHEMA_BYTES:
        raise InvalidInputException(f"The table schema is too large: {size} bytes of JSON; at most "
                                    f"{MAX_SCHEMA_BYTES} can be stored", TABLE)
    return text


# ------------------------------------------------------------------------------------ create
def create_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str, schema: Schema) -> None:
    """Create a Paimon table: its schema-0 file, its Paimon items (schema 0, empty head), then
    the Glue table item, in that order (a crash leaves only unreachable state behind).

    The path is ``<warehouse>/<database>.db/<table>`` unless the options name one (``path``:
    an external table, whose files a drop leaves alone). EntityNotFoundException (DATABASE),
    AlreadyExistsException (TABLE), InvalidInputException for a name or schema Paimon refuses.
    """
    access.require("CreateTable", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    folded = fold(name)
    if "$" in folded:
        raise InvalidInputException(f"Cannot create table {folded}: '$' marks Paimon's system tables.",
                                    TABLE, f"{database.name}.{folded}")
    if catalog.get_table(database.uid, folded) is not None:
        raise already_exists(database.name, folded)
    options = dict(schema.options)
    given_path = options.pop(PATH, None)
    external = bool(given_path)
    uid = catalog.new_uid()
    own_directory = False  # a directory named after this request's uid: nobody else's files
    if external:
        path = str(given_path).rstrip("/")
        # A file:// or s3:// URI without '.', '..' or '//', inside the roots the server owns, outside
        # the managed tables' directories (WarehouseError: 400; OutsideRoots: 403).
        warehouse.check_caller_location(path)
        if warehouse.exists(warehouse.schema_file(path, 0)):
            raise InvalidInputException(f"The path {path} already holds a Paimon table; choose another path.",
                                        TABLE, f"{database.name}.{folded}")
    else:
        path = warehouse.table_path(database.name, folded, database_uid=database.uid, table_uid=uid)
        if warehouse.exists(warehouse.schema_file(path, 0)):
            # A renamed table keeps its directory, and a racing create of this name may have
            # just written there: never write over another table's files. No second check of
            # the new path (a second check of the first one told a racing create's loser "path
            # taken" instead of "table exists", which the Glue write below tells it).
            path, own_directory = f"{path}-{uid}", True
    table_schema = TableSchema.from_schema(0, Schema(schema.fields, schema.partition_keys, schema.primary_keys,
                                                     options, schema.comment), _now_ms())
    text = _schema_text(table_schema)
    warehouse.put(warehouse.schema_file(path, 0), text)
    store.create_table_state(uid, text, None if external else path)
    try:
        tables.create_table(ctx, catalog_key, database.name,
                            _glue_input(folded, table_schema, path, external, ctx.account_id), uid=uid)
    except AlreadyExistsException:
        if own_directory:
            warehouse.delete_tree(path)
        else:
            _restore_winner(database, folded, path)
        raise already_exists(database.name, folded) from None
    except EntityNotFoundException:
        raise paimon_databases.not_found(database.name) from None
    history.put_locator(uid, catalog_key, database.name, folded)  # GetTable by id (service.paimon_table_admin)


def _restore_winner(database: Database, name: str, path: str) -> None:
    """After losing a create race (the name was free when checked): the winner may use the same
    path, whose schema-0 file this request wrote over; write the winner's back from its item."""
    winner = catalog.get_table(database.uid, name)
    if winner is None or (catalog.load(winner).get("StorageDescriptor") or {}).get("Location") != path:
        return
    text = store.get_schema(winner.uid, 0)
    if text is not None:
        warehouse.put(warehouse.schema_file(path, 0), text)


# ------------------------------------------------------------------------ Glue tables as Paimon
def format_schema(doc: dict[str, Any]) -> Optional[TableSchema]:
    """A Glue table that is not a Paimon table, as Paimon's format table (None when Paimon's
    clients could not read it), the way Paimon's HiveCatalog serves a metastore table
    (HiveTableUtils.tryToFormatSchema): the SerDe names the format (parquet, orc; a text input
    format is json, text or csv with the SerDe's field delimiter), the columns then the partition
    keys are the fields, the Parameters the options, plus ``type`` = ``format-table``,
    ``file.format`` and ``path`` = the location."""
    storage = doc.get("StorageDescriptor") or {}
    if doc.get("TableType") == "VIRTUAL_VIEW" or not storage.get("Location"):
        return None
    serde = storage.get("SerdeInfo") or {}
    library = str(serde.get("SerializationLibrary") or "").lower()
    input_format = str(storage.get("InputFormat") or "")
    options = {k: str(v) for k, v in (doc.get("Parameters") or {}).items()}
    comment = options.pop("comment", None) or doc.get("Description")
    if "parquet" in library:
        file_format = "parquet"
    elif "orc" in library:
        file_format = "orc"
    elif "Text" in input_format:
        if "json" in library:
            file_format = "json"
        elif options.get(TABLE_TYPE) == "TEXT":
            file_format = "text"
        else:
            file_format = "csv"
            options["csv.field-delimiter"] = (serde.get("Parameters") or {}).get("field.delim", "\u0001")
    else:
        return None
    partition_keys = doc.get("PartitionKeys") or []
    try:
        fields = fields_from_columns(list(storage.get("Columns") or []) + list(partition_keys))
    except ValueError:
        return None
    options.update({PATH: storage["Location"], "type": FORMAT_TABLE, "file.format": file_format})
    return TableSchema(0, fields, highest_field_id(fields), [k["Name"] for k in partition_keys], [], options,
                       comment)


def _paimon_view(table: Table, doc: dict[str, Any]) -> Optional[TableSchema]:
    """The schema Paimon's clients see: a Paimon table's latest, or a Glue table's format
    schema (None: neither; not served)."""
    return _latest(table) if is_paimon(doc) else format_schema(doc)


# --------------------------------------------------------------------------------------- get
# The latest schema id this process last served for each table uid: GetTable reads schema items N
# and N + 1 with the grants, database and table (one BatchGetItem) instead of querying for the
# newest afterwards. A schema's ids run without gaps (an alter appends latest + 1, a rollback
# deletes from the newest down, a fast-forward swaps them in one transaction), so N present and
# N + 1 absent is N the latest; the Glue item must show N as well. Anything else (a guess that
# no longer holds, a cold process) takes the Query as before. Only a guess: nothing is served
# from it unread.
_SCHEMA_GUESSES: dict[str, int] = {}
_SCHEMA_GUESSES_MAX = 10_000


def _schema_reads(uid: str) -> list[catalog.ExtraKey]:
    """The schema items to read along with the table (``_SCHEMA_GUESSES``): none without a guess."""
    guess = _SCHEMA_GUESSES.get(uid)
    return [] if guess is None else [store.schema_read(uid, guess), store.schema_read(uid, guess + 1)]


def _guessed(table: Table, doc: dict[str, Any], extras: list[Any]) -> Optional[TableSchema]:
    """The latest schema from the items ``_schema_reads`` named, when they prove it (see
    ``_SCHEMA_GUESSES``); None: query for it."""
    guess = _SCHEMA_GUESSES.get(table.uid)
    if guess is None or len(extras) != 2 or (doc.get("Parameters") or {}).get(SCHEMA_ID) != str(guess):
        return None
    text, above = store.schema_text_from(extras[0]), extras[1]
    if text is None or above is not None:
        return None
    schema = TableSchema.from_json(store.schema_json(text))
    return schema if schema.id == guess else None


def _remember_schema(table: Table, schema: TableSchema) -> None:
    if len(_SCHEMA_GUESSES) >= _SCHEMA_GUESSES_MAX and table.uid not in _SCHEMA_GUESSES:
        _SCHEMA_GUESSES.clear()
    _SCHEMA_GUESSES[table.uid] = schema.id


def _latest(table: Table) -> TableSchema:
    found = store.latest_schema(table.uid)
    if found is None:
        raise InvalidInputException(
            f"Table {table.name} is marked {TABLE_TYPE}={PAIMON} in Glue but was not created through the "
            "Paimon catalog: it has no Paimon schema.", TABLE, table.name)
    return TableSchema.from_json(store.schema_json(found[1]))


def _render(table: Table, doc: dict[str, Any], schema: TableSchema) -> PaimonTable:
    path = (doc.get("StorageDescriptor") or {}).get("Location") or ""
    external = is_external(doc)
    created, updated = doc.get("CreateTime"), doc.get("UpdateTime")
    shown = schema.to_schema()
    shown.options.pop(PATH, None)  # GetTableResponse carries it as ``path``, as Paimon's servers do
    return PaimonTable(str(uuid.UUID(hex=table.uid)), doc["Name"], path, external, schema.id, shown,
                       doc.get("Owner"), None if created is None else int(round(created * 1000)),
                       None if updated is None else int(round(updated * 1000)))


def get_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str) -> PaimonTable:
    """A Paimon table: the Glue item (T) plus its latest schema (one Query). When the Glue
    mirror lags the schema history (a crash during an alter), it is brought up to date here.
    ``t$branch_b`` names branch b: the table as that branch has it (its latest schema), as
    Paimon's REST server answers pypaimon's ``get_table("db.t$branch_b")``.
    EntityNotFoundException (DATABASE / TABLE; TABLE too for a branch that does not exist).
    A caller whose grants cover some columns only sees those (and the keys)."""
    base, branch = split_branch(name)
    # The grants, the database and the table in one BatchGetItem when this process has a hint
    # (and the latest schema's items when it has a guess of its id: ``_SCHEMA_GUESSES``).
    planned = lookups.hinted_keys(catalog_key, database_name, base,
                                  _schema_reads if branch == store.MAIN else lambda _uid: ())
    raws = access.require_reading("GetTable", catalog_key, database_name, base, planned[1] if planned else (),
                                  exists=lambda: _exists(catalog_key, database_name, base))
    hinted = lookups.hinted_from(planned[0], raws) if planned else None
    extras: list[Any] = []
    if hinted is not None:
        database, table, extras = hinted
    else:
        database = require_database(catalog_key, database_name)
        table = _table(database, base)
        lookups.remember_table(catalog_key, database, table)
    doc = catalog.load(table)
    if branch != store.MAIN:
        return _columns_visible(catalog_key, database, _branch_table(database, table, doc, name, branch))
    if not is_paimon(doc):
        found = format_schema(doc)
        if found is None:
            raise not_found(database.name, name)
        return _columns_visible(catalog_key, database, _render(table, doc, found))
    schema = _guessed(table, doc, extras) or _latest(table)
    _remember_schema(table, schema)
    if (doc.get("Parameters") or {}).get(SCHEMA_ID) != str(schema.id):
        # The catalog's own repair of what a crashed alter left: no change of the caller's.
        with access.checked():
            doc = _repair(ctx, catalog_key, database, table, doc, schema)
    return _columns_visible(catalog_key, database, _render(table, doc, schema))


def _exists(catalog_key: str, database_name: str, name: str) -> bool:
    """Whether the table exists (asked only of a refused caller who may see its database)."""
    fits = max(len(database_name), len(name)) <= paimon_databases.MAX_NAME_CHARS
    database = catalog.get_database(catalog_key, fold(database_name)) if fits else None
    return database is not None and catalog.get_table(database.uid, fold(name)) is not None


def _columns_visible(catalog_key: str, database: Database, table: PaimonTable) -> PaimonTable:
    """The table as a caller whose grants cover some columns only sees it, as Glue's GetTable
    shows it: the other fields left out, but for the partition and primary keys, without which
    Paimon's clients cannot open the table."""
    schema = table.schema
    visible = access.visible_columns(catalog_key, database.name, table.name.split(BRANCH_SUFFIX, 1)[0],
                                     [f.name for f in schema.fields])
    if visible is None:
        return table
    kept = set(visible) | set(schema.partition_keys) | set(schema.primary_keys)
    return replace(table, schema=replace(schema, fields=[f for f in schema.fields if f.name in kept]))


def _branch_table(database: Database, table: Table, doc: dict[str, Any], name: str, branch: str) -> PaimonTable:
    """GetTableResponse of branch ``branch`` (``name``: ``t$branch_b``): the table's id, path and
    times with the branch's latest schema (a branch from a tag has the tag's); 404 TABLE, as
    Paimon's server answers an identifier it holds no table for, when there is no such branch."""
    found = store.latest_schema(table.uid, branch) if is_paimon(doc) else None
    if found is None or not store.branch_exists(table.uid, branch):
        raise not_found(database.name, name)
    shown = _render(table, doc, TableSchema.from_json(store.schema_json(found[1])))
    return replace(shown, name=f"{shown.name}{BRANCH_SUFFIX}{branch}")


def _repair(ctx: RequestContext, catalog_key: str, database: Database, table: Table, doc: dict[str, Any],
            schema: TableSchema) -> dict[str, Any]:
    """Bring the Glue mirror and the schema file up to the latest schema item."""
    path = (doc.get("StorageDescriptor") or {}).get("Location") or ""
    if path and not warehouse.exists(warehouse.schema_file(path, schema.id)):
        warehouse.put(warehouse.schema_file(path, schema.id), _schema_text(schema))
    _mirror(ctx, catalog_key, database, table.name, schema)
    return catalog.load(_table(database, table.name))


def _mirror(ctx: RequestContext, catalog_key: str, database: Database, name: str, schema: TableSchema) -> None:
    """Update the Glue item to ``schema`` unless it already shows it (or a later one): a
    conditional UpdateTable on the version read, re-read when another writer got there first."""
    for _ in attempts(Policy(attempts=8, base_delay=0)):
        table = _table(database, name)
        doc = catalog.load(table)
        shown = (doc.get("Parameters") or {}).get(SCHEMA_ID)
        if shown is not None and shown.isdigit() and int(shown) >= schema.id:
            return
        path = (doc.get("StorageDescriptor") or {}).get("Location") or ""
        external = str((doc.get("Parameters") or {}).get("EXTERNAL", "")).upper() == "TRUE"
        try:
            tables.update_table(ctx, catalog_key, database.name,
                                _glue_input(table.name, schema, path, external, None, doc),
                                version_id=str(table.version))
            return
        except ConcurrentModificationException:
            continue
    raise ConcurrentModificationException("The table is being changed by other requests; retry.")


# -------------------------------------------------------------------------------------- list
def list_tables(ctx: RequestContext, catalog_key: str, database_name: str, after: Optional[str], limit: int,
                prefix: str = "", exact: Optional[str] = None, details: bool = False,
                table_type: Optional[str] = None) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` tables in name order after ``after``, starting with ``prefix`` (or named
    ``exact``): names, or with ``details`` PaimonTable objects (one more Query each for a Paimon
    table's latest schema). Glue tables Paimon's clients can read as format tables are listed
    too, the others left out; ``table_type`` ``table`` keeps only Paimon tables,
    ``format-table`` only those (as Paimon's servers filter on the ``type`` option).
    Only the tables the caller may see (``tables.list_tables`` filters them).
    EntityNotFoundException (DATABASE)."""
    # As GetTables: the database must be visible (any permission on it or in it); the listing
    # is then filtered.
    access.require("GetDatabase", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    start = fold(exact) if exact is not None else fold(prefix)
    listing = tables.list_tables(ctx, catalog_key, database.name, prefix=start)

    def render(doc: dict[str, Any], version: int) -> Any:
        if exact is not None and doc["Name"] != start:
            return None
        paimon = is_paimon(doc)
        if table_type is not None and (table_type == FORMAT_TABLE) == paimon:
            return None
        if not details:
            return doc["Name"] if paimon or format_schema(doc) is not None else None
        table = catalog.get_table(database.uid, doc["Name"])
        if table is None:
            return None
        try:
            schema = _paimon_view(table, doc)
        except InvalidInputException:
            return None
        return None if schema is None else _columns_visible(catalog_key, database, _render(table, doc, schema))

    page, last = listing.page(after, limit, render)
    return page, None if exact is not None else last


def list_tables_globally(ctx: RequestContext, catalog_key: str, after: Optional[list[str]], limit: int,
                         database_prefix: str = "", database_exact: Optional[str] = None, prefix: str = "",
                         exact: Optional[str] = None) -> tuple[list[tuple[str, str]], Optional[list[str]]]:
    """Up to ``limit`` (database, table) pairs of the whole catalog in (database, table) order,
    after position ``after`` ([database, table]), database and table names filtered by prefix or
    exact name, of the databases and tables the caller may see. Returns the pairs and the
    position after the last (None when the page was not full: nothing follows), as Paimon's
    servers page."""
    found: list[tuple[str, str]] = []
    first_database, table_after = (after[0], after[1]) if after else (None, None)
    if first_database is not None and not (first_database.startswith(fold(database_prefix))
                                           and database_exact in (None, first_database)):
        first_database, table_after = None, None
    pattern = (PrefixPattern(database_exact, True) if database_exact is not None
               else PrefixPattern(database_prefix, False) if database_prefix else None)
    for database in paimon_databases.databases_from(catalog_key, pattern, first_database):
        try:
            page, _ = list_tables(ctx, catalog_key, database.name,
                                  table_after if database.name == first_database else None,
                                  limit - len(found), prefix, exact)
        except EntityNotFoundException:
            continue
        found.extend((database.name, name) for name in page)
        if len(found) >= limit:
            return found, [found[-1][0], found[-1][1]]
    return found, None


# ------------------------------------------------------------------------------------- alter
def alter_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                changes: list[SchemaChange]) -> None:
    """Apply SchemaChanges: schema N+1 (a conditional put: of two alters from one base exactly
    one creates it; the other re-reads and applies its changes again on top), then its file,
    then the Glue mirror. An invalid change raises before anything is written.
    EntityNotFoundException (DATABASE / TABLE, or COLUMN), AlreadyExistsException (COLUMN),
    InvalidInputException for a change Paimon refuses."""
    access.require("UpdateTable", catalog_key, database_name, split_branch(name)[0])
    database = require_database(catalog_key, database_name)
    for _ in attempts(Policy(attempts=8, base_delay=0.002)):
        table = _table(database, name)
        doc = catalog.load(table)
        if not is_paimon(doc):
            if format_schema(doc) is None:
                raise not_found(database.name, name)
            raise InvalidInputException(
                f"Table {database.name}.{table.name} is a Glue table served as a Paimon format table: change "
                "its schema through Glue (UpdateTable).", TABLE, f"{database.name}.{table.name}")
        old = _latest(table)
        head = store.get_head(table.uid)
        new = apply_changes(old, changes, _now_ms(), has_snapshots=head is not None and head.snapshot_id is not None)
        text = _schema_text(new)
        if not store.append_schema(table.uid, new.id, text):
            continue
        path = (doc.get("StorageDescriptor") or {}).get("Location") or ""
        warehouse.put(warehouse.schema_file(path, new.id), text)
        _mirror(ctx, catalog_key, database, table.name, new)
        return
    raise ConcurrentModificationException("The table's schema is being changed by other requests; retry.")


# ------------------------------------------------------------------------------------ rename
def rename_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                 new_database_name: str, new_name: str) -> None:
    """Rename a table (also into another database): one DynamoDB transaction; the uid (so
    the Paimon id, schemas, snapshots, partitions) and the path stay, as on object stores.
    EntityNotFoundException (DATABASE / TABLE), AlreadyExistsException (TABLE). Needs ALTER
    on the table and, into another database, CREATE_TABLE there."""
    access.require("PaimonRenameTable", catalog_key, database_name, name)
    if fold(new_database_name) != fold(database_name):
        access.require("CreateTable", catalog_key, new_database_name)
    database = require_database(catalog_key, database_name)
    target = database if fold(new_database_name) == database.name else require_database(catalog_key, new_database_name)
    moved = _table(database, name)
    if "$" in fold(new_name):
        raise InvalidInputException(f"Cannot rename to {fold(new_name)}: '$' marks Paimon's system tables.",
                                    TABLE, f"{target.name}.{fold(new_name)}")
    try:
        tables.rename_table(ctx, catalog_key, database.name, name, target.name, new_name)
    except AlreadyExistsException:
        raise already_exists(target.name, new_name) from None
    except EntityNotFoundException:
        raise not_found(database.name, name) from None
    history.put_locator(moved.uid, catalog_key, target.name, fold(new_name))


# -------------------------------------------------------------------------------------- drop
def drop_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str) -> None:
    """Drop a table: the Glue item (and, purged by its uid, the Paimon items and partitions),
    then, for a managed Paimon table, its directory, as Paimon's catalogs do: within the
    request's work budget, the rest by a cleanup job. EntityNotFoundException (DATABASE / TABLE)."""
    access.require("DeleteTable", catalog_key, database_name, name)
    deadline = paging.work_deadline()
    database = require_database(catalog_key, database_name)
    table = _table(database, name)
    directory = _directory_of(table)  # read before the drop: the purge deletes the schema texts
    try:
        tables.delete_table(ctx, catalog_key, database.name, table.name)
    except EntityNotFoundException:
        raise not_found(database.name, name) from None
    if directory is not None and not remove_directory(*directory, deadline):
        cleanup.enqueue(catalog.cleanup_job(DIRECTORY_JOB, catalog.new_uid(), path=directory[0],
                                            digest=directory[1]))


def managed_path(doc: dict[str, Any]) -> Optional[str]:
    """The directory a drop removes: a managed Paimon table's path (None otherwise)."""
    if not is_paimon(doc) or str((doc.get("Parameters") or {}).get("EXTERNAL", "")).upper() == "TRUE":
        return None
    return (doc.get("StorageDescriptor") or {}).get("Location") or None


# ------------------------------------------------------------ removing dropped tables' directories
# A managed table's directory can hold any number of files (on S3, one DeleteObjects per 1,000):
# a drop removes what its work budget allows and leaves the rest to a cleanup job of this kind.
# While any of it is left, its schema-0 file is (it goes last), so the path stays taken: a table
# created under the same name meanwhile gets a directory of its own (``create_table``).
DIRECTORY_JOB = "paimon-directory"


def _digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def _directory_of(table: Table) -> Optional[tuple[str, str]]:
    """The directory a drop of ``table`` may remove, and the SHA-256 of the schema-0 the catalog
    wrote there; None when the catalog cannot prove it created it. The proof is what it stored
    with schema 0 when it created the table (the directory, or that the table is external); a
    table from before that record counts only if its Location lies in the warehouse's managed
    directories. Never the Location alone: a Glue write can set it (and table_type) to anything."""
    doc = catalog.load(table)
    if not is_paimon(doc):
        return None
    first = store.first_schema(table.uid)
    if first is None or first.external:
        return None  # no Paimon state (a Glue table marked PAIMON), or a path its creator chose
    path = first.directory
    if path is None:
        path = managed_path(doc)
        if not path or not warehouse.in_managed_area(path):
            return None
    return path, _digest(first.text)


def remove_directory(path: str, digest: Optional[str], deadline: float) -> bool:
    """Remove a dropped table's directory, or what is left of it, until ``deadline``; True when
    nothing of it is left. Nothing is removed once its schema-0 is gone or differs from
    ``digest``: the removal finished, and the path may be another table's by now. The drop has
    happened, so a storage error is logged, not raised (and not retried): files no table names
    are harmless, and the client must not be told the drop failed."""
    schema_0 = warehouse.schema_file(path, 0)
    if digest is None:
        return True  # a job queued before every removal was proved by a digest: nothing to prove it by
    try:
        found = warehouse.get(schema_0)
        if found is None or _digest(found) != digest:
            return True
        return warehouse.delete_tree(path, deadline, last=schema_0)
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("Paimon table directory %s not removed after its drop", path, exc_info=True)
        return True


def remove_directories_of(database: Database, deadline: float) -> None:
    """After a Paimon DropDatabase: remove its managed tables' directories until ``deadline``.
    The database's cleanup job (``drop_files``) removes each one again before purging its table,
    so what this leaves is removed there, and what it removed is found gone."""
    for table in catalog.tables_of_unlinked_database(database.uid, page_size=25):
        if clock.monotonic() >= deadline:
            return
        directory = _directory_of(table)
        if directory is not None and not remove_directory(*directory, deadline):
            return


def _remove_files_of_purged(table: Table, deadline: float) -> bool:
    """The database purge's remover: a table's directory, before its items are purged. Only when
    the catalog has its schema-0 to check against: a chunk cut short after this table's removal
    finished and its purge began finds the schema texts gone, and by then the path may be
    another table's. (A table whose client wrote its own schema-0 keeps what DropDatabase's own
    pass, bounded by its work budget, did not remove.)"""
    directory = _directory_of(table)
    return directory is None or remove_directory(*directory, deadline)


cleanup.register_kind(DIRECTORY_JOB, lambda job, deadline: remove_directory(job.member("path"), job.digest, deadline))
cleanup.register_files_remover(_remove_files_of_purged)
