"""What the Java client's extra Paimon routes read and write beyond ``store.paimon``: snapshot
pages newest first, a table's locator (its id -> its name), schema removals, and the files
clients write into a table directory themselves (``tag/tag-NAME``, ``consumer/consumer-ID``).

Items are the ``paimon`` table's (keyed by the table uid, so purged with the table); files are
read and written through ``store.warehouse`` only, and every name becomes a file name only
after the service checked it (no ``/``, no ``..``).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote

from chalicelib.domain.paimon.snapshots import Totals
from chalicelib.store import paimon as store
from chalicelib.store import warehouse
from chalicelib.store.dynamo.models import PaimonItem

LOCATOR = "locator"
TAG_PREFIX = "tag-"
CONSUMER_PREFIX = "consumer-"


# ------------------------------------------------------------------------------ snapshots
def snapshots_below(table_uid: str, high: int, low: int, limit: int, branch: str = store.MAIN
                    ) -> list[store.StoredSnapshot]:
    """Snapshot items with low <= id <= high, newest first, at most ``limit`` (one Query)."""
    if high < low:
        return []
    query = PaimonItem.query(table_uid, PaimonItem.key.between(store.snap_key(low, branch), store.snap_key(high, branch)),
                             consistent_read=True, limit=limit, scan_index_forward=False)
    return [store._stored(item) for item in store._counted(query)]


def earliest_hint(table_path: str, branch: str = store.MAIN) -> int | None:
    """The id ``snapshot/EARLIEST`` names (snapshot expiry, done by the clients on the files,
    moves it), None when absent or unreadable."""
    raw = warehouse.get(warehouse.earliest_file(table_path, branch))
    try:
        return int(raw.decode("ascii").strip()) if raw is not None else None
    except (ValueError, UnicodeDecodeError):
        return None


# ------------------------------------------------------------------------------ locator
def put_locator(table_uid: str, catalog: str, database: str, name: str) -> None:
    """Remember where the table of ``table_uid`` is named (GetTable by id reads it; a rename that
    did not update it is found stale, and the reader looks further)."""
    doc = json.dumps({"catalog": catalog, "database": database, "name": name}).encode("utf-8")
    PaimonItem(table_uid, LOCATOR, doc=doc).save()


def get_locator(table_uid: str) -> dict[str, str] | None:
    """The catalog, database and name last recorded for ``table_uid``; None if none was."""
    item = store._get(table_uid, LOCATOR)
    if item is None or item.doc is None:
        return None
    found: dict[str, str] = json.loads(store._text(item))
    return found


def has_state(table_uid: str) -> bool:
    """Whether ``table_uid`` has Paimon items (its schema 0): a uid of a Paimon table."""
    return store.first_schema(table_uid) is not None


# ------------------------------------------------------------------------------ schemas
def delete_schemas_above(table_uid: str, schema_id: int, ids: list[int], branch: str = store.MAIN) -> None:
    """Delete the schema items ``ids`` (all above ``schema_id``), newest first."""
    for number in sorted((i for i in ids if i > schema_id), reverse=True):
        PaimonItem(table_uid, store.schema_key(number, branch)).delete()


# ------------------------------------------------------------------------------ files
def _names_in(directory: str, prefix: str) -> dict[str, str]:
    """``{name: uri}`` of the files ``<directory>/<prefix>NAME`` directly in ``directory``."""
    found: dict[str, str] = {}
    base = directory.rstrip("/") + "/"
    for uri in warehouse.list_prefix(directory):
        relative = uri[len(base):] if uri.startswith(base) else ""
        if not relative or "/" in relative:
            continue
        file_name = unquote(relative)
        if file_name.startswith(prefix) and len(file_name) > len(prefix):
            found[file_name[len(prefix):]] = uri
    return found


def tag_directory(table_path: str, branch: str = store.MAIN) -> str:
    """``tag/`` of the branch."""
    return f"{warehouse.branch_root(table_path, branch)}/tag"


def tag_file_names(table_path: str, branch: str = store.MAIN) -> list[str]:
    """The names of the tags whose files lie in the branch's ``tag/`` directory, sorted."""
    return sorted(_names_in(tag_directory(table_path, branch), TAG_PREFIX))


def read_tag_file(table_path: str, name: str, branch: str = store.MAIN) -> dict[str, Any] | None:
    """A tag file's JSON (the snapshot plus tagCreateTime / tagTimeRetained); None when absent or
    not a JSON object with an integer ``id``."""
    raw = warehouse.get(warehouse.tag_file(table_path, name, branch))
    if raw is None:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("id"), int):
        return None
    return found


def delete_tag_file(table_path: str, name: str, branch: str = store.MAIN) -> None:
    """Remove one tag file (nothing if absent)."""
    warehouse.delete(warehouse.tag_file(table_path, name, branch))


def consumer_directory(table_path: str, branch: str = store.MAIN) -> str:
    """``consumer/`` of the branch (Paimon's ConsumerManager)."""
    return f"{warehouse.branch_root(table_path, branch)}/consumer"


