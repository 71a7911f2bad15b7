"""Searching the tables of a catalog, served from the postings index (see service.search_index).

Cost: one Query per search token (postings), one Query per database whose own text matches
a token (its tables), then a BatchGetItem of the candidate tables and a GetItem per distinct
database; everything is re-checked against the current documents. Without search text every
table of the catalog is read (filters alone cannot use the index).

Protocol-free: a search is checked once (``table_search``), then run (``search_tables``) with a
plain resume position; tables come back as the caller renders them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from chalicelib.domain.search_text import (SORTABLE, filter_matches, filter_problem,
                                           parse_search_text, sort_value, text_matches)
from chalicelib.errors import InvalidInputException
from chalicelib.service.paging import MAX_PAGE_BYTES
from chalicelib.store import catalog
from chalicelib.store import search as postings_store
from chalicelib.store.models import DatabaseItem, TableItem

Candidate = tuple[str, str]  # (database name, table name)
# How the caller shows a table: (table document, version) -> the object it returns. Its size
# counts against the page's byte budget.
Render = Callable[[dict[str, Any], int], dict[str, Any]]

_DEFAULT_LIMIT = 1000
_CHUNK = 100  # postings read from each token's stream per round


@dataclass(frozen=True)
class TableSearch:
    """A checked search: text, PropertyPredicate filters, the canonical field it sorts by and
    the direction, and the resource share type (FOREIGN: tables shared with this catalog)."""

    text: Optional[str]
    filters: tuple[dict[str, Any], ...]
    sort_field: str
    descending: bool
    share_type: Optional[str]


def table_search(text: Optional[str], filters: Optional[Sequence[dict[str, Any]]],
                 sort_criteria: Optional[Sequence[dict[str, Any]]],
                 share_type: Optional[str] = None) -> TableSearch:
    """The search these SearchTables-shaped arguments ask for; InvalidInputException naming the
    filter that cannot be applied or the sort field that cannot be sorted by. Only the first
    sort criterion counts; without one, tables sort by database name (ascending)."""
    for predicate in filters or []:
        problem = filter_problem(predicate)
        if problem:
            raise InvalidInputException(problem)
    criteria = sort_criteria or []
    field, descending = "DatabaseName", False
    if criteria:
        named = SORTABLE.get((criteria[0].get("FieldName") or "").lower())
        if named is None:
            raise InvalidInputException(
                f"SortCriteria FieldName '{criteria[0].get('FieldName')}' is not sortable; use one of: "
                + ", ".join(sorted(set(SORTABLE.values()))))
        field, descending = named, criteria[0].get("Sort") == "DESC"
    return TableSearch(text, tuple(filters or ()), field, descending, share_type)


def _database(catalog_key: str, name: str,
              databases: dict[str, Optional[DatabaseItem]]) -> Optional[DatabaseItem]:
    """The current database of that name (read once per request)."""
    if name not in databases:
        databases[name] = catalog.get_database(catalog_key, name)
    return databases[name]


def _token_stream(catalog_key: str, token: str, databases: dict[str, Optional[DatabaseItem]]
                  ) -> Iterator[tuple[Candidate, str, Optional[TableItem]]]:
    """Every table a token reaches: posted directly, or through its database's text."""
    for posting in postings_store.postings(catalog_key, postings_store.TABLE, token):
        db_name, table_name = postings_store.table_of(posting)
        yield (db_name, table_name), posting.uid, None
    for posting in postings_store.postings(catalog_key, postings_store.DATABASE, token):
        # Follow the database by name, not by the posting's uid: a CreateDatabase that lost
        # to an existing database of that name has overwritten the posting with its own uid.
        db_name = postings_store.target_of(posting)
        database = _database(catalog_key, db_name, databases)
        if database is not None:
            for item in catalog.query_tables(database.uid, None, 100):
                yield (db_name, item.name), database.uid, item


