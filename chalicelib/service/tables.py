"""Tables of a database: create, read, list, update (new version) and delete.

A table is stored as its Glue ``Table`` object (the members of a ``TableInput`` plus
DatabaseName, CreateTime, UpdateTime; ``Parameters`` and every other member round-trip as
given); names are folded to lowercase. A table starts at version 0 and each update adds one,
archiving the previous definition unless told not to (``service.table_versions`` reads them).

With a transaction id, writes are recorded in the transaction and reads see its snapshot plus its
own changes; without, every write is a commit of its own (``service.table_transactions``). Every
write keeps SearchTables' postings in step (``service.search_index``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile
from typing import Any, Callable, Iterable, Optional

from chalicelib.service.partition_indexes import (check_partition_key_change, indexes_for_new_table,
                                                  partition_keys_of)
from chalicelib.context import RequestContext
from chalicelib.domain.paimon import glue_marks
from chalicelib.domain.name_patterns import NamePattern, compile_name_pattern, matches
from chalicelib.errors import (AccessDeniedException, ConcurrentModificationException, EntityNotFoundException, InvalidInputException,
                               ServiceError, database_not_found, table_already_exists, table_not_found)
from chalicelib.service import access, cleanup, search_index
from chalicelib.service.databases import now, start_position
from chalicelib.service.lookups import Database, Table, fold, require_database, require_table
from chalicelib.service.paging import take_page
from chalicelib.service.snapshots import database_snapshot, require_table_as_of, table_as_of
from chalicelib.service.table_transactions import TableWriter, autocommit, require_database_and_counter
from chalicelib.service.table_versions import parse_version
from chalicelib.store import catalog
from chalicelib.store import statistics as statistics_store

# TableInput members copied into the stored Table as given (Name is folded separately).
_TABLE_INPUT_MEMBERS = ("Description", "Owner", "LastAccessTime", "LastAnalyzedTime", "Retention",
                        "StorageDescriptor", "PartitionKeys", "ViewOriginalText", "ViewExpandedText",
                        "TableType", "Parameters", "TargetTable", "ViewDefinition")


def table_document(table_input: dict[str, Any], database_name: str, create_time: float,
                   update_time: float) -> dict[str, Any]:
    """The stored Table object for a TableInput (VersionId and CatalogId are added on read)."""
    doc: dict[str, Any] = {"Name": fold(table_input["Name"]), "DatabaseName": database_name}
    # A member sent as JSON null is absent, as AWS's JSON protocols read it.
    doc.update({k: table_input[k] for k in _TABLE_INPUT_MEMBERS if table_input.get(k) is not None})
    doc.setdefault("PartitionKeys", [])
    doc["CreateTime"] = create_time
    doc["UpdateTime"] = update_time
    doc["IsRegisteredWithLakeFormation"] = False
    return doc


def create_table(ctx: RequestContext, catalog_key: str, database_name: str, table_input: dict[str, Any],
                 partition_indexes: Optional[list[dict[str, Any]]] = None,
                 transaction_id: Optional[str] = None, uid: Optional[str] = None) -> None:
    """Create a table at version 0 from a Glue ``TableInput`` (with Glue ``PartitionIndex``
    definitions to create along with it).

    Without a transaction the create is one atomic store write (the database still there, the
    name free, a commit of its own): of racing creates exactly one succeeds. With one, it is
    recorded in the transaction and applied by its commit. EntityNotFoundException if the
    database does not exist; AlreadyExistsException if the name is taken (as the transaction
    sees it); InvalidInputException for unusable partition indexes; with a transaction,
    ConcurrentModificationException if another writer created the table after it started.
    ``uid``: the identity to give the table, when state keyed by it was written first (Paimon's
    schema); only without a transaction.
    """
    name = fold(table_input["Name"])
    access.require("CreateTable", catalog_key, database_name)
    database, counter = require_database_and_counter(catalog_key, database_name)
    created = now()
    doc = table_document(table_input, database.name, created, created)
    doc["CreatedBy"] = ctx.principal_arn
    access.require_location(catalog_key, (doc.get("StorageDescriptor") or {}).get("Location"))
    indexes = indexes_for_new_table(partition_indexes, partition_keys_of(doc))
    if transaction_id:
        writer = TableWriter(ctx, transaction_id, database, name)
        if writer.seen is not None:
            raise table_already_exists()
        writer.require_fresh()
        search_index.before_table_write(database.catalog, database.name, database.uid, doc)
        writer.create(doc, indexes)
        return
    postings = search_index.table_postings(database.catalog, database.name, database.uid, doc)
    grants = access.grant_items(catalog_key, access.new_table_grants(catalog_key, catalog.load(database),
                                                                       database.name, name))
    also = catalog.AlsoWrite(puts=[*postings.riding.puts, *grants], deletes=postings.riding.deletes)
    postings.before()
    try:
        autocommit(database, lambda stamp: catalog.create_table(database, name, doc, indexes, stamp, uid, also),
                   counter=counter)
    except catalog.ConditionFailed:
        if catalog.get_table(database.uid, name) is not None:
            raise table_already_exists() from None
        raise database_not_found(database.name) from None
    cleanup.help_with_expired()


def update_table(ctx: RequestContext, catalog_key: str, database_name: str, table_input: dict[str, Any],
                 version_id: Optional[str] = None, archive: bool = True,
                 transaction_id: Optional[str] = None) -> None:
    """Replace a table's definition with a Glue ``TableInput`` (the table it names), archiving
    the previous version unless ``archive`` is False. CreateTime is kept.

    With ``version_id`` (a version id string) the update applies only if that is still the
    current version (optimistic locking): of several racing updates from one version exactly
    one succeeds, the others get ConcurrentModificationException (so does any update that loses
    a race without one). Without a transaction the update is one atomic store write; columns it
    drops lose their statistics. EntityNotFoundException if the database or table does not
    exist; InvalidInputException for a malformed ``version_id`` or a partition-key change the
    table's indexes forbid.
    """
    name = fold(table_input["Name"])
    access.require("UpdateTable", catalog_key, database_name, name)
    database, counter = require_database_and_counter(catalog_key, database_name)
    writer = TableWriter(ctx, transaction_id, database, name) if transaction_id else None
    if writer is not None:
        if writer.seen is None:
            raise table_not_found(name)
        current, old, version = writer.seen
    else:
        current = require_table(database, name)
        old, version = catalog.load(current), current.version
    if version_id is not None and parse_version(version_id) != version:
        raise _concurrent_update()
    doc = table_document(table_input, database.name, old["CreateTime"], now())
    if "CreatedBy" in old:  # the creator, not the last writer (as CreateTime is kept)
        doc["CreatedBy"] = old["CreatedBy"]
    check_partition_key_change(current, partition_keys_of(old), partition_keys_of(doc))
    _check_paimon_binding(old, doc)
    location = (doc.get("StorageDescriptor") or {}).get("Location")
    if location != (old.get("StorageDescriptor") or {}).get("Location"):
        access.require_location(catalog_key, location)
    if writer is not None:
        writer.require_fresh()
        search_index.before_table_write(database.catalog, database.name, database.uid, doc, old)
        writer.update(doc, archive, _column_names(old) - _column_names(doc))
        return
    postings = search_index.table_postings(database.catalog, database.name, database.uid, doc, old)
    postings.before()
    try:
        autocommit(database, lambda stamp: catalog.update_table(current, doc, archive, stamp, also=postings.riding),
                   counter=counter)
    except catalog.ConditionFailed:
        raise _concurrent_update() from None
    postings.after()
    dropped = _column_names(old) - _column_names(doc)
    if dropped:
        catalog.bump_column_epochs(current, sorted(dropped))
        statistics_store.delete_columns(current.uid, "", sorted(dropped))


def rename_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                 new_database_name: str, new_name: str, current: Optional[Table] = None) -> None:
    """Rename a table (within its database or into another of the catalog), keeping its
    identity: the uid, and with it partitions, indexes, statistics and versions. One atomic
    store write, a commit of its own (stamped in both databases); the new name gets a new
    version of the definition (Name and DatabaseName changed, UpdateTime now). ``current``: the
    table item the caller read and checked (a view, say); the rename then applies only while the
    table is still that item (same uid and version).

    EntityNotFoundException if either database or the table does not exist (or the table went
    meanwhile); AlreadyExistsException if the new name is taken; ConcurrentModificationException
    if the table changed meanwhile.
    """
    access.require("UpdateTable", catalog_key, database_name, name)
    if fold(new_database_name) != fold(database_name):
        access.require("CreateTable", catalog_key, new_database_name)
    source, counter = require_database_and_counter(catalog_key, database_name)
    target = source if fold(new_database_name) == source.name else require_database(catalog_key, new_database_name)
    moving = current if current is not None else require_table(source, name)
    folded = fold(new_name)
    if target.uid == source.uid and folded == moving.name:
        return
    old = catalog.load(moving)
    doc = {**old, "Name": folded, "DatabaseName": target.name, "UpdateTime": now()}
    if catalog.get_table(target.uid, folded) is not None:
        raise table_already_exists()
    search_index.before_table_write(target.catalog, target.name, target.uid, doc)
    # Grants are keyed by name: they move with the table, in its transaction when they fit.
    puts, deletes, fits = access.moving_table(catalog_key, source.name, moving.name, target.name, folded)
    grants = catalog.AlsoWrite(puts=puts, deletes=deletes)
    try:
        autocommit(source, lambda stamp: catalog.rename_table(moving, target, folded, doc, stamp, grants), target,
                   counter=counter)
    except catalog.ConditionFailed:
        if catalog.get_table(target.uid, folded) is not None:
            raise table_already_exists() from None
        if catalog.get_database(target.catalog, target.name) is None:
            raise database_not_found(target.name) from None
        if catalog.get_table(source.uid, moving.name) is None:
            raise table_not_found(moving.name) from None
        raise _concurrent_update() from None
    if not fits:
        access.move_table_after(catalog_key, source.name, moving.name, target.name, folded)
    search_index.after_table_write(source.catalog, source.name, None, old)


def _paimon_binding(doc: dict[str, Any]) -> Optional[tuple[str, bool]]:
    """A Paimon table's directory and whether it is external (None: not a Paimon table)."""
    if not glue_marks.is_paimon(doc):
        return None
    return (doc.get("StorageDescriptor") or {}).get("Location") or "", glue_marks.is_external(doc)


