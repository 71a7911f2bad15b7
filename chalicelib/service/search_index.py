"""Keeping SearchTables' postings in step with tables and databases.

Called by the table and database actions and by the commit of table definitions: ``before_*``
adds the postings of the new text before the document is written, ``after_*`` drops postings
only the old text had once it is gone.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.domain.search_text import database_fields, field_tokens, table_fields
from chalicelib.store import search as store


def _table_tokens(doc: Optional[dict[str, Any]]) -> set[str]:
    return field_tokens(table_fields(doc)) if doc else set()


def _database_tokens(doc: Optional[dict[str, Any]]) -> set[str]:
    return field_tokens(database_fields(doc)) if doc else set()


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