def _candidates_from_postings(catalog_key: str, tokens: set[str], loaded: dict[Candidate, TableItem],
                              databases: dict[str, Optional[DatabaseItem]]) -> dict[Candidate, str]:
    """A superset of the tables holding every token: {(db, table): db uid}.

    Every token's stream is read in rounds of _CHUNK; the first to run out is the rarest
    token, and its tables are the candidates (the other tokens are checked on the documents).
    A rare word next to a common one thus costs about the rare word's postings per token.
    """
    streams = {token: _token_stream(catalog_key, token, databases) for token in sorted(tokens)}
    reached: dict[str, dict[Candidate, str]] = {token: {} for token in streams}
    fetched: dict[str, dict[Candidate, TableItem]] = {token: {} for token in streams}
    while True:
        for token, stream in streams.items():
            for _ in range(_CHUNK):
                hit = next(stream, None)
                if hit is None:
                    loaded.update(fetched[token])
                    return reached[token]
                candidate, uid, item = hit
                reached[token][candidate] = uid
                if item is not None:
                    fetched[token][candidate] = item


def _all_tables(catalog_key: str, loaded: dict[Candidate, TableItem]) -> dict[Candidate, str]:
    found: dict[Candidate, str] = {}
    for database in catalog.query_databases(catalog_key, None, 100):
        for item in catalog.query_tables(database.uid, None, 100):
            found[(database.name, item.name)] = database.uid
            loaded[(database.name, item.name)] = item
    return found


def _load_tables(candidates: dict[Candidate, str], loaded: dict[Candidate, TableItem]) -> None:
    missing = [(uid, table) for (db, table), uid in candidates.items() if (db, table) not in loaded]
    names = {(uid, table): (db, table) for (db, table), uid in candidates.items()}
    for item in catalog.get_many(TableItem, missing):
        loaded[names[(item.db_uid, item.name)]] = item


def search_tables(catalog_key: str, search: TableSearch, after: Optional[list[Any]], limit: Optional[int],
                  render: Render) -> tuple[list[dict[str, Any]], Optional[list[Any]]]:
    """One page of the tables of a catalog that match ``search``, rendered by ``render``.

    A table matches when its own or its database's text holds every search token (and the
    quoted phrase, if any) and it passes every filter; tables are read as they are now, so a
    stale posting never shows a dropped or re-created table. They come sorted by the search's
    field, then database and table name (reversed together when descending), starting after
    ``after``; a page holds at most ``limit`` tables (default 1000) within the byte budget.
    Returns the page and the position to resume after (None on the last page). A FOREIGN
    search finds nothing: nothing is shared with a catalog, there are no grants.
    """
    if search.share_type == "FOREIGN":
        return [], None
    wanted, phrase = parse_search_text(search.text)
    loaded: dict[Candidate, TableItem] = {}
    databases: dict[str, Optional[DatabaseItem]] = {}
    candidates = _candidates_from_postings(catalog_key, wanted, loaded, databases) if wanted \
        else _all_tables(catalog_key, loaded)
    _load_tables(candidates, loaded)
    hits: list[tuple[list[Any], dict[str, Any]]] = []
    for (db_name, table_name), item in loaded.items():
        if (db_name, table_name) not in candidates:
            continue
        database = _database(catalog_key, db_name, databases)
        if database is None or database.uid != candidates.get((db_name, table_name)):
            continue  # a stale posting: the database was dropped or re-created
        table_doc, db_doc = catalog.load(item), catalog.load(database)
        if wanted or phrase is not None:
            if not text_matches(wanted, phrase, table_doc, db_doc):
                continue
        if not all(filter_matches(p, table_doc, db_doc) for p in search.filters):
            continue
        order = [sort_value(search.sort_field, table_doc), db_name, table_name]
        hits.append((order, render(table_doc, item.version)))
    hits.sort(key=lambda hit: hit[0], reverse=search.descending)
    if after is not None:
        hits = [h for h in hits if (h[0] < after if search.descending else h[0] > after)]
    page: list[tuple[list[Any], dict[str, Any]]] = []
    size = 0
    for order, table in hits[:limit or _DEFAULT_LIMIT]:
        size += len(str(table))
        if page and size > MAX_PAGE_BYTES:
            break
        page.append((order, table))
    more = len(page) < len(hits)
    return [table for _, table in page], (page[-1][0] if more and page else None)
