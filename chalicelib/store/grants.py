"""Lake Formation grants, data lake settings and registered locations in DynamoDB.

Grants: one ``catalog_entries`` item per (resource, principal) under one hash key per catalog,
``<catalog key> SEP lf-grants``; the range key is ``<resource key> SEP <principal>``, where the
resource key roots every resource below a database at the database (``D SEP <database> SEP``),
so all that bears on a database and its tables is one ``begins_with`` Query, and what bears on
one table is a handful of exact keys: one BatchGetItem (:func:`lookup`). ``doc`` holds the
grant (permissions, grantable ones, columns, who changed it last and when).

Settings: the catalog document ``settings SEP datalake`` (``store.catalog_documents``), read in
that same BatchGetItem. Registered locations: ``catalog_entries`` under
``<catalog key> SEP lf-resources``, keyed by the resource ARN.

Every write is one conditional single-item write (compare-and-set on the bytes read, or "not
there yet"): a racing writer loses and re-reads, nothing is ever half-written.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Sequence

from pynamodb.exceptions import TransactWriteError

from chalicelib import clock, metrics
from chalicelib.domain import permissions as model
from chalicelib.domain.permissions import ColumnScope, Grant
from chalicelib.errors import InvalidInputException
from chalicelib.store import catalog_documents as documents
from chalicelib.store.catalog import ExtraKey, get_keys, picked
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.dynamo.models import SEP, CatalogDocumentItem, CatalogEntryItem
from chalicelib.store.dynamo.conditions import condition_failed
from chalicelib.store.dynamo.fence import transact
from chalicelib.store.dynamo.retry import conditional

GRANTS = "lf-grants"
RESOURCES = "lf-resources"
SETTINGS_KEY = documents.settings_key("datalake")
MAX_KEY_BYTES = 1024  # DynamoDB's limit on a range key
_BATCH_KEYS = 100  # BatchGetItem's

# Resource key markers: the catalog, a location, and below a database: the database itself,
# its table wildcard, a table, a table's columns.
_CATALOG, _LOCATION, _DATABASE = "C", "L", "D"
_ITSELF, _WILDCARD, _TABLE, _COLUMNS = "=", "*", "T", "K"


# ------------------------------------------------------------------------------ keys
def grants_scope(catalog_key: str) -> str:
    """The hash key of a catalog's grants."""
    return f"{catalog_key}{SEP}{GRANTS}"


def resources_scope(catalog_key: str) -> str:
    """The hash key of a catalog's registered locations."""
    return f"{catalog_key}{SEP}{RESOURCES}"


# A name longer than this many UTF-8 bytes stands in keys as its digest, so that a database's
# and a table's longest names (255 characters, up to 1,020 bytes each) and a principal still fit
# in one 1,024-byte range key. The grant's document keeps the names themselves.
_NAME_BYTES = 200
_DIGESTED = "\x02"  # sorts before every name character a Glue name may hold


def _name_part(name: str) -> str:
    if len(name.encode("utf-8")) <= _NAME_BYTES:
        return name
    return _DIGESTED + hashlib.sha256(name.encode("utf-8")).hexdigest()


def database_prefix(database: str) -> str:
    """The start of every resource key at or below ``database`` (folded name)."""
    return f"{_DATABASE}{SEP}{_name_part(database)}{SEP}"


def resource_key(kind: str, database: Optional[str] = None, table: Optional[str] = None,
                 location: Optional[str] = None) -> str:
    """The resource key of a grant's resource: ``kind`` as in domain.permissions (a TABLE grant
    without ``table`` is the database's table wildcard)."""
    if kind == model.CATALOG:
        return _CATALOG
    if kind == model.DATA_LOCATION:
        return f"{_LOCATION}{SEP}{location}"
    assert database is not None
    if kind == model.DATABASE:
        return database_prefix(database) + _ITSELF
    if kind == model.TABLE:
        return database_prefix(database) + (_WILDCARD if table is None else f"{_TABLE}{SEP}{_name_part(table)}")
    return database_prefix(database) + f"{_COLUMNS}{SEP}{_name_part(table or '')}"


def grants_prefix(kind: str, database: Optional[str] = None, table: Optional[str] = None,
                  location: Optional[str] = None) -> str:
    """The start of the range keys of every grant on one resource (any principal)."""
    return resource_key(kind, database, table, location) + SEP


def kind_prefix(kind: str) -> str:
    """The start of the range keys of every grant on resources of ``kind``: the catalog, data
    locations, or (DATABASE and TABLE alike: they share their database's prefix) databases and
    everything in them."""
    return {model.CATALOG: _CATALOG, model.DATA_LOCATION: _LOCATION}.get(kind, _DATABASE) + SEP


