"""Paimon databases: a Paimon database IS a Glue database (one item, visible through both protocols).

Every entry point checks the caller's Lake Formation permissions (``service.access``) under
the Glue action it is, before it reads or writes anything.

The mapping is the one Paimon's HiveCatalog makes to a metastore database (convertToHiveDatabase,
getDatabaseImpl): the option ``comment`` is the Glue ``Description``, ``location`` the
``LocationUri``, every other option a ``Parameters`` entry (``owner`` included: Glue databases
have no owner member); read back, Parameters plus ``comment`` and ``location`` are the options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Iterable, Iterator, Optional

from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.errors import AlreadyExistsException, EntityNotFoundException
from chalicelib.service import access, databases, paging
from chalicelib.service.lookups import Database, fold
from chalicelib.store import catalog

DATABASE = "DATABASE"  # ErrorResponse.resourceType
COMMENT = "comment"  # Paimon's Catalog.COMMENT_PROP
LOCATION = "location"  # Catalog.DB_LOCATION_PROP
OWNER = "owner"  # Catalog.OWNER_PROP
_MEMBERS = {COMMENT: "Description", LOCATION: "LocationUri"}
# Glue's NameString: no database, table, view or function has a longer name, so a longer one in a
# path or pattern names nothing (and is never sent to DynamoDB, whose keys it could overflow).
MAX_NAME_CHARS = 255


@dataclass
class PaimonDatabase:
    """A database as Paimon's GetDatabaseResponse shows it (times in epoch milliseconds)."""

    id: str
    name: str
    location: Optional[str]
    options: dict[str, str] = field(default_factory=dict)
    owner: Optional[str] = None
    created_at: Optional[int] = None


def not_found(name: str) -> EntityNotFoundException:
    """Paimon's 404 for a database (resource type DATABASE)."""
    return EntityNotFoundException(f"Database {fold(name)} does not exist.", DATABASE, fold(name))


def require_database(catalog_key: str, name: str) -> Database:
    """The database item (the name folded); Paimon's 404 (DATABASE) if there is none."""
    item = catalog.get_database(catalog_key, fold(name)) if len(name) <= MAX_NAME_CHARS else None
    if item is None:
        raise not_found(name)
    return item


def databases_from(catalog_key: str, pattern: Optional[PrefixPattern],
                   first: Optional[str]) -> Iterator[Database]:
    """The catalog's databases matching ``pattern`` (folded: database names are Glue names) that
    the caller may see (``access.database_filter``: the global listings'), in name order, from
    ``first`` on (inclusive; None: from the pattern's prefix): a range read."""
    if pattern is not None:
        pattern = PrefixPattern(fold(pattern.prefix), pattern.exact)
        first = max(first or "", pattern.prefix) or None
    items: Iterator[Database] = catalog.query_databases(catalog_key, first, 100)
    if first is not None:
        found = catalog.get_database(catalog_key, first)
        if found is not None:
            items = chain([found], items)
    visible = access.database_filter(catalog_key)
    for item in items:
        if pattern is not None and not item.name.startswith(pattern.prefix):
            return
        if (pattern is None or pattern.matches(item.name)) and visible(item.name):
            yield item


def _database_input(name: str, options: dict[str, str]) -> dict[str, Any]:
    database_input: dict[str, Any] = {"Name": name}
    for option, member in _MEMBERS.items():
        if options.get(option) is not None:
            database_input[member] = options[option]
    database_input["Parameters"] = {k: v for k, v in options.items() if k not in _MEMBERS}
    return database_input


def create_database(catalog_key: str, name: str, options: dict[str, str]) -> None:
    """Create a database with Paimon options. AlreadyExistsException (DATABASE) if the (folded)
    name is taken."""
    access.require("CreateDatabase", catalog_key)
    try:
        databases.create_database(catalog_key, _database_input(name, options))
    except AlreadyExistsException:
        raise AlreadyExistsException(f"Database {fold(name)} already exists.", DATABASE, fold(name)) from None


def _render(uid: str, doc: dict[str, Any]) -> PaimonDatabase:
    options = dict(doc.get("Parameters") or {})
    for option, member in _MEMBERS.items():
        if doc.get(member) is not None:
            options[option] = doc[member]
    created = doc.get("CreateTime")
    return PaimonDatabase(uid, doc["Name"], doc.get("LocationUri"), options, options.get(OWNER),
                          None if created is None else int(round(created * 1000)))


def get_database(catalog_key: str, name: str) -> PaimonDatabase:
    """One database. EntityNotFoundException (DATABASE) if there is none."""
    access.require("GetDatabase", catalog_key, name)
    item = require_database(catalog_key, name)
    return _render(item.uid, catalog.load(item))


def list_databases(catalog_key: str, after: Optional[str], limit: int, prefix: str = "",
                   exact: Optional[str] = None) -> tuple[list[str], Optional[str]]:
    """Up to ``limit`` database names in order after ``after``, starting with ``prefix`` (or
    equal to ``exact``), of those the caller may see (``databases.list_databases`` filters them).
    Returns the names and the position to resume after (None: the last)."""
    start = fold(exact) if exact is not None else fold(prefix)
    page, last = databases.list_databases(catalog_key, after, limit, names_only=True, prefix=start)
    names = [entry["Name"] for entry in page]
    if exact is not None:
        names = [n for n in names if n == start]
        last = None
    return names, last


def alter_database(catalog_key: str, name: str, updates: dict[str, str], removals: Iterable[str]) -> None:
    """Set and remove options (a partial update of the Glue database: other Parameters and
    members stay). EntityNotFoundException (DATABASE) if there is none."""
    access.require("UpdateDatabase", catalog_key, name)
    removed = set(removals)
    members: dict[str, Any] = {member: None for option, member in _MEMBERS.items() if option in removed}
    members.update({member: updates[option] for option, member in _MEMBERS.items() if option in updates})
    parameters = {k: v for k, v in updates.items() if k not in _MEMBERS}
    try:
        databases.alter_database(catalog_key, name, members, parameters, removed - set(_MEMBERS))
    except EntityNotFoundException:
        raise not_found(name) from None


def drop_database(catalog_key: str, name: str) -> None:
    """Drop a database and everything in it, as Paimon's servers do (the cascade check is the
    client's: pypaimon lists the tables first unless asked to cascade). Each Paimon table's
    catalog state goes with it (purged by table uid), and each managed table's directory: within
    the request's work budget, the rest by the database's cleanup job. EntityNotFoundException
    (DATABASE) if there is none."""
    from chalicelib.service import paimon_tables  # the tables module builds on this one

    access.require("DeleteDatabase", catalog_key, name)
    deadline = paging.work_deadline()
    item = require_database(catalog_key, name)
    try:
        databases.delete_database(catalog_key, name, drop_files=True)
    except EntityNotFoundException:
        raise not_found(name) from None
    paimon_tables.remove_directories_of(item, deadline)
