"""SearchTables' inverted index: postings from tokens to tables and databases.

Postings are written *before* the document they describe, or in its own DynamoDB transaction,
and removed *after* it changes, or in that transaction, so they always cover the truth (a
superset); every candidate is re-checked against the current table and database, which makes a
stale posting harmless.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Iterator, Optional

from chalicelib import metrics
from chalicelib.store.dynamo.models import SEP, SearchPostingItem
from chalicelib.store.dynamo.retry import conditional

TABLE, DATABASE = "t", "d"
# DynamoDB's limit on a sort key. Names are at most 255 characters, but 255 CJK characters are
# 765 UTF-8 bytes, so ``database SEP table`` can reach 1,531 bytes.
_MAX_TARGET_BYTES = 1024


def _term(catalog: str, kind: str, token: str) -> str:
    return f"{catalog}{SEP}{kind}{SEP}{token}"


def table_target(db_name: str, table_name: str) -> str:
    """What a table posting points at: ``database SEP table``."""
    return f"{db_name}{SEP}{table_name}"


def _target_key(target: str) -> str:
    """The range key of a posting: the target itself, or when that is too long for a sort key
    a digest of it (starting with SEP, which no name can start with; the target is then kept in
    the item's ``long_target``)."""
    if len(target) * 3 <= _MAX_TARGET_BYTES or len(target.encode("utf-8")) <= _MAX_TARGET_BYTES:
        return target
    return SEP + hashlib.sha256(target.encode("utf-8")).hexdigest()


def target_of(posting: SearchPostingItem) -> str:
    """The target a posting points at (``database SEP table`` or a database name)."""
    return posting.long_target or posting.target


def table_of(posting: SearchPostingItem) -> tuple[str, str]:
    """(database name, table name) of a table posting."""
    db_name, table_name = target_of(posting).split(SEP, 1)
    return db_name, table_name


def posting_items(catalog: str, kind: str, tokens: Iterable[str], target: str,
                  uid: Optional[str] = None) -> list[SearchPostingItem]:
    """The postings of ``target`` under every token (``uid``: the database uid they carry; None
    for keys only, to delete), to write here or in another write's DynamoDB transaction."""
    key = _target_key(target)
    long_target = target if key != target and uid is not None else None
    return [SearchPostingItem(_term(catalog, kind, token), key, uid=uid, long_target=long_target)
            for token in tokens]


def add_postings(catalog: str, kind: str, tokens: Iterable[str], target: str, uid: str) -> None:
    """Post ``target`` under every token (BatchWriteItem, 25 a call)."""
    write_postings(posting_items(catalog, kind, tokens, target, uid), [])


def remove_postings(catalog: str, kind: str, tokens: Iterable[str], target: str) -> None:
    """Remove ``target``'s postings under these tokens."""
    write_postings([], posting_items(catalog, kind, tokens, target))


def write_postings(puts: Iterable[SearchPostingItem], deletes: Iterable[SearchPostingItem]) -> None:
    """Put and delete postings made by ``posting_items`` (BatchWriteItem, 25 a call)."""
    with SearchPostingItem.batch_write() as batch:
        for item in puts:
            batch.save(item)
        for item in deletes:
            batch.delete(item)


def remove_postings_of(catalog: str, kind: str, tokens: Iterable[str], target: str, uid: str) -> None:
    """Remove ``target``'s postings under these tokens where they still carry ``uid`` (the
    database uid they were posted with): a posting a newer database of the same name wrote since
    is kept. One conditional delete per token (a cleanup job's work)."""
    key = _target_key(target)
    for token in tokens:
        posting = SearchPostingItem(_term(catalog, kind, token), key)
        conditional(lambda: posting.delete(condition=SearchPostingItem.uid == uid))


def postings(catalog: str, kind: str, token: str) -> Iterator[SearchPostingItem]:
    """Everything posted under one token (each item read is counted)."""
    for item in SearchPostingItem.query(_term(catalog, kind, token), consistent_read=True):
        metrics.count_read()
        yield item
