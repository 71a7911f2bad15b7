"""SearchTables across every database of a catalog.

The search itself (postings, filters, sorting, pages) is chalicelib.service.search's; this
handler checks the request, carries the resume position in NextToken and renders the tables.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, read_token
from chalicelib.protocol.glue.tables import render_table
from chalicelib.context import RequestContext
from chalicelib.service import search


def search_tables(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Tables whose text matches SearchText and that pass every filter, sorted and paged."""
    # Checked before NextToken is read, so a bad filter is reported as such on any page.
    query = search.table_search(params.get("SearchText"), params.get("Filters"), params.get("SortCriteria"),
                                params.get("ResourceShareType"))
    catalog_key = ctx.catalog_key(params)
    scope = (catalog_key, params.get("SearchText"), params.get("Filters"), params.get("SortCriteria"),
             params.get("ResourceShareType"))
    after = read_token(ctx, params, *scope)
    tables, position = search.search_tables(catalog_key, query, after, params.get("MaxResults"),
                                            lambda doc, version: render_table(ctx, params, doc, version))
    token = make_token(ctx, position, *scope)
    return {"TableList": tables, **({"NextToken": token} if token else {})}
