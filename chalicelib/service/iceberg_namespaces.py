"""Iceberg REST namespaces: a namespace IS a Glue database (single-level, as Glue's Iceberg
endpoint serves them), its properties the database's: ``location`` the LocationUri, ``comment``
the Description, every other property a Parameters entry (the mapping Paimon's databases use,
``service.paimon_databases``, so one database reads the same through every protocol).

Every entry point checks the caller's Lake Formation permissions under the Glue action it is
(through the functions it calls), before it reads or writes anything.
"""

from __future__ import annotations

from typing import Iterable, Optional

from chalicelib.errors import AlreadyExistsException, EntityNotFoundException, InvalidInputException, NamespaceNotEmptyException
from chalicelib.service import access, databases, paimon_databases
from chalicelib.service.lookups import fold
from chalicelib.store import catalog

NAMESPACE = "NAMESPACE"  # the resource type the wire answers as NoSuchNamespaceException


def not_found(name: str) -> EntityNotFoundException:
    """The 404 of a namespace, in Iceberg Java's words."""
    return EntityNotFoundException(f"Namespace does not exist: {name}", NAMESPACE, name)


def single_level(levels: tuple[str, ...], *, creating: bool = False) -> str:
    """The database a namespace names. A nested namespace names none (Glue's are single-level):
    400 when creating one, 404 otherwise."""
    if len(levels) == 1 and levels[0]:
        return levels[0]
    shown = ".".join(levels)
    if creating:
        raise InvalidInputException(f"Cannot create namespace {shown}: namespaces are single-level here "
                                    "(one Glue database each); nested namespaces are not supported")
    raise not_found(shown)


def create_namespace(catalog_key: str, name: str, properties: dict[str, str]) -> dict[str, str]:
    """Create a namespace (a database) with properties; the properties stored. AlreadyExistsException
    if the (folded) name is taken."""
    try:
        paimon_databases.create_database(catalog_key, name, properties)
    except AlreadyExistsException:
        raise AlreadyExistsException(f"Namespace already exists: {fold(name)}") from None
    return load_properties(catalog_key, name)


def load_properties(catalog_key: str, name: str) -> dict[str, str]:
    """A namespace's properties. EntityNotFoundException (NAMESPACE) if there is none."""
    try:
        return dict(paimon_databases.get_database(catalog_key, name).options)
    except EntityNotFoundException:
        raise not_found(name) from None


def exists(catalog_key: str, name: str) -> bool:
    """Whether the namespace exists (GetDatabase's permission: a caller who may not see it gets
    AccessDeniedException, as from GetDatabase)."""
    access.require("GetDatabase", catalog_key, name)
    return catalog.get_database(catalog_key, fold(name)) is not None if len(name) <= 255 else False


def list_namespaces(catalog_key: str, after: Optional[str], limit: int) -> tuple[list[str], Optional[str]]:
    """Up to ``limit`` namespace names after ``after`` that the caller may see, and the position
    to resume after (None: the last)."""
    return paimon_databases.list_databases(catalog_key, after, limit)


def update_properties(catalog_key: str, name: str, updates: dict[str, str],
                      removals: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """Set and remove properties (other properties stay): (updated, removed, missing), the keys
    removed being those the namespace had, ``missing`` the others. InvalidInputException if a key
    is both set and removed; EntityNotFoundException (NAMESPACE) if there is none."""
    removing = list(dict.fromkeys(removals))
    if set(removing) & set(updates):
        raise InvalidInputException("Invalid namespace update: a property cannot be both set and removed")
    before = load_properties(catalog_key, name)
    try:
        paimon_databases.alter_database(catalog_key, name, updates, removing)
    except EntityNotFoundException:
        raise not_found(name) from None
    removed = [key for key in removing if key in before]
    missing = [key for key in removing if key not in before]
    return sorted(updates), removed, missing


def drop_namespace(catalog_key: str, name: str) -> None:
    """Drop an empty namespace. NamespaceNotEmptyException while it holds a table or view (Glue's
    DeleteDatabase would delete them with it; the spec's drop refuses); EntityNotFoundException
    (NAMESPACE) if there is none."""
    access.require("DeleteDatabase", catalog_key, name)
    item = catalog.get_database(catalog_key, fold(name)) if len(name) <= 255 else None
    if item is None:
        raise not_found(name)
    if next(iter(catalog.query_tables(item.uid, None, 1)), None) is not None:
        raise NamespaceNotEmptyException(f"Namespace {item.name} is not empty: it holds tables or views")
    try:
        databases.delete_database(catalog_key, name)
    except EntityNotFoundException:
        raise not_found(name) from None
