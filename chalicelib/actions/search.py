"""SearchTables across every database of a catalog, served from the postings index.

Cost: one Query per SearchText token (postings), one Query per database whose own text matches
a token (its tables), then a BatchGetItem of the candidate tables and a GetItem per distinct
database; everything is re-checked against the current documents. Without SearchText every
table of the catalog is read (filters alone cannot use the index).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from chalicelib.actions import action
from chalicelib.actions.common import MAX_PAGE_BYTES, make_token, read_token
from chalicelib.actions.tables import render_table
from chalicelib.context import RequestContext
from chalicelib.domain.search_text import (SORTABLE, filter_matches, filter_problem,
                                           parse_search_text, sort_value, text_matches)
from chalicelib.errors import InvalidInputException
from chalicelib.store import catalog
from chalicelib.store import search as postings_store
from chalicelib.store.models import DatabaseItem, TableItem

Candidate = tuple[str, str]  # (database name, table name)


def _database(catalog_key: str, name: str,
              databases: dict[str, Optional[DatabaseItem]]) -> Optional[DatabaseItem]:
    """The current database of that name (read once per request)."""
    if name not in databases:
        databases[name] = catalog.get_database(catalog_key, name)
    return databases[name]


_CHUNK = 100  # postings read from each token's stream per round


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
    found = {}
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


def _check(params: dict[str, Any]) -> tuple[str, bool]:
    for predicate in params.get("Filters") or []:
        problem = filter_problem(predicate)
        if problem:
            raise InvalidInputException(problem)
    criteria = params.get("SortCriteria") or []
    if not criteria:
        return "DatabaseName", False
    field = SORTABLE.get((criteria[0].get("FieldName") or "").lower())
    if field is None:
        raise InvalidInputException(
            f"SortCriteria FieldName '{criteria[0].get('FieldName')}' is not sortable; use one of: "
            + ", ".join(sorted(set(SORTABLE.values()))))
    return field, criteria[0].get("Sort") == "DESC"


@action("glue", "SearchTables")
def search_tables(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Tables whose text matches SearchText and that pass every filter, sorted and paged."""
    sort_field, descending = _check(params)
    catalog_key = ctx.catalog_key(params)
    scope = (catalog_key, params.get("SearchText"), params.get("Filters"), params.get("SortCriteria"),
             params.get("ResourceShareType"))
    after = read_token(ctx, params, *scope)
    if params.get("ResourceShareType") == "FOREIGN":
        return {"TableList": []}  # nothing is shared with this catalog: there are no grants
    wanted, phrase = parse_search_text(params.get("SearchText"))
    loaded: dict[Candidate, TableItem] = {}
    databases: dict[str, Optional[DatabaseItem]] = {}
    candidates = _candidates_from_postings(catalog_key, wanted, loaded, databases) if wanted \
        else _all_tables(catalog_key, loaded)
    _load_tables(candidates, loaded)
    hits = []
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
        if not all(filter_matches(p, table_doc, db_doc) for p in params.get("Filters") or []):
            continue
        order = [sort_value(sort_field, table_doc), db_name, table_name]
        hits.append((order, render_table(ctx, params, table_doc, item.version)))
    hits.sort(key=lambda hit: hit[0], reverse=descending)
    if after is not None:
        hits = [h for h in hits if (h[0] < after if descending else h[0] > after)]
    limit = params.get("MaxResults") or 1000
    page, size = [], 0
    for order, table in hits[:limit]:
        size += len(str(table))
        if page and size > MAX_PAGE_BYTES:
            break
        page.append((order, table))
    more = len(page) < len(hits)
    token = make_token(ctx, page[-1][0] if more and page else None, *scope)
    return {"TableList": [t for _, t in page], **({"NextToken": token} if token else {})}