def _check_paimon_binding(old: dict[str, Any], new: dict[str, Any]) -> None:
    """A Paimon table's directory is the Paimon catalog's: commits write there and a drop removes
    a managed one, so an UpdateTable may neither move it, nor make it managed or external, nor
    unmark the table (which a later update could re-mark with another location)."""
    binding = _paimon_binding(old)
    if binding is not None and _paimon_binding(new) != binding:
        raise InvalidInputException(
            f"Table {old['Name']} is a Paimon table: its StorageDescriptor.Location ({binding[0][:300]}), "
            "Parameters table_type and EXTERNAL and its TableType belong to the Paimon catalog and cannot be "
            "changed through UpdateTable.")


def _column_names(doc: dict[str, Any]) -> set[str]:
    columns = (doc.get("StorageDescriptor") or {}).get("Columns") or []
    return {c["Name"].lower() for c in columns} | {k["Name"].lower() for k in doc.get("PartitionKeys") or []}


def _concurrent_update() -> ConcurrentModificationException:
    return ConcurrentModificationException("Update table failed due to concurrent modifications.")


def _delete(ctx: RequestContext, database: Database, name: str, transaction_id: Optional[str],
            counter: Optional[int] = None) -> None:
    access.require("DeleteTable", database.catalog, database.name, name)
    if transaction_id:
        writer = TableWriter(ctx, transaction_id, database, fold(name))
        if writer.seen is None:
            raise table_not_found(fold(name))
        writer.require_fresh()
        writer.delete()
        return
    item = require_table(database, name)
    # The postings go now (their number depends on the definition, not on the contents): they
    # carry only the database's uid, so once a table of the same name is re-created the cleanup
    # job could no longer tell its postings from the new table's.
    postings = search_index.table_postings(database.catalog, database.name, database.uid, None, catalog.load(item))
    try:
        autocommit(database, lambda stamp: catalog.delete_table_item(item, stamp, also=postings.riding),
                   counter=counter)
    except catalog.ConditionFailed:
        raise table_not_found(name) from None
    access.forget_table(database.catalog, database.name, item.name)
    cleanup.enqueued()
    postings.after()


