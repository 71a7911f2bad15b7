"""Keeping SearchTables' postings in step with tables and databases.

Called by the table and database actions and by the commit of table definitions: ``before_*``
adds the postings of the new text before the document is written, ``after_*`` drops postings
only the old text had once it is gone. A table write outside a transaction takes its postings
from ``table_postings``: few, they ride in the write's own DynamoDB transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from chalicelib.domain.search_text import database_fields, field_tokens, table_fields
from chalicelib.store import catalog as catalog_store
from chalicelib.store import search as store


def _table_tokens(doc: Optional[dict[str, Any]]) -> set[str]:
    return field_tokens(table_fields(doc)) if doc else set()


def _database_tokens(doc: Optional[dict[str, Any]]) -> set[str]:
    return field_tokens(database_fields(doc)) if doc else set()


# Postings that ride in a table write's own DynamoDB transaction: an update's few changed tokens
# (a description, a column or two). More, as a create or delete of a table with dozens of
# tokens, are written apart, before and after it: a transaction's items cost twice the write
# capacity of a BatchWriteItem's on DynamoDB, and DynamoDB Local runs transactions one at a time
# while it runs a BatchWriteItem alongside them (bench_table_writes: CreateTable of a table of 5
# tokens, 8 threads, 75 tables/s with them riding against 84 apart; UpdateTable changing 2
# tokens: 97 riding against 86 apart).
POSTINGS_IN_WRITE = 4


@dataclass(frozen=True)
class TablePostings:
    """What a table write outside a transaction changes in the postings: tokens only the new
    text has are posted, tokens only the old text had are dropped. When there are few, they go
    in the write's own DynamoDB transaction (``riding``: one round trip instead of up to three,
    and nothing to leave behind); else ``before`` and ``after`` write them apart."""

    puts: list[Any]
    deletes: list[Any]

    @property
    def ride(self) -> bool:
        return len(self.puts) + len(self.deletes) <= POSTINGS_IN_WRITE

    @property
    def riding(self) -> catalog_store.AlsoWrite:
        """The postings to hand to the store write (none when they are written apart)."""
        return catalog_store.AlsoWrite(self.puts, self.deletes) if self.ride else catalog_store.NOTHING_ELSE

    def before(self) -> None:
        """Post the new tokens before the write, unless they ride in it."""
        if not self.ride:
            store.write_postings(self.puts, [])

    def after(self) -> None:
        """Drop the old tokens after the write, unless they rode in it."""
        if not self.ride:
            store.write_postings([], self.deletes)


def table_postings(catalog_key: str, db_name: str, db_uid: str, new: Optional[dict[str, Any]],
                   old: Optional[dict[str, Any]] = None) -> TablePostings:
    """The postings a table write changes (``new`` None: a delete; ``old`` None: a create)."""
    new_tokens, old_tokens = _table_tokens(new), _table_tokens(old)
    name = (new or old or {})["Name"]
    target = store.table_target(db_name, name)
    return TablePostings(store.posting_items(catalog_key, store.TABLE, new_tokens - old_tokens, target, db_uid),
                         store.posting_items(catalog_key, store.TABLE, old_tokens - new_tokens, target))


def before_table_write(catalog: str, db_name: str, db_uid: str, new: dict[str, Any],
                       old: Optional[dict[str, Any]] = None) -> None:
    """Post the new table text (tokens the old text already posted are skipped)."""
    store.add_postings(catalog, store.TABLE, _table_tokens(new) - _table_tokens(old),
                       store.table_target(db_name, new["Name"]), db_uid)


def after_table_write(catalog: str, db_name: str, new: Optional[dict[str, Any]],
                      old: dict[str, Any]) -> None:
    """Drop postings of tokens only the old text had (``new`` None: the table is gone)."""
    store.remove_postings(catalog, store.TABLE, _table_tokens(old) - _table_tokens(new),
                          store.table_target(db_name, old["Name"]))


def before_database_write(catalog: str, uid: str, new: dict[str, Any],
                          old: Optional[dict[str, Any]] = None) -> None:
    """Post the new database text."""
    store.add_postings(catalog, store.DATABASE, _database_tokens(new) - _database_tokens(old),
                       new["Name"], uid)


def after_database_write(catalog: str, new: Optional[dict[str, Any]], old: dict[str, Any]) -> None:
    """Drop postings of tokens only the old database text had."""
    store.remove_postings(catalog, store.DATABASE, _database_tokens(old) - _database_tokens(new),
                          old["Name"])


def drop_unlinked_database(catalog: str, db_name: str, db_uid: str, doc: dict[str, Any]) -> None:
    """Drop the postings of a deleted database's own text, unless a newer database of the same
    name posted them again (postings carry the database uid)."""
    store.remove_postings_of(catalog, store.DATABASE, _database_tokens(doc), db_name, db_uid)


def drop_unlinked_table(catalog: str, db_name: str, db_uid: str, doc: dict[str, Any]) -> None:
    """Drop the postings of a table of a deleted database, unless a table of a newer database
    of the same name posted them again."""
    store.remove_postings_of(catalog, store.TABLE, _table_tokens(doc), store.table_target(db_name, doc["Name"]),
                             db_uid)
