"""Views (ViewSchema with several dialects; a Glue VIRTUAL_VIEW table with its Representations).

The contract is paimon-api's Java REST client (pypaimon 2.1.0 has no view client):
CreateViewRequest ``{identifier, schema}``, AlterViewRequest ``{changes}``, RenameTableRequest
``{source, destination}``, GetViewResponse, ListViewsResponse ``{views, nextPageToken}``,
ListViewDetailsResponse ``{viewDetails, ...}``, ListViewsGloballyResponse ``{views: [Identifier]}``.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.paimon.paging import make_token, max_results, read_token
from chalicelib.protocol.paimon.object_args import identifier, prefix_pattern
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_views as service
from chalicelib.service.lookups import fold

PATTERN = "viewNamePattern"
DATABASE_PATTERN = "databaseNamePattern"


def _catalog(request: PaimonRequest) -> str:
    return request.context.catalog_key({})


def _listing(request: PaimonRequest, render: Any) -> tuple[list[Any], Any]:
    pattern = request.query.get(PATTERN) or None
    after = read_token(request, request.path["database"], pattern)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    page, last = service.list_views(_catalog(request), request.path["database"], prefix_pattern(request, PATTERN),
                                    after, max_results(request), render)
    return page, make_token(request, last, request.path["database"], pattern)


def list_views(request: PaimonRequest) -> PaimonResponse:
    """ListViewsResponse: view names in order, paged (``maxResults``, ``pageToken``, ``viewNamePattern``)."""
    names, token = _listing(request, lambda item, doc: item.name)
    return PaimonResponse({"views": names, "nextPageToken": token})


def list_view_details(request: PaimonRequest) -> PaimonResponse:
    """ListViewDetailsResponse: GetViewResponse of each view, paged as list_views."""
    details, token = _listing(request, service.view_response)
    return PaimonResponse({"viewDetails": details, "nextPageToken": token})


def list_views_globally(request: PaimonRequest) -> PaimonResponse:
    """ListViewsGloballyResponse: the identifiers of the views of every database, paged
    (``databaseNamePattern``, ``viewNamePattern``)."""
    filters = (request.query.get(DATABASE_PATTERN) or None, request.query.get(PATTERN) or None)
    after = read_token(request, *filters)
    if after is not None and not (isinstance(after, list) and len(after) == 2
                                  and all(isinstance(part, str) for part in after)):
        raise bad_request("pageToken is malformed")
    views, last = service.list_views_globally(_catalog(request), prefix_pattern(request, DATABASE_PATTERN),
                                              prefix_pattern(request, PATTERN), after, max_results(request))
    return PaimonResponse({"views": views, "nextPageToken": make_token(request, last, *filters)})


def create_view(request: PaimonRequest) -> PaimonResponse:
    """CreateViewRequest: the identifier's ``object`` names the view (its ``database`` must be the
    path's), ``schema`` is the ViewSchema."""
    database, name = identifier(request.body.get("identifier"), "identifier")
    if fold(database) != fold(request.path["database"]):
        raise bad_request(f"identifier.database '{database}' differs from the path's database "
                          f"'{request.path['database']}'")
    service.create_view(request.context, _catalog(request), request.path["database"], name,
                        request.body.get("schema"), request.context.account_id)
    return PaimonResponse()


def get_view(request: PaimonRequest) -> PaimonResponse:
    """GetViewResponse."""
    return PaimonResponse(service.get_view(_catalog(request), request.path["database"], request.path["view"]))


def alter_view(request: PaimonRequest) -> PaimonResponse:
    """AlterViewRequest: ViewChanges, applied all or none."""
    service.alter_view(request.context, _catalog(request), request.path["database"], request.path["view"],
                       request.require("changes", list))
    return PaimonResponse()


def drop_view(request: PaimonRequest) -> PaimonResponse:
    """Drop a view."""
    service.drop_view(request.context, _catalog(request), request.path["database"], request.path["view"])
    return PaimonResponse()


def rename_view(request: PaimonRequest) -> PaimonResponse:
    """RenameTableRequest ``{source, destination}`` (identifiers; the database may change)."""
    source = identifier(request.body.get("source"), "source")
    destination = identifier(request.body.get("destination"), "destination")
    service.rename_view(request.context, _catalog(request), source, destination)
    return PaimonResponse()
