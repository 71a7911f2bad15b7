"""Table versions: read one, page through all, delete archived ones.

The current version lives in the table item itself; older versions are archived items. A table
starts at version 0 and every update adds 1 (AWS numbering). Version ids travel as strings of a
non-negative integer, as Glue's model has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional

from chalicelib.service import access
from chalicelib.errors import InvalidInputException, ServiceError, table_version_not_found
from chalicelib.service.lookups import Table, require_database, require_table
from chalicelib.service.paging import take_page
from chalicelib.store import catalog

_MAX_VERSION = 2**63 - 1  # Glue's version ids are Java longs (and DynamoDB numbers hold 38 digits)


def parse_version(text: str, member: str = "VersionId") -> int:
    """A version id string as its number; InvalidInputException (naming ``member``) unless it is
    the string of an integer from 0 to 2**63 - 1."""
    # isdigit() alone admits other scripts' digits and superscripts ("²"), which int() refuses.
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_VERSION:
        raise InvalidInputException(
            f"{member} must be a string representation of an integer from 0 to {_MAX_VERSION}, got '{text}'")
    return int(text)


def _table(catalog_key: str, database_name: str, table_name: str) -> Table:
    return require_table(require_database(catalog_key, database_name), table_name)


def get_table_version(catalog_key: str, database_name: str, table_name: str,
                      version_id: Optional[str] = None) -> tuple[dict[str, Any], int]:
    """(Table object, version) of one version of a table (the current one when ``version_id``
    is None). EntityNotFoundException if the database, table or version does not exist;
    InvalidInputException for a malformed version id."""
    access.require("GetTableVersion", catalog_key, database_name, table_name)
    table = _table(catalog_key, database_name, table_name)
    current = table.version
    version = current if version_id is None else parse_version(version_id)
    if version == current:
        return catalog.load(table), version
    archived = catalog.get_archived_version(table.uid, version)
    if archived is None:
        raise table_version_not_found(str(version), table.name)
    return catalog.load(archived), version


@dataclass
class VersionListing:
    """The versions of one table, newest (the current one) first, to be read a page at a time."""

    table: Table

    @property
    def identity(self) -> tuple[str]:
        """What a page position is only valid for: the table by its uid. Bind page tokens to it."""
        return (self.table.uid,)

    def page(self, below: Optional[int], limit: int,
             render: Callable[[dict[str, Any], int], Any]) -> tuple[list[Any], Optional[int]]:
        """Up to ``limit`` versions below version ``below`` (None: from the current one), within
        the response byte budget, each as ``render(Table object, version)``. Returns the page and
        the position to resume after (a version number), None after the oldest."""
        table = self.table

        def versions() -> Iterator[tuple[int, Any]]:
            if below is None:
                yield table.version, table
            archived = catalog.query_archived_versions(table.uid, below if below is not None else table.version,
                                                       min(limit + 1, 100))
            yield from ((item.version, item) for item in archived)

        return take_page(versions(), limit, lambda pair: render(catalog.load(pair[1]), pair[0]),
                         lambda pair: pair[0])


def list_table_versions(catalog_key: str, database_name: str, table_name: str) -> VersionListing:
    """The versions of a table; EntityNotFoundException if the database or table does not exist.
    Read them with ``VersionListing.page``."""
    access.require("GetTableVersions", catalog_key, database_name, table_name)
    return VersionListing(_table(catalog_key, database_name, table_name))


def _delete_version(table: Table, version_id: str) -> None:
    version = parse_version(version_id)
    if version == table.version:
        raise InvalidInputException(
            f"Version {version} is the current version of table {table.name} and cannot be deleted")
    if not catalog.delete_archived_version(table.uid, version):
        raise table_version_not_found(str(version), table.name)


def delete_table_version(catalog_key: str, database_name: str, table_name: str, version_id: str) -> None:
    """Delete one archived version (atomically: of racing deletes one succeeds).
    EntityNotFoundException if the database, table or version does not exist;
    InvalidInputException for a malformed version id or the current version."""
    access.require("DeleteTableVersion", catalog_key, database_name, table_name)
    _delete_version(_table(catalog_key, database_name, table_name), version_id)


def delete_table_versions(catalog_key: str, database_name: str, table_name: str,
                          version_ids: Iterable[str]) -> list[tuple[str, ServiceError]]:
    """Delete archived versions, each as ``delete_table_version`` does; one that cannot be
    deleted does not stop the others. Returns (version id, error) for each failure;
    EntityNotFoundException if the database or table does not exist."""
    access.require("BatchDeleteTableVersion", catalog_key, database_name, table_name)
    table = _table(catalog_key, database_name, table_name)
    errors: list[tuple[str, ServiceError]] = []
    for version_id in version_ids:
        try:
            _delete_version(table, version_id)
        except ServiceError as error:
            errors.append((version_id, error))
    return errors