def key_of(grant: Grant) -> str:
    """The range key of a grant: its resource's key and its principal."""
    key = f"{resource_key(grant.kind, grant.database, grant.table, grant.location)}{SEP}{grant.principal}"
    if len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise InvalidInputException("The resource and principal of a grant are too long to be stored together "
                                    f"(at most {MAX_KEY_BYTES} bytes)")
    return key


def resource_of_key(key: str) -> str:
    """The resource key part of a grant's range key."""
    return key.rpartition(SEP)[0]


# ------------------------------------------------------------------------------ grant items
@dataclass(frozen=True)
class StoredGrant:
    """One stored grant, when and by whom it was last changed, and the bytes as stored (the
    condition of the next change)."""

    key: str
    grant: Grant
    updated: float
    updated_by: str
    raw: bytes


def _encode(grant: Grant, updated: float, updated_by: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"principal": grant.principal, "kind": grant.kind, "permissions": sorted(grant.permissions),
                           "grantable": sorted(grant.grantable), "updated": updated, "by": updated_by}
    for name, value in (("database", grant.database), ("table", grant.table), ("location", grant.location)):
        if value is not None:
            doc[name] = value
    if grant.columns is not None:
        if grant.columns.names is not None:
            doc["columns"] = sorted(grant.columns.names)
        else:
            doc["excluded"] = sorted(grant.columns.excluded)
    return doc


def _decode(key: str, raw: bytes) -> StoredGrant:
    doc = decode_document(raw)
    columns = None
    if "columns" in doc:
        columns = ColumnScope(names=frozenset(doc["columns"]))
    elif "excluded" in doc:
        columns = ColumnScope(excluded=frozenset(doc["excluded"]))
    grant = Grant(doc["principal"], doc["kind"], doc.get("database"), doc.get("table"),
                  frozenset(doc["permissions"]), frozenset(doc["grantable"]), columns, doc.get("location"))
    return StoredGrant(key, grant, doc["updated"], doc["by"], raw)


def get(catalog_key: str, grant: Grant) -> Optional[StoredGrant]:
    """What ``grant``'s principal holds on ``grant``'s resource (one consistent GetItem), or None."""
    key = key_of(grant)
    metrics.count_read()
    try:
        item = CatalogEntryItem.get(grants_scope(catalog_key), key, consistent_read=True)
    except CatalogEntryItem.DoesNotExist:
        return None
    return _decode(key, bytes(item.doc))


# ------------------------------------------------------------------------------ versions
# Each database's grants (its own and everything in it) carry a version: a random token in
# ``catalog_entries`` under ``<catalog key> SEP lf-grant-versions``, keyed like the database's
# grants, put anew in the same DynamoDB transaction as every change to them (grant, revoke,
# default grants, purge). ``lookup`` reads it with the grants, so a process may keep what
# ``on_database`` read and reuse it for as long as the version it read it under is current.
VERSIONS = "lf-grant-versions"


def versions_scope(catalog_key: str) -> str:
    """The hash key of a catalog's grant versions."""
    return f"{catalog_key}{SEP}{VERSIONS}"


_ALL_DATABASES = "*"  # the version of every database's grants together (which databases one may see)


def version_item(catalog_key: str, database: Optional[str]) -> CatalogEntryItem:
    """A new version of ``database``'s grants (None: of the grants of every database), for the
    transaction that changes them."""
    key = _ALL_DATABASES if database is None else database_prefix(database)
    return CatalogEntryItem(versions_scope(catalog_key), key, doc=os.urandom(16))


def version_items(catalog_key: str, databases: Iterable[str]) -> list[CatalogEntryItem]:
    """New versions for a change to grants in ``databases``: each one's and every database's."""
    names = sorted(set(databases))
    return [version_item(catalog_key, name) for name in names] + ([version_item(catalog_key, None)] if names else [])


def _write(catalog_key: str, item: CatalogEntryItem, database: Optional[str], delete: bool, condition: Any) -> bool:
    """One grant's write, conditional; with its database's new version in the same transaction
    (catalog and location grants have none). False when the condition failed."""
    if database is None:
        return conditional(lambda: item.delete(condition=condition) if delete else item.save(condition=condition))

    def build(tx: Any) -> None:
        if delete:
            tx.delete(item, condition=condition)
        else:
            tx.save(item, condition=condition)
        for version in version_items(catalog_key, [database]):
            tx.save(version)
    try:
        transact(None, build)
    except TransactWriteError as error:
        if condition_failed(error):
            return False
        raise
    return True