def consumer_file(table_path: str, consumer_id: str, branch: str = store.MAIN) -> str:
    """``consumer/consumer-ID``."""
    return f"{consumer_directory(table_path, branch)}/{CONSUMER_PREFIX}{consumer_id}"


def consumers(table_path: str, branch: str = store.MAIN) -> dict[str, int]:
    """``{consumer id: next snapshot}`` of every readable consumer file (``{"nextSnapshot": N}``)."""
    found: dict[str, int] = {}
    for name, uri in _names_in(consumer_directory(table_path, branch), CONSUMER_PREFIX).items():
        raw = warehouse.get(uri)
        try:
            value = json.loads(raw) if raw is not None else None
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("nextSnapshot"), int):
            found[name] = value["nextSnapshot"]
    return found


def write_consumer(table_path: str, consumer_id: str, next_snapshot: int, branch: str = store.MAIN) -> None:
    """Write ``consumer/consumer-ID`` as Paimon's Consumer JSON."""
    warehouse.put(consumer_file(table_path, consumer_id, branch), json.dumps({"nextSnapshot": next_snapshot}))


def delete_consumer(table_path: str, consumer_id: str, branch: str = store.MAIN) -> None:
    """Remove ``consumer/consumer-ID`` (nothing if absent)."""
    warehouse.delete(consumer_file(table_path, consumer_id, branch))


def schema_file_ids(table_path: str) -> list[int]:
    """The ids of the ``schema/schema-N`` files of a directory, ascending."""
    ids = []
    for name in _names_in(f"{table_path.rstrip('/')}/schema", "schema-"):
        if name.isdigit():
            ids.append(int(name))
    return sorted(ids)


# ------------------------------------------------------------------------------ adoption
# A registered table's marker: ``snapshot_id`` = the snapshot its items begin with (the
# directory's latest when it was registered). Every snapshot below it is read from its file.
ADOPTED = "adopted"
_FILE_READERS = 8  # snapshot files read at once (a page of old snapshots: S3 GETs in parallel)


def adopt(table_uid: str, schemas: list[tuple[int, str]], latest: tuple[int, str | None, str] | None,
          records: int) -> None:
    """A registered directory's state: its schemas after schema 0 (``create_table_state`` wrote
    that one), the snap item of its latest snapshot (id, uuid, JSON), the marker naming it as
    the first snapshot held as an item (``ADOPTED``: older ones stay files, ``adopted_floor``)
    and the head moved to it, marked published (its files are the directory's own). Only for a
    uid no table names yet, so nothing races these writes."""
    for number, text in schemas:
        store.append_schema(table_uid, number, text)
    if latest is None:
        return
    last, uuid, text = latest
    PaimonItem(table_uid, store.snap_key(last), doc=text.encode("utf-8"), snapshot_id=last, snapshot_uuid=uuid,
               records=records, size=0, files=0, last_file=0, move_seq=0).save()
    PaimonItem(table_uid, ADOPTED, snapshot_id=last).save()
    head = PaimonItem(table_uid, store.head_key())
    actions: list[Any] = [PaimonItem.snapshot_id.set(last), PaimonItem.records.set(records),
                          PaimonItem.published.set(last), PaimonItem.doc.set(text.encode("utf-8"))]
    if uuid is not None:
        actions.append(PaimonItem.snapshot_uuid.set(uuid))
    head.update(actions=actions, condition=PaimonItem.snapshot_id.does_not_exist())


def adopted_floor(table_uid: str) -> int | None:
    """The id a registered table's snapshot items begin with; None for a table the catalog
    created (every snapshot of it is an item)."""
    item = store._get(table_uid, ADOPTED)
    return None if item is None or item.snapshot_id is None else int(item.snapshot_id)


def read_snapshot_file(table_path: str, number: int, branch: str = store.MAIN) -> store.StoredSnapshot | None:
    """``snapshot/snapshot-N`` as a StoredSnapshot (its totalRecordCount as the records, no
    statistics: a registered table's partitions were never counted); None when the file is
    absent (expired by a client) or is not that snapshot's JSON."""
    raw = warehouse.get(warehouse.snapshot_file(table_path, number, branch))
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("id") != number:
        return None
    total = value.get("totalRecordCount")
    uuid = value.get("uuid")
    return store.StoredSnapshot(number, uuid if isinstance(uuid, str) else None, raw.decode("utf-8", "replace"),
                                Totals(total if isinstance(total, int) and not isinstance(total, bool) else 0),
                                [])


def read_snapshot_files(table_path: str, numbers: list[int], branch: str = store.MAIN
                        ) -> dict[int, store.StoredSnapshot]:
    """``read_snapshot_file`` of each id, a few at once; the ones found."""
    if len(numbers) <= 1:
        found = [read_snapshot_file(table_path, n, branch) for n in numbers]
    else:
        with ThreadPoolExecutor(max_workers=min(_FILE_READERS, len(numbers))) as pool:
            found = list(pool.map(lambda n: read_snapshot_file(table_path, n, branch), numbers))
    return {s.snapshot_id: s for s in found if s is not None}
