"""Databases of a catalog: create, read, list, replace and delete (with everything in them).

A database is stored as its Glue ``Database`` object (the members of a ``DatabaseInput`` plus
``CreateTime``; ``Parameters`` and every other member round-trip as given). Names are folded to
lowercase. Every write keeps SearchTables' postings in step (``service.search_index``).
"""

from __future__ import annotations

import time
from itertools import takewhile
from typing import Any, Callable, Iterable, Optional

from chalicelib.errors import ConcurrentModificationException, InvalidInputException, database_already_exists
from chalicelib.service import access, cleanup, search_index, tags
from chalicelib.service.lookups import fold, require_database
from chalicelib.service.paging import take_page
from chalicelib.store import catalog
from chalicelib.attempts import Policy, attempts

# What Glue reports when a database is created without explicit default permissions
# (Lake Formation's "use only IAM access control" default).
DEFAULT_TABLE_PERMISSIONS = [
    {"Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}, "Permissions": ["ALL"]}
]
_INPUT_MEMBERS = ("Description", "LocationUri", "Parameters", "CreateTableDefaultPermissions",
                  "TargetDatabase", "FederatedDatabase")


def now() -> float:
    """A creation / update time as the catalog stores it: epoch seconds, to the millisecond."""
    return round(time.time(), 3)


def _database_document(database_input: dict[str, Any], create_time: float) -> dict[str, Any]:
    doc: dict[str, Any] = {"Name": fold(database_input["Name"])}
    # A member sent as JSON null is absent, as AWS's JSON protocols read it.
    doc.update({k: database_input[k] for k in _INPUT_MEMBERS if database_input.get(k) is not None})
    doc.setdefault("CreateTableDefaultPermissions", DEFAULT_TABLE_PERMISSIONS)
    doc["CreateTime"] = create_time
    return doc


def create_database(catalog_key: str, database_input: dict[str, Any],
                    tag_map: Optional[dict[str, str]] = None) -> None:
    """Create a database from a Glue ``DatabaseInput`` (with CreateDatabase's ``Tags``),
    atomically: the name is taken by exactly one of several racing creates, and the tags are
    stored under the new database's uid before it exists, so they appear with it or not at all.
    AlreadyExistsException if the (lowercased) name is taken."""
    access.require("CreateDatabase", catalog_key)
    doc = _database_document(database_input, now())
    access.require_location(catalog_key, doc.get("LocationUri"))
    if database_input.get("CreateTableDefaultPermissions") is None:
        doc["CreateTableDefaultPermissions"] = access.default_table_permissions(catalog_key)
    grants = access.grant_items(catalog_key, access.new_database_grants(catalog_key, doc["Name"]))
    uid = catalog.new_uid()
    tags.tag_new_resource(catalog_key, "database", uid, tag_map)
    search_index.before_database_write(catalog_key, uid, doc)
    try:
        catalog.create_database(catalog_key, doc["Name"], doc, uid, catalog.AlsoWrite(puts=grants))
    except catalog.ConditionFailed:
        if tag_map:
            tags.forget_resource(catalog_key, "database", uid)
        raise database_already_exists() from None
    cleanup.help_with_expired()


def get_database(catalog_key: str, name: str) -> dict[str, Any]:
    """The stored ``Database`` object (without CatalogId); EntityNotFoundException if none."""
    access.require("GetDatabase", catalog_key, name)
    return catalog.load(require_database(catalog_key, name))


def list_databases(catalog_key: str, after: Optional[str], limit: int,
                   render: Callable[[dict[str, Any]], Any] = lambda doc: doc,
                   names_only: bool = False, prefix: str = "") -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` databases in name order after position ``after`` (None: from the first),
    within the response byte budget (``service.paging``), each as ``render(Database object)``
    or, with ``names_only``, as ``{"Name": name}`` (no document is decoded). With ``prefix``
    (already folded), only names starting with it: the read starts at the prefix and stops
    after it, so it costs the matching databases only.

    Returns the page and the position to resume after (a database name), None after the last.
    """
    def rendered(item: Any) -> Any:
        return {"Name": item.name} if names_only else render(catalog.load(item))

    start = start_position(after, prefix)
    items = catalog.query_databases(catalog_key, start, limit + 1 if prefix else limit)
    if prefix:
        items = takewhile(lambda item: item.name.startswith(prefix), items)
    visible = access.database_filter(catalog_key)
    return take_page(filter(lambda item: visible(item.name), items), limit, rendered, lambda item: item.name)


def before_prefix(prefix: str) -> Optional[str]:
    """A position just before every name that starts with ``prefix`` (None: from the first).

    Positions are exclusive, so this is a string sorting below ``prefix`` and above every name
    that does not start with it: the prefix with its last character decremented and padded with
    the highest code point, enough of it that no name of at most 255 characters sorts in between
    (and the key stays within DynamoDB's 1,024 bytes).
    """
    if not prefix:
        return None
    last = ord(prefix[-1])
    if last == 0:
        return prefix[:-1] or None
    below = last - 1 if not 0xD800 <= last - 1 <= 0xDFFF else 0xD7FF  # never a lone surrogate
    return prefix[:-1] + chr(below) + "\U0010ffff" * max(256 - len(prefix), 0)


def start_position(after: Optional[str], prefix: str) -> Optional[str]:
    """Where a listing of the names starting with ``prefix`` resumes after position ``after``."""
    floor = before_prefix(prefix)
    if after is None or floor is None:
        return after if floor is None else floor
    return max(after, floor)


def alter_database(catalog_key: str, name: str, set_members: dict[str, Any],
                   set_parameters: dict[str, str], remove_parameters: Iterable[str]) -> None:
    """Change some of a database's Parameters (and other ``DatabaseInput`` members, such as
    Description or LocationUri) and keep the rest: a partial update, not a replace.

    Atomic against concurrent writers: a compare-and-set of the stored definition, re-read and
    re-applied when another write landed in between, so no concurrent change is lost.
    EntityNotFoundException if there is no such database (or it was deleted meanwhile).
    """
    access.require("UpdateDatabase", catalog_key, name)
    removals = set(remove_parameters)
    for _ in attempts(Policy(attempts=8)):
        item = require_database(catalog_key, name)
        old = catalog.load(item)
        doc = dict(old)
        doc.update(set_members)
        parameters = {k: v for k, v in (old.get("Parameters") or {}).items() if k not in removals}
        parameters.update(set_parameters)
        doc["Parameters"] = parameters
        for member in [k for k, v in doc.items() if v is None]:
            del doc[member]
        if doc == old:
            return
        search_index.before_database_write(item.catalog, item.uid, doc, old)
        try:
            catalog.replace_database(item, doc, unchanged=True)
        except catalog.ConditionFailed:
            continue
        search_index.after_database_write(item.catalog, doc, old)
        return
    raise ConcurrentModificationException("Database is being changed by other requests; retry.")


def update_database(catalog_key: str, name: str, database_input: dict[str, Any]) -> None:
    """Replace a database's definition with a ``DatabaseInput`` (CreateTime is kept, and so are
    the default permissions when the input leaves them out).

    EntityNotFoundException if there is no such database; InvalidInputException if the input
    names another database (databases cannot be renamed); ConcurrentModificationException if
    it was deleted or re-created meanwhile (the replace is conditional on the same database).
    """
    access.require("UpdateDatabase", catalog_key, name)
    item = require_database(catalog_key, name)
    if fold(database_input["Name"]) != item.name:
        raise InvalidInputException(
            f"DatabaseInput.Name '{database_input['Name']}' differs from Name '{name}': "
            "databases cannot be renamed")
    old = catalog.load(item)
    doc = _database_document(database_input, old["CreateTime"])
    if "CreateTableDefaultPermissions" not in database_input:
        doc["CreateTableDefaultPermissions"] = old.get("CreateTableDefaultPermissions", DEFAULT_TABLE_PERMISSIONS)
    search_index.before_database_write(item.catalog, item.uid, doc, old)
    try:
        catalog.replace_database(item, doc)
    except catalog.ConditionFailed:
        raise ConcurrentModificationException("Database was deleted or re-created concurrently.") from None
    search_index.after_database_write(item.catalog, doc, old)


def delete_database(catalog_key: str, name: str, drop_files: bool = False) -> None:
    """Delete a database and everything in it (tables, versions, partitions, statistics...).

    One atomic store write (conditional on the same database) unlinks the database item and
    records a cleanup job: from then on the name is free and nothing below it is reachable (it
    is all keyed by the database's uid); the contents are deleted in the background
    (``service.cleanup``), so the answer takes the same time however much the database holds.
    ``drop_files``: the cleanup removes the managed directories of its tables too (see
    ``cleanup.register_files_remover``). EntityNotFoundException if there is no such database;
    ConcurrentModificationException if it was deleted or re-created meanwhile.
    """
    access.require("DeleteDatabase", catalog_key, name)
    item = require_database(catalog_key, name)
    try:
        catalog.delete_database_item(item, drop_files)
    except catalog.ConditionFailed:
        raise ConcurrentModificationException("Database was deleted or re-created concurrently.") from None
    access.forget_database(catalog_key, item.name)
    cleanup.enqueued()
    cleanup.help_with_expired()
