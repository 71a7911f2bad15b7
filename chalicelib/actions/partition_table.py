"""The table as the partition actions see it, read once per request, and the checks and keys
that partition reads and writes share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from chalicelib.actions import governed_partitions as governed
from chalicelib.actions.common import require_database, require_table
from chalicelib.actions.partition_indexes import LIVE, index_specs, partition_keys_of, resume_backfills
from chalicelib.context import RequestContext
from chalicelib.domain.partition_keys import IndexSpec, partition_sort_key
from chalicelib.errors import InvalidInputException, table_not_found
from chalicelib.store import catalog
from chalicelib.store.models import DatabaseItem, TableItem


@dataclass
class PartitionTableView:
    """What partition actions need to know about a table, read once per request."""

    database: DatabaseItem
    item: TableItem
    keys: list[tuple[str, str]]
    key_types: list[str]
    indexes: list[IndexSpec]  # CREATING and ACTIVE: every write maintains both
    doc: dict[str, Any]  # the Table document

    @property
    def governed(self) -> bool:
        """TableType GOVERNED: its manifest holds partitions too."""
        return governed.is_governed(self.doc)


def _view_of(database: DatabaseItem, item: TableItem) -> PartitionTableView:
    item = resume_backfills(item)  # an abandoned backfill must not hold its index CREATING
    doc = catalog.load(item)
    keys = partition_keys_of(doc)
    return PartitionTableView(database, item, keys, list(item.key_types or []), index_specs(item, keys, LIVE), doc)


def read_partition_table(ctx: RequestContext, params: dict[str, Any]) -> PartitionTableView:
    """The request's table (DatabaseName, TableName), or EntityNotFoundException."""
    database = require_database(ctx, params, params["DatabaseName"])
    return _view_of(database, require_table(database, params["TableName"]))


def reread_partition_table(view: PartitionTableView) -> PartitionTableView:
    """The same table read again; EntityNotFoundException if it was deleted or re-created."""
    item = catalog.get_table(view.database.uid, view.item.name)
    if item is None or item.uid != view.item.uid:
        raise table_not_found(view.item.name)
    return _view_of(view.database, item)


def check_values(view: PartitionTableView, values: Sequence[str], member: str = "Values") -> None:
    """InvalidInputException unless ``values`` has one value per partition key."""
    if not view.keys:
        raise InvalidInputException(f"Table {view.item.name} is not partitioned: it has no partition keys")
    if len(values) != len(view.keys):
        raise InvalidInputException(
            f"{member} has {len(values)} value(s) but table {view.item.name} has {len(view.keys)} "
            f"partition key(s): {', '.join(n for n, _ in view.keys)}")


def partition_key(view: PartitionTableView, values: Sequence[str]) -> str:
    """The partitions table's sort key for these values."""
    return partition_sort_key(values, view.key_types)