def put(catalog_key: str, grant: Grant, updated_by: str, replacing: Optional[StoredGrant]) -> bool:
    """Store ``grant`` as what its principal holds on its resource, if what is stored is still
    ``replacing`` (None: only if nothing is). False when another change landed first."""
    key = key_of(grant)
    item = CatalogEntryItem(grants_scope(catalog_key), key,
                            doc=encode_document(_encode(grant, clock.now(), updated_by), "grant"))
    condition = (CatalogEntryItem.key.does_not_exist() if replacing is None
                 else CatalogEntryItem.doc == replacing.raw)
    return _write(catalog_key, item, grant.database, False, condition)


def grant_items(catalog_key: str, grants: Sequence[Grant], updated_by: str) -> list[CatalogEntryItem]:
    """``grants`` as items for another write's transaction (:func:`grant_item`), with a new
    version of each database they are in."""
    items = [grant_item(catalog_key, grant, updated_by) for grant in grants]
    databases = sorted({grant.database for grant in grants if grant.database is not None})
    return items + version_items(catalog_key, databases)


def grant_item(catalog_key: str, grant: Grant, updated_by: str) -> CatalogEntryItem:
    """``grant`` as an item for another write's DynamoDB transaction to put (a new database's or
    table's default grants, written with it or not at all): unconditional, so it replaces
    whatever a dropped namesake's grant left behind."""
    return CatalogEntryItem(grants_scope(catalog_key), key_of(grant),
                            doc=encode_document(_encode(grant, clock.now(), updated_by), "grant"))


def delete(catalog_key: str, stored: StoredGrant) -> bool:
    """Remove a grant if it is still exactly as read; False if it changed or went meanwhile."""
    item = CatalogEntryItem(grants_scope(catalog_key), stored.key)
    return _write(catalog_key, item, stored.grant.database, True, CatalogEntryItem.doc == stored.raw)


def listing(catalog_key: str, prefix: str = "", after: Optional[str] = None,
            page_size: int = 100) -> Iterator[StoredGrant]:
    """Grants whose range keys start with ``prefix`` (a resource key or :func:`database_prefix`),
    in key order, after range key ``after``: one Query, read lazily in pages."""
    scope = grants_scope(catalog_key)
    start = {"scope": {"S": scope}, "key": {"S": after}} if after is not None else None
    condition = CatalogEntryItem.key.startswith(prefix) if prefix else None
    for item in CatalogEntryItem.query(scope, condition, consistent_read=True, last_evaluated_key=start,
                                       page_size=page_size):
        metrics.count_read()
        yield _decode(item.key, bytes(item.doc))


def by_principal(catalog_key: str, principal: str, after: Optional[str] = None) -> Iterator[StoredGrant]:
    """A principal's grants in the catalog, in key order: one Query of the catalog's grants,
    kept here by the range key's end (DynamoDB filters only non-key attributes, so it reads every
    grant of the catalog either way)."""
    suffix = f"{SEP}{principal}"
    for stored in listing(catalog_key, after=after, page_size=1000):
        if stored.key.endswith(suffix):
            yield stored


def on_database(catalog_key: str, principals: Sequence[str], database: str) -> list[Grant]:
    """The grants of ``principals`` on ``database`` and everything in it (its table wildcard,
    its tables, their columns): ONE Query (``begins_with`` the database's prefix), for listings
    that filter a database's tables."""
    wanted = set(principals)
    return [stored.grant for stored in listing(catalog_key, database_prefix(database), page_size=1000)
            if stored.grant.principal in wanted]


def on_databases(catalog_key: str, principals: Sequence[str]) -> list[Grant]:
    """The grants of ``principals`` at or below any database: ONE Query of every database grant
    of the catalog (the principal ends the key), for a listing of databases."""
    wanted = set(principals)
    return [stored.grant for stored in listing(catalog_key, kind_prefix(model.DATABASE), page_size=1000)
            if stored.grant.principal in wanted]


def purge_database(catalog_key: str, database: str) -> int:
    """Delete every grant at or below a deleted database (one Query, one conditional delete
    each); the number deleted."""
    deleted = 0
    for stored in list(listing(catalog_key, database_prefix(database), page_size=1000)):
        deleted += delete(catalog_key, stored)
    return deleted