def delete_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
                 transaction_id: Optional[str] = None) -> None:
    """Delete a table with its versions and everything below it (partitions, indexes, statistics).

    Without a transaction the table item goes in one atomic store write (a commit of its own)
    that also records a cleanup job: the name is free at once, the contents (keyed by the
    table's uid) are unreachable and deleted in the background (``service.cleanup``); with a
    transaction, the delete is recorded and applied by its commit.
    EntityNotFoundException if the database or table does not exist (or another delete won);
    with a transaction, ConcurrentModificationException if the table changed after it started.
    """
    database, counter = require_database_and_counter(catalog_key, database_name)
    _delete(ctx, database, name, transaction_id, counter)
    cleanup.help_with_expired()


def delete_tables(ctx: RequestContext, catalog_key: str, database_name: str, names: Iterable[str],
                  transaction_id: Optional[str] = None) -> list[tuple[str, ServiceError]]:
    """Delete several tables of one database, each as ``delete_table`` does; a table that cannot
    be deleted (EntityNotFoundException, ConcurrentModificationException) does not stop the
    others. Returns (name, error) for each failure; EntityNotFoundException if the database
    does not exist."""
    # One read of the counter serves every delete: table writes only check it, so it stays
    # valid until a snapshot or commit point moves it (then that delete retries with a fresh one).
    database, counter = require_database_and_counter(catalog_key, database_name)
    errors: list[tuple[str, ServiceError]] = []
    for name in names:
        try:
            _delete(ctx, database, name, transaction_id, counter)
        except (EntityNotFoundException, ConcurrentModificationException, AccessDeniedException) as error:
            errors.append((name, error))
    cleanup.help_with_expired()
    return errors


