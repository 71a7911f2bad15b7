"""SearchTables' inverted index: postings from tokens to tables and databases.

Postings are written *before* the document they describe and removed *after* it changes, so
they always cover the truth (a superset); every candidate is re-checked against the current
table and database, which makes a stale posting harmless.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from chalicelib import metrics
from chalicelib.store.models import SEP, SearchPostingItem

TABLE, DATABASE = "t", "d"


def _term(catalog: str, kind: str, token: str) -> str:
    return f"{catalog}{SEP}{kind}{SEP}{token}"


def table_target(db_name: str, table_name: str) -> str:
    """The range key of a table posting."""
    return f"{db_name}{SEP}{table_name}"


def add_postings(catalog: str, kind: str, tokens: Iterable[str], target: str, uid: str) -> None:
    """Post ``target`` under every token (BatchWriteItem, 25 a call)."""
    with SearchPostingItem.batch_write() as batch:
        for token in tokens:
            batch.save(SearchPostingItem(_term(catalog, kind, token), target, uid=uid))


def remove_postings(catalog: str, kind: str, tokens: Iterable[str], target: str) -> None:
    """Remove ``target``'s postings under these tokens."""
    with SearchPostingItem.batch_write() as batch:
        for token in tokens:
            batch.delete(SearchPostingItem(_term(catalog, kind, token), target))


def postings(catalog: str, kind: str, token: str) -> Iterator[SearchPostingItem]:
    """Everything posted under one token (each item read is counted)."""
    for item in SearchPostingItem.query(_term(catalog, kind, token), consistent_read=True):
        metrics.count_read()
        yield item
