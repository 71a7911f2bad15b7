"""Which Iceberg files the server made, and for which catalog: the proof a purge needs before it
deletes anything, and a register before it adopts a directory of the warehouse.

The server places a table created without a location in the warehouse's managed area
(``<warehouse>/<database>.db/<table>-<id><tag>``) and names every metadata file it writes
``NNNNN-<uuid>.metadata.json``. Both names carry a tag, an HMAC under the server's key
(``page_tokens.tag``) over the catalog and the random part, so no caller can forge one:

- a directory's tag binds the catalog and the directory's id: the server made it for a table of
  this catalog (a rename keeps it the table's; another catalog cannot claim it);
- a metadata file's uuid is 16 random hex digits and 16 of tag over the catalog, the table
  location and those digits: this catalog's server wrote it for a table at that location.

A purge removes a managed directory only when its tag proves it this catalog's (tables of one
catalog may share one, by a register: as in Iceberg, purging either removes the files both read),
else only the metadata files whose names prove them written here for that location; never a
file a client wrote, or another catalog's.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from chalicelib import page_tokens
from chalicelib.service.lookups import Database, fold
from chalicelib.store import warehouse
from chalicelib.domain.iceberg import metadata as iceberg_metadata

log = logging.getLogger(__name__)

_DIRECTORY_SCOPE = "iceberg-managed-directory"
_FILE_SCOPE = "iceberg-metadata-file"
_ID, _TAG = 16, 16  # hex digits of a directory's random id and of its tag


def managed_directory(catalog_key: str, database: Database, name: str) -> str:
    """A new directory in the warehouse's managed area for table ``name`` of ``database``: the
    names made safe (``warehouse.path_segment``), then a fresh id and this catalog's tag."""
    fresh = uuid.uuid4().hex[:_ID]
    tag = page_tokens.tag(_DIRECTORY_SCOPE, page_tokens.request_scope(catalog_key, fresh), _TAG)
    directory = warehouse.table_path(database.name, fold(name), database_uid=database.uid, table_uid=fresh)
    return f"{directory}-{fresh}{tag}"


def is_managed_directory(catalog_key: str, location: str) -> bool:
    """Whether ``location`` is a managed directory the server made for a table of this catalog."""
    if not warehouse.in_managed_area(location):
        return False
    leaf = location.rstrip("/").rsplit("/", 1)[-1]
    if len(leaf) < _ID + _TAG + 2 or leaf[-(_ID + _TAG + 1)] != "-":
        return False
    fresh, tag = leaf[-(_ID + _TAG):-_TAG], leaf[-_TAG:]
    return page_tokens.verify_tag(_DIRECTORY_SCOPE, page_tokens.request_scope(catalog_key, fresh), tag)


def metadata_file(catalog_key: str, location: str, number: int) -> str:
    """Where metadata file ``number`` of the table at ``location`` goes, its uuid tagged."""
    location = location.rstrip("/")
    fresh = uuid.uuid4().hex[:16]
    tag = page_tokens.tag(_FILE_SCOPE, page_tokens.request_scope(catalog_key, location, fresh), 16)
    digits = fresh + tag
    name = f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    return iceberg_metadata.metadata_file(location, number, name)


def written_here(catalog_key: str, location: str, uri: str) -> bool:
    """Whether ``uri`` is a metadata file this catalog's server wrote for the table at ``location``."""
    location = location.rstrip("/")
    prefix = f"{location}/metadata/"
    if not uri.startswith(prefix):
        return False
    leaf = uri[len(prefix):]
    number, _, rest = leaf.partition("-")
    if not number.isdigit() or not rest.endswith(".metadata.json"):
        return False
    digits = rest[:-len(".metadata.json")].replace("-", "")
    if len(digits) != 32:
        return False
    return page_tokens.verify_tag(_FILE_SCOPE, page_tokens.request_scope(catalog_key, location, digits[:16]),
                                  digits[16:])


def purge(catalog_key: str, metadata_location: str, metadata: dict[str, Any]) -> None:
    """Delete a dropped table's files the server may delete (see the module's docstring). A
    storage error is logged, not raised: the drop has happened."""
    location = str(metadata.get("location") or "").rstrip("/")
    try:
        if is_managed_directory(catalog_key, location) and metadata_location.startswith(location + "/"):
            warehouse.delete_tree(location)
            return
        named = [metadata_location, *(entry.get("metadata-file") for entry in metadata.get("metadata-log") or []
                                      if isinstance(entry, dict))]
        warehouse.delete_many([uri for uri in named if isinstance(uri, str) and written_here(catalog_key, location, uri)])
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("files of dropped Iceberg table at %s not purged", location, exc_info=True)