def get_table(ctx: RequestContext, catalog_key: str, database_name: str, name: str,
              transaction_id: Optional[str] = None, as_of: Optional[float] = None) -> tuple[dict[str, Any], int]:
    """(Table object, version) of one table: the latest, as the transaction sees it, or the
    version current at ``as_of`` (epoch seconds). EntityNotFoundException if the database or
    table does not exist (then). A caller who may see only some columns gets only those."""
    access.require("GetTable", catalog_key, database_name, name,
                   exists=lambda: catalog.get_table(require_database(catalog_key, database_name).uid,
                                                    fold(name)) is not None)
    database = require_database(catalog_key, database_name)
    if as_of is not None:
        doc, version = require_table_as_of(require_table(database, name), as_of)
    else:
        folded = fold(name)
        found = database_snapshot(ctx, transaction_id, database, folded).get(folded)
        if found is None:
            raise table_not_found(folded)
        doc, version = found[1], found[2]
    return _columns_visible(catalog_key, database.name, doc), version


def _columns_visible(catalog_key: str, database: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The table as a caller with column grants only sees it: its other columns left out."""
    descriptor = doc.get("StorageDescriptor") or {}
    columns = descriptor.get("Columns") or []
    visible = access.visible_columns(catalog_key, database, doc["Name"], [c.get("Name", "") for c in columns])
    if visible is None:
        return doc
    shown = set(visible)
    return {**doc, "StorageDescriptor": {**descriptor, "Columns": [c for c in columns if c.get("Name") in shown]}}


@dataclass
class TableListing:
    """The tables of one database as one reader sees them, to be read a page at a time."""

    ctx: RequestContext
    database: Database
    pattern: Optional[NamePattern]  # None: every name
    as_of: Optional[float]
    transaction_id: Optional[str]
    prefix: str = ""  # only names starting with it (folded); read from the prefix on, stopping after it

    @property
    def identity(self) -> tuple[str, str]:
        """What a page position is only valid for: this catalog's database by its uid (a
        re-created database of the same name is another one). Bind page tokens to it."""
        return self.database.catalog, self.database.uid

    def page(self, after: Optional[str], limit: int,
             render: Callable[[dict[str, Any], int], Any] = lambda doc, version: doc
             ) -> tuple[list[Any], Optional[str]]:
        """Up to ``limit`` tables in name order after position ``after`` (None: from the first),
        within the response byte budget, each as ``render(Table object, version)`` (None: leave
        it out; by default the Table object). Returns the page and the position to resume after (a table name), None after
        the last."""
        pattern, as_of = self.pattern, self.as_of
        visible = access.table_filter(self.database.catalog, self.database.name)

        def rendered(entry: tuple[str, Any]) -> Any:
            name, found = entry
            if pattern is not None and not matches(pattern, name):
                return None
            if not visible(name):
                return None
            if as_of is not None:
                found = table_as_of(found, as_of)
                if found is None:
                    return None
            else:
                found = found[1:]
            return render(*found)

        entries: Iterable[tuple[str, Any]]
        after = start_position(after, self.prefix)
        if as_of is not None:
            entries = ((item.name, item) for item in catalog.query_tables(self.database.uid, after,
                                                                           min(limit + 1, 100)))
        else:
            entries = database_snapshot(self.ctx, self.transaction_id, self.database).listing(after,
                                                                                               min(limit + 1, 100))
        if self.prefix:
            entries = takewhile(lambda entry: entry[0].startswith(self.prefix), entries)
        return take_page(entries, limit, rendered, lambda entry: entry[0])


def list_tables(ctx: RequestContext, catalog_key: str, database_name: str, expression: str = "",
                as_of: Optional[float] = None, transaction_id: Optional[str] = None,
                prefix: str = "") -> TableListing:
    """The tables of a database whose names match ``expression`` (a Glue name pattern, "" for
    all) and start with ``prefix``: latest, as the transaction sees them, or as of ``as_of``.
    EntityNotFoundException if the database does not exist; InvalidInputException for a
    malformed pattern. Read them with ``TableListing.page``."""
    # The database must be visible (any permission on it or in it); the tables are filtered.
    access.require("GetDatabase", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    pattern = compile_name_pattern(expression) if expression else None
    return TableListing(ctx, database, pattern, as_of, transaction_id, fold(prefix))
