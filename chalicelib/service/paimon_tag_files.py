"""Tags as Paimon's own server sees them: the catalog's tag items *and* the ``tag/tag-NAME``
files clients write into the table directory themselves (pypaimon's ``table.create_tag``,
Flink/Spark's ``create_tag`` procedures, auto-tagging), which have no item.

An item wins over a file of the same name (the catalog writes both). Every lookup of a tag by
name (get, rollback to it, a branch from it) and every listing goes through here; a rollback
removes the tags above its target, items and files (Paimon's ``RollbackHelper.cleanTags``).
"""

from __future__ import annotations

import json
from typing import Optional

from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.snapshots import local_datetime_millis
from chalicelib.store import paimon as store
from chalicelib.store import paimon_history as files


def _from_file(table_path: str, name: str, branch: str) -> Optional[store.StoredTag]:
    found = files.read_tag_file(table_path, name, branch)
    if found is None:
        return None
    created = local_datetime_millis(found.get("tagCreateTime")) or 0
    return store.StoredTag(name, int(found["id"]), json.dumps(found, ensure_ascii=False), created)


def _file_name_ok(name: str) -> bool:
    """Whether ``name`` may become the file name ``tag-NAME`` (no directory parts)."""
    return bool(name.strip()) and "/" not in name and "\\" not in name and name not in (".", "..") \
        and not any(ord(c) < 32 for c in name)


def find_tag(table_uid: str, table_path: str, name: str, branch: str = store.MAIN) -> Optional[store.StoredTag]:
    """The tag ``name``: its item, else its file (None: neither)."""
    if names.too_long("tag", name) is not None:
        return None  # no tag can have it (nor can DynamoDB hold the key)
    found = store.get_tag(table_uid, name, branch)
    if found is not None or not _file_name_ok(name):
        return found
    return _from_file(table_path, name, branch)


def _item_names(table_uid: str, branch: str) -> list[str]:
    found: list[str] = []
    cursor: Optional[str] = None
    while True:
        batch = store.list_tags(table_uid, cursor, 1000, branch)
        found.extend(tag.name for tag in batch)
        if len(batch) < 1000:
            return found
        cursor = batch[-1].name


def all_tag_names(table_uid: str, table_path: str, branch: str = store.MAIN) -> list[str]:
    """Every tag name, items and files, sorted (one Query per 1,000 items and one listing of
    ``tag/``: a listing page costs the table's tags, not the page)."""
    return sorted(set(_item_names(table_uid, branch)) | set(files.tag_file_names(table_path, branch)))


def list_tag_names(table_uid: str, table_path: str, after: Optional[str], limit: int, prefix: Optional[str],
                   branch: str = store.MAIN) -> tuple[list[str], Optional[str]]:
    """A page of tag names after ``after`` starting with ``prefix``, and the last name when more follow."""
    page = [n for n in all_tag_names(table_uid, table_path, branch)
            if (after is None or n > after) and (not prefix or n.startswith(prefix))]
    if len(page) > limit:
        return page[:limit], page[limit - 1]
    return page, None


def clean_tags_above(table_uid: str, table_path: str, snapshot_id: int, branch: str = store.MAIN) -> list[str]:
    """Remove the tags of snapshots above ``snapshot_id`` (items, then files), as Paimon's
    rollback does; the names removed."""
    removed = []
    for name in all_tag_names(table_uid, table_path, branch):
        tag = find_tag(table_uid, table_path, name, branch)
        if tag is None or tag.snapshot_id <= snapshot_id:
            continue
        store.delete_tag(table_uid, name, branch)
        if _file_name_ok(name):
            files.delete_tag_file(table_path, name, branch)
        removed.append(name)
    return removed