def purge_table(catalog_key: str, database: str, table: str) -> int:
    """Delete every grant on a deleted table and its columns (two Queries, one conditional
    delete each); the number deleted."""
    deleted = 0
    for kind in (model.TABLE, model.COLUMNS):
        for stored in list(listing(catalog_key, grants_prefix(kind, database, table))):
            deleted += delete(catalog_key, stored)
    return deleted


def renamed(grant: Grant, database: str, table: str) -> Grant:
    """``grant`` on a table's new name."""
    return Grant(grant.principal, grant.kind, database, table, grant.permissions, grant.grantable, grant.columns,
                 grant.location)


def moved_table(catalog_key: str, database: str, table: str, new_database: str, new_table: str,
                limit: int = 80) -> Optional[tuple[list[CatalogEntryItem], list[CatalogEntryItem]]]:
    """The writes that move a renamed table's grants (its own and its columns') to its new name:
    (items to put, with both databases' new versions; items to delete), for the rename's own
    transaction; None when there are more than ``limit`` (they would not fit in one)."""
    found = [stored for kind in (model.TABLE, model.COLUMNS)
             for stored in listing(catalog_key, grants_prefix(kind, database, table))]
    if len(found) > limit:
        return None
    puts, deletes = [], []
    for stored in found:
        puts.append(grant_item(catalog_key, renamed(stored.grant, new_database, new_table), stored.updated_by))
        deletes.append(CatalogEntryItem(grants_scope(catalog_key), stored.key))
    versions = version_items(catalog_key, [database, new_database]) if found else []
    return puts + versions, deletes


# ------------------------------------------------------------------------------ one check
@dataclass(frozen=True)
class Held:
    """What bears on one request: the data lake settings (AWS's defaults when never put;
    ``configured`` says whether they were) and the grants found."""

    settings: dict[str, Any]
    configured: bool
    grants: list[Grant]
    # The version of the database's grants (None: never changed, or no database looked up), and
    # of every database's (None: never changed).
    version: Optional[bytes] = None
    databases_version: Optional[bytes] = None

    @property
    def admins(self) -> frozenset[str]:
        """The data lake administrators."""
        return model.principals_of(self.settings.get("DataLakeAdmins"))

    @property
    def read_only_admins(self) -> frozenset[str]:
        """The read-only administrators."""
        return model.principals_of(self.settings.get("ReadOnlyAdmins"))


def lookup(catalog_key: str, principals: Sequence[str], database: Optional[str],
           table: Optional[str] = None) -> Held:
    """The settings and every grant of ``principals`` that bears on ``table`` of ``database``
    (or on ``database``, or on the catalog alone when ``database`` is None): the table's own and
    its columns', the database's table wildcard, the database's own and the catalog's, for each
    principal, with the data lake settings document, in ONE BatchGetItem."""
    return lookup_with(catalog_key, principals, database, table, ())[0]


def lookup_with(catalog_key: str, principals: Sequence[str], database: Optional[str], table: Optional[str],
                extra: Sequence[ExtraKey]) -> tuple[Held, list[dict[str, Any] | None]]:
    """``lookup`` and the ``extra`` items (wire form, None where missing, in order; counted as
    read), in the same ONE BatchGetItem when they fit in it (a Paimon call's database, table
    and head: the permission check costs no round trip of its own). The caller must not look
    at the extra items before the check allows it."""
    resources = [resource_key(model.CATALOG)]
    if database is not None:
        resources += [resource_key(model.DATABASE, database), resource_key(model.TABLE, database)]
        if table is not None:
            resources += [resource_key(model.TABLE, database, table), resource_key(model.COLUMNS, database, table)]
    scope = grants_scope(catalog_key)
    # A key too long to be stored names a grant that cannot exist (key_of refuses it).
    keys = [{"scope": dj.s(scope), "key": dj.s(key)}
            for principal in dict.fromkeys(principals) for resource in resources
            for key in (f"{resource}{SEP}{principal}",) if len(key.encode("utf-8")) <= MAX_KEY_BYTES]
    if len(keys) + 3 > _BATCH_KEYS:  # + the two versions and the settings
        raise ValueError(f"lookup: {len(keys) + 3} keys do not fit in one BatchGetItem")
    versions = versions_scope(catalog_key)
    keys.append({"scope": dj.s(versions), "key": dj.s(_ALL_DATABASES)})
    if database is not None:
        keys.append({"scope": dj.s(versions), "key": dj.s(database_prefix(database))})
    entries, settings_table = CatalogEntryItem.Meta.table_name, CatalogDocumentItem.Meta.table_name
    wanted: dict[str, list[dict[str, Any]]] = {entries: keys, settings_table: [
        {"catalog": dj.s(catalog_key), "key": dj.s(SETTINGS_KEY)}]}
    together = len(keys) + 1 + len(extra) <= _BATCH_KEYS and not any(
        key.table_name in wanted for key in extra)
    if together:
        for key in extra:
            wanted.setdefault(key.table_name, []).append(key.key)
    found = dj.batch_get(wanted)
    metrics.count_permission_read(len(found[entries]) + len(found[settings_table]))
    if together:
        metrics.count_read(len(extra))
        extras = picked(found, extra)
    else:
        extras = get_keys(extra) if extra else []
    found_versions = {item["key"]["S"]: bytes(item["doc"]["B"]) for item in found[entries]
                      if item["scope"]["S"] == versions}
    version = found_versions.get(database_prefix(database)) if database is not None else None
    every = found_versions.get(_ALL_DATABASES)
    grants = [_decode(item["key"]["S"], item["doc"]["B"]).grant for item in found[entries]
              if item["scope"]["S"] != versions]
    grants.sort(key=key_of)  # BatchGetItem answers in no particular order
    settings_items = found[settings_table]
    if settings_items:
        return Held(_with_defaults(decode_document(settings_items[0]["doc"]["B"])), True, grants, version,
                    every), extras
    return Held(model.default_settings(), False, grants, version, every), extras


