"""Store operations for column statistics (one item per column, under the table's uid)."""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

from pynamodb.transactions import TransactWrite

from chalicelib import metrics
from chalicelib.store.catalog import get_many
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo.fence import Fence, write_all
from chalicelib.store.dynamo.models import SEP, ColumnStatisticsItem
from chalicelib.store.dynamo.retry import conditional


def _key(owner: str, column: str) -> str:
    return f"{owner}{SEP}{column.lower()}"


_BATCH_GET_UP_TO = 10  # fewer names than this: fetch them by key rather than all columns


def load_statistics(table_uid: str, owner: str, columns: Sequence[str]) -> dict[str, tuple[dict[str, Any], int]]:
    """Statistics of the named columns of a table (owner "") or partition (owner = its uid),
    in one round trip: {lowercase column: (ColumnStatistics document, column epoch)}.

    A few names are fetched by key (BatchGetItem); more, with one Query over all the owner's
    columns, which costs one request however many columns there are."""
    prefix = owner + SEP
    wanted = {c.lower() for c in columns}
    if len(wanted) < _BATCH_GET_UP_TO:
        items = list(get_many(ColumnStatisticsItem, [(table_uid, _key(owner, c)) for c in wanted]))
    else:
        items = []
        for item in ColumnStatisticsItem.query(table_uid, ColumnStatisticsItem.key.startswith(prefix),
                                               consistent_read=True):
            metrics.count_read()
            items.append(item)
    return {item.key[len(prefix):]: (decode_document(item.doc), item.column_epoch) for item in items}


def save_statistics(table_uid: str, owner: str, entries: Sequence[tuple[dict[str, Any], int]]) -> None:
    """Write statistics documents (with the column epoch they belong to); ≤ 25 per call fits
    one BatchWriteItem."""
    with ColumnStatisticsItem.batch_write() as batch:
        for doc, epoch in entries:
            batch.save(ColumnStatisticsItem(table_uid, _key(owner, doc["ColumnName"]),
                                            doc=encode_document(doc, "column statistics"),
                                            column_epoch=epoch))


def delete_statistics(table_uid: str, owner: str, column: str, epoch: int) -> bool:
    """Delete one column's statistics; False if there were none for the column's current
    ``epoch`` (statistics of a dropped column are hidden, so there is nothing to delete)."""
    item = ColumnStatisticsItem(table_uid, _key(owner, column))
    return conditional(lambda: item.delete(
        condition=ColumnStatisticsItem.key.exists() & (ColumnStatisticsItem.column_epoch == epoch)))


def _delete_in(item: ColumnStatisticsItem, tx: TransactWrite) -> None:
    tx.delete(item)


def delete_columns(table_uid: str, owner: str, columns: Sequence[str], fence: Optional[Fence] = None) -> None:
    """Delete several columns' statistics (missing ones are fine); with ``fence`` (a commit's
    apply), only while the commit holds its lock (else Fenced)."""
    if fence is not None:
        items = [ColumnStatisticsItem(table_uid, _key(owner, column)) for column in columns]
        write_all(fence, [functools.partial(_delete_in, item) for item in items])
        return
    with ColumnStatisticsItem.batch_write() as batch:
        for column in columns:
            batch.delete(ColumnStatisticsItem(table_uid, _key(owner, column)))

