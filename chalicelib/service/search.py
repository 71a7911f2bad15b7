"""Searching the tables of a catalog, served from the postings index (see service.search_index).

Cost: one Query per search token (postings), one Query per database whose own text matches
a token (its tables), then a BatchGetItem of the candidate tables and a GetItem per distinct
database; everything is re-checked against the current documents. Without search text every
table of the catalog is a candidate (filters alone cannot use the index).

Sorted by database name (the default: then table name, ascending; or both descending),
candidates are read in that order, which is the tables' key order in DynamoDB: a page reads its
own tables and stops, full or out of work budget (``service.paging``), so its cost follows the
page, not the catalog (without text) or the rarest token's postings (with text). Sorted by table
name, each database's tables are read in key order and merged (one Query per database to start).
Any other order needs every candidate's document before the first page, so those pages read
them all, over as many requests as the work budget needs (empty pages carry the scan on).

Protocol-free: a search is checked once (``table_search``), then run (``search_tables``) with a
plain resume position; tables come back as the caller renders them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from chalicelib.service import access
from chalicelib.domain.search_text import (SORTABLE, filter_matches, filter_problem,
                                           parse_search_text, sort_value, text_matches)
from chalicelib.errors import InvalidInputException
from chalicelib.service.paging import MAX_PAGE_BYTES, out_of_time, take_page, work_deadline
from chalicelib.store import catalog
from chalicelib.store import search as postings_store
from chalicelib.store.records import Database, Table

Candidate = tuple[str, str]  # (database name, table name)
# How the caller shows a table: (table document, version) -> the object it returns. Its size
# counts against the page's byte budget.
Render = Callable[[dict[str, Any], int], dict[str, Any]]

_DEFAULT_LIMIT = 1000
_CHUNK = 100  # postings read from each token's stream per round
_LOAD_CHUNK = 100  # tables read per Query page or BatchGetItem when reading in key order
_CARRIED = 100  # sort positions a token carries at most between the requests of one page


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
              databases: dict[str, Optional[Database]]) -> Optional[Database]:
    """The current database of that name (read once per request)."""
    if name not in databases:
        databases[name] = catalog.get_database(catalog_key, name)
    return databases[name]


def _token_stream(catalog_key: str, token: str, databases: dict[str, Optional[Database]]
                  ) -> Iterator[tuple[Candidate, str, Optional[Table]]]:
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


def _candidates_from_postings(catalog_key: str, tokens: set[str], loaded: dict[Candidate, Table],
                              databases: dict[str, Optional[Database]]) -> dict[Candidate, str]:
    """A superset of the tables holding every token: {(db, table): db uid}.

    Every token's stream is read in rounds of _CHUNK; the first to run out is the rarest
    token, and its tables are the candidates (the other tokens are checked on the documents).
    A rare word next to a common one thus costs about the rare word's postings per token.
    """
    streams = {token: _token_stream(catalog_key, token, databases) for token in sorted(tokens)}
    reached: dict[str, dict[Candidate, str]] = {token: {} for token in streams}
    fetched: dict[str, dict[Candidate, Table]] = {token: {} for token in streams}
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


def _load_tables(candidates: dict[Candidate, str], loaded: dict[Candidate, Table]) -> None:
    missing = [(uid, table) for (db, table), uid in candidates.items() if (db, table) not in loaded]
    names = {(uid, table): (db, table) for (db, table), uid in candidates.items()}
    for item in catalog.get_tables(missing):
        loaded[names[(item.db_uid, item.name)]] = item


def search_tables(catalog_key: str, search: TableSearch, after: Any, limit: Optional[int],
                  render: Render) -> tuple[list[dict[str, Any]], Any]:
    """One page of the tables of a catalog that match ``search``, rendered by ``render``.

    A table matches when its own or its database's text holds every search token (and the
    quoted phrase, if any) and it passes every filter; tables are read as they are now, so a
    stale posting never shows a dropped or re-created table. They come sorted by the search's
    field, then database and table name (reversed together when descending), starting after
    ``after``; a page holds at most ``limit`` tables (default 1000) within the byte budget.
    Returns the page and the position to resume after (None on the last page): a JSON value
    only this function reads, for the caller to hand back with the same search. A FOREIGN
    search finds nothing: nothing is shared with a catalog, there are no grants.
    """
    if search.share_type == "FOREIGN":
        return [], None
    wanted, phrase = parse_search_text(search.text)
    loaded: dict[Candidate, Table] = {}
    databases: dict[str, Optional[Database]] = {}
    matcher = _Matcher(catalog_key, search, wanted, phrase, databases, render)
    if search.sort_field in _KEY_ORDERS:
        return _in_key_order(catalog_key, matcher, wanted, loaded, databases, after, limit or _DEFAULT_LIMIT,
                             search.sort_field, search.descending)
    return _selected(catalog_key, matcher, wanted, loaded, databases, after, limit or _DEFAULT_LIMIT,
                     search.descending)


class _Matcher:
    """Whether a candidate table matches the search, as it is now; its sort order and rendering."""

    def __init__(self, catalog_key: str, search: TableSearch, wanted: set[str], phrase: Optional[str],
                 databases: dict[str, Optional[Database]], render: Render) -> None:
        self.catalog_key, self.search, self.wanted, self.phrase = catalog_key, search, wanted, phrase
        self.databases, self.render = databases, render
        self._visible: dict[str, Callable[[str], bool]] = {}

    def visible(self, database: str) -> Callable[[str], bool]:
        """Which tables of ``database`` the caller may see (one read of its grants per database)."""
        if database not in self._visible:
            self._visible[database] = access.table_filter(self.catalog_key, database)
        return self._visible[database]

    def hit(self, candidate: Candidate, db_uid: Optional[str], item: Table
            ) -> Optional[tuple[list[Any], dict[str, Any]]]:
        """(sort order, rendered table), or None when it does not match."""
        found = self.order(candidate, db_uid, item)
        return None if found is None else (found[0], self.render(found[1], item.version))

    def order(self, candidate: Candidate, db_uid: Optional[str], item: Table
              ) -> Optional[tuple[list[Any], dict[str, Any]]]:
        """(sort order, table document), or None when it does not match."""
        db_name, table_name = candidate
        database = _database(self.catalog_key, db_name, self.databases)
        if database is None or db_uid is None or database.uid != db_uid:
            return None  # a stale posting: the database was dropped or re-created
        if not self.visible(db_name)(table_name):
            return None  # a table the caller may not see
        table_doc, db_doc = catalog.load(item), catalog.load(database)
        if self.wanted or self.phrase is not None:
            if not text_matches(self.wanted, self.phrase, table_doc, db_doc):
                return None
        if not all(filter_matches(p, table_doc, db_doc) for p in self.search.filters):
            return None
        return [sort_value(self.search.sort_field, table_doc), db_name, table_name], table_doc


def _in_key_order(catalog_key: str, matcher: _Matcher, wanted: set[str], loaded: dict[Candidate, Table],
                  databases: dict[str, Optional[Database]], after: Optional[list[Any]], limit: int,
                  field: str, descending: bool) -> tuple[list[dict[str, Any]], Optional[list[Any]]]:
    """A page sorted by database name then table name, or by table name then database name
    (``field``; ``descending``: both reversed), reading candidates in that order until the page
    is full or the work budget is spent. The position is [sort value, database, table] of the
    last table examined: the order the other path gives these tables (a table's Name is its
    folded key), so both resume alike."""
    deadline = work_deadline()  # from the start: the postings are part of the work
    order = _KEY_ORDERS[field]
    start = order((after[1], after[2])) if after is not None else None
    # Tables read per Query page or BatchGetItem: the page and the one after it (which says
    # whether a token is due), at least a few dozen (filters may reject many), at most 100.
    chunk = min(max(limit + 1, 25), _LOAD_CHUNK)
    if wanted:
        candidates = _candidates_from_postings(catalog_key, wanted, loaded, databases)
        stream = _loaded_in_order(candidates, loaded, start, chunk, order, descending)
    elif field == "DatabaseName":
        stream = _stored_in_order(catalog_key, databases, start, chunk, descending)
    else:
        stream = _stored_by_name(catalog_key, databases, start, limit + 1, chunk, descending)

    def render(entry: tuple[Candidate, str, Table]) -> Optional[tuple[dict[str, Any], int]]:
        hit = matcher.hit(*entry)
        return None if hit is None else (hit[1], len(str(hit[1])))

    def position(entry: tuple[Candidate, str, Table]) -> list[Any]:
        (db_name, table_name), _, _ = entry
        return [order(entry[0])[0], db_name, table_name]

    return take_page(stream, limit, render, position, sized=True, deadline=deadline)


# The orders that are key orders: (database, table) -> the tuple a search in that field sorts by.
_KEY_ORDERS: dict[str, Callable[[Candidate], Candidate]] = {
    "DatabaseName": lambda candidate: candidate,
    "Name": lambda candidate: (candidate[1], candidate[0]),
}


def _selected(catalog_key: str, matcher: _Matcher, wanted: set[str], loaded: dict[Candidate, Table],
              databases: dict[str, Optional[Database]], state: Any, limit: int,
              descending: bool) -> tuple[list[dict[str, Any]], Any]:
    """A page sorted by a field no key orders (a time, TableType, Owner): every candidate is
    examined, in key order, keeping the first ``limit`` + 1 in the search's order after the last
    table returned (``state``: that table's [sort value, database, table], or the state below).

    When the work budget runs out before the candidates do, the page is empty and its position is
    the state: the last one returned, the candidate the scan stopped at, the sort positions kept
    so far (at most _CARRIED + 1, so a token stays a few KB; the page then holds at most
    _CARRIED tables) and that capacity. The next request goes on from there and reloads what it
    returns of the tables kept before. So every request stops at its budget, though a page of a
    large catalog still costs reading all of it, over several requests."""
    deadline = work_deadline()
    resumed: dict[str, Any] = state if isinstance(state, dict) else {"after": state}
    after = resumed.get("after")
    capacity = min(int(resumed.get("capacity", limit)), limit)
    # (sort position, candidate, whether this request has read it: a kept one from before has not)
    kept: list[tuple[list[Any], Candidate, bool]] = [(order, (order[1], order[2]), False)
                                                     for order in resumed.get("kept", ())]
    scan_from = (resumed["scan"][0], resumed["scan"][1]) if "scan" in resumed else None
    if wanted:
        candidates = _candidates_from_postings(catalog_key, wanted, loaded, databases)
        stream = _loaded_in_order(candidates, loaded, scan_from, _LOAD_CHUNK, _KEY_ORDERS["DatabaseName"], False)
    else:
        stream = _stored_in_order(catalog_key, databases, scan_from, _LOAD_CHUNK, False)

    def beyond(order: list[Any]) -> bool:
        return after is None or (order < after if descending else order > after)

    def prune() -> None:
        kept.sort(key=lambda entry: entry[0], reverse=descending)
        del kept[capacity + 1:]

    iterator = iter(stream)
    for candidate, db_uid, item in iterator:
        found = matcher.order(candidate, db_uid, item)
        if found is not None and beyond(found[0]):
            loaded[candidate] = item
            kept.append((found[0], candidate, True))
            if len(kept) > 2 * (capacity + 1):
                prune()
        if out_of_time(deadline) and next(iterator, None) is not None:
            capacity = min(capacity, _CARRIED)
            prune()
            return [], {"after": after, "scan": list(candidate), "kept": [order for order, _, _ in kept],
                        "capacity": capacity}
    prune()
    # Tables kept by earlier requests are read again (and checked again) now.
    earlier: dict[Candidate, str] = {}
    for _, candidate, read in kept:
        database = None if read else _database(catalog_key, candidate[0], databases)
        if database is not None:
            earlier[candidate] = database.uid
    _load_tables(earlier, loaded)
    hits: list[tuple[list[Any], dict[str, Any]]] = []
    for _, candidate, _ in kept:
        current = loaded.get(candidate)  # None: dropped since
        hit = None if current is None else matcher.hit(candidate, current.db_uid, current)
        if hit is not None and beyond(hit[0]):  # its sort value may have changed since it was kept
            hits.append(hit)
    hits.sort(key=lambda hit: hit[0], reverse=descending)
    page: list[tuple[list[Any], dict[str, Any]]] = []
    size = 0
    for order, table in hits[:capacity]:
        size += len(str(table))
        if page and size > MAX_PAGE_BYTES:
            break
        page.append((order, table))
    more = len(page) < len(hits)
    return [table for _, table in page], (page[-1][0] if more and page else None)


def _loaded_in_order(candidates: dict[Candidate, str], loaded: dict[Candidate, Table], start: Optional[Candidate],
                     chunk: int, order: Callable[[Candidate], Candidate],
                     descending: bool) -> Iterator[tuple[Candidate, str, Table]]:
    """The candidates after ``start`` in ``order`` (or reversed), loaded ``chunk`` at a time."""
    ordered = sorted((c for c in candidates
                      if start is None or (order(c) < start if descending else order(c) > start)),
                     key=order, reverse=descending)
    for first in range(0, len(ordered), chunk):
        batch = ordered[first:first + chunk]
        _load_tables({c: candidates[c] for c in batch}, loaded)
        for candidate in batch:
            item = loaded.get(candidate)
            if item is not None:  # dropped since it was posted
                yield candidate, candidates[candidate], item


def _stored_in_order(catalog_key: str, databases: dict[str, Optional[Database]], start: Optional[Candidate],
                     chunk: int, descending: bool) -> Iterator[tuple[Candidate, str, Table]]:
    """Every table of the catalog after ``start``, in (database, table) order (or reversed): the
    key order of the databases and tables tables, read in Query pages of ``chunk``."""
    if start is not None:
        database = _database(catalog_key, start[0], databases)
        if database is not None:
            for item in catalog.query_tables(database.uid, start[1], chunk, descending):
                yield (database.name, item.name), database.uid, item
    for database in catalog.query_databases(catalog_key, start[0] if start is not None else None, chunk, descending):
        databases[database.name] = database
        for item in catalog.query_tables(database.uid, None, chunk, descending):
            yield (database.name, item.name), database.uid, item


def _stored_by_name(catalog_key: str, databases: dict[str, Optional[Database]], start: Optional[Candidate],
                    wanted: int, chunk: int, descending: bool) -> Iterator[tuple[Candidate, str, Table]]:
    """Every table of the catalog after ``start`` in (table, database) order (or reversed): each
    database's tables in key order from the start's name on, merged. Every database's first
    Query reads about its share of ``wanted`` tables (at least 2), later ones ``chunk``; so a
    page reads one Query per database plus about its own tables, not the catalog."""
    listed = list(catalog.query_databases(catalog_key, None, _LOAD_CHUNK))
    first = min(chunk, 2 + wanted // max(len(listed), 1))

    def tables_of(database: Database) -> Iterator[tuple[Candidate, str, Table]]:
        for item in catalog.tables_from(database.uid, start[0] if start else None, first, chunk, descending):
            key = (item.name, database.name)
            if start is None or (key < start if descending else key > start):
                yield (database.name, item.name), database.uid, item

    for database in listed:
        databases[database.name] = database
    yield from heapq.merge(*(tables_of(database) for database in listed),
                           key=lambda entry: (entry[0][1], entry[0][0]), reverse=descending)