# ------------------------------------------------------------------------------ settings
def _with_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    settings = model.default_settings()
    settings.update(stored)
    return settings


def get_settings(catalog_key: str) -> tuple[dict[str, Any], Optional[documents.StoredDocument]]:
    """The data lake settings (AWS's defaults for members never put) and the stored document
    (None: never put), the condition of :func:`put_settings`."""
    stored = documents.get(catalog_key, SETTINGS_KEY)
    if stored is None:
        return model.default_settings(), None
    return _with_defaults(stored.data), stored


def put_settings(catalog_key: str, settings: dict[str, Any], replacing: Optional[documents.StoredDocument]) -> bool:
    """Replace the data lake settings if the stored document is still ``replacing``; False
    when another put landed first."""
    return documents.put(catalog_key, SETTINGS_KEY, settings, replacing, "data lake settings")


# ------------------------------------------------------------------------------ locations
@dataclass(frozen=True)
class Location:
    """A registered location: its ARN, what RegisterResource / UpdateResource stored, and the
    bytes as stored."""

    arn: str
    info: dict[str, Any]
    raw: bytes


def _check_location_key(arn: str) -> None:
    if len(arn.encode("utf-8")) > MAX_KEY_BYTES:
        raise InvalidInputException(f"ResourceArn is too long to be registered (at most {MAX_KEY_BYTES} bytes)")


def get_location(catalog_key: str, arn: str) -> Optional[Location]:
    """A registered location (one consistent GetItem), or None."""
    _check_location_key(arn)
    metrics.count_read()
    try:
        item = CatalogEntryItem.get(resources_scope(catalog_key), arn, consistent_read=True)
    except CatalogEntryItem.DoesNotExist:
        return None
    raw = bytes(item.doc)
    return Location(arn, decode_document(raw), raw)


def put_location(catalog_key: str, arn: str, info: dict[str, Any], replacing: Optional[Location]) -> bool:
    """Register ``arn`` (``replacing`` None: only if it is not registered yet) or change its
    registration (only if it is still ``replacing``); False when the condition fails."""
    _check_location_key(arn)
    item = CatalogEntryItem(resources_scope(catalog_key), arn, doc=encode_document(info, "registered resource"))
    condition = (CatalogEntryItem.key.does_not_exist() if replacing is None
                 else CatalogEntryItem.doc == replacing.raw)
    return conditional(lambda: item.save(condition=condition))


def delete_location(catalog_key: str, arn: str) -> bool:
    """Deregister ``arn``; False if it was not registered."""
    _check_location_key(arn)
    item = CatalogEntryItem(resources_scope(catalog_key), arn)
    return conditional(lambda: item.delete(condition=CatalogEntryItem.key.exists()))


def list_locations(catalog_key: str, after: Optional[str] = None) -> Iterator[Location]:
    """Registered locations in ARN order, after ``after``: one Query, read lazily."""
    scope = resources_scope(catalog_key)
    start = {"scope": {"S": scope}, "key": {"S": after}} if after is not None else None
    for item in CatalogEntryItem.query(scope, consistent_read=True, last_evaluated_key=start):
        metrics.count_read()
        raw = bytes(item.doc)
        yield Location(item.key, decode_document(raw), raw)
