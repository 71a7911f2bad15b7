"""Views (ViewSchema with several dialects; a Glue VIRTUAL_VIEW table with its Representations).

The contract is paimon-api's Java REST client (pypaimon 2.1.0 has no view client):
CreateViewRequest ``{identifier, schema}``, AlterViewRequest ``{changes}``, RenameTableRequest
``{source, destination}``, GetViewResponse, ListViewsResponse ``{views, nextPageToken}``,
ListViewDetailsResponse ``{viewDetails, ...}``, ListViewsGloballyResponse ``{views: [Identifier]}``.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.databases import catalog_key
from chalicelib.protocol.paimon.object_args import global_listing, identifier, object_listing
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_views as service
from chalicelib.service.lookups import fold

PATTERN = "viewNamePattern"


def list_views(request: PaimonRequest) -> PaimonResponse:
    """ListViewsResponse: view names in order, paged (``maxResults``, ``pageToken``, ``viewNamePattern``)."""
    names, token = object_listing(request, PATTERN, service.list_views, lambda item, doc: item.name)
    return PaimonResponse({"views": names, "nextPageToken": token})


def list_view_details(request: PaimonRequest) -> PaimonResponse:
    """ListViewDetailsResponse: GetViewResponse of each view, paged as list_views."""
    details, token = object_listing(request, PATTERN, service.list_views, service.view_response)
    return PaimonResponse({"viewDetails": details, "nextPageToken": token})


def list_views_globally(request: PaimonRequest) -> PaimonResponse:
    """ListViewsGloballyResponse: the identifiers of the views of every database, paged
    (``databaseNamePattern``, ``viewNamePattern``)."""
    views, token = global_listing(request, PATTERN, service.list_views_globally)
    return PaimonResponse({"views": views, "nextPageToken": token})


def create_view(request: PaimonRequest) -> PaimonResponse:
    """CreateViewRequest: the identifier's ``object`` names the view (its ``database`` must be the
    path's), ``schema`` is the ViewSchema."""
    database, name = identifier(request.body.get("identifier"), "identifier")
    if fold(database) != fold(request.path["database"]):
        raise bad_request(f"identifier.database '{database}' differs from the path's database "
                          f"'{request.path['database']}'")
    service.create_view(request.context, catalog_key(request), request.path["database"], name,
                        request.body.get("schema"), request.context.account_id)
    return PaimonResponse()


def get_view(request: PaimonRequest) -> PaimonResponse:
    """GetViewResponse."""
    return PaimonResponse(service.get_view(catalog_key(request), request.path["database"], request.path["view"]))


def alter_view(request: PaimonRequest) -> PaimonResponse:
    """AlterViewRequest: ViewChanges, applied all or none."""
    service.alter_view(request.context, catalog_key(request), request.path["database"], request.path["view"],
                       request.require("changes", list))
    return PaimonResponse()


def drop_view(request: PaimonRequest) -> PaimonResponse:
    """Drop a view."""
    service.drop_view(request.context, catalog_key(request), request.path["database"], request.path["view"])
    return PaimonResponse()


def rename_view(request: PaimonRequest) -> PaimonResponse:
    """RenameTableRequest ``{source, destination}`` (identifiers; the database may change)."""
    source = identifier(request.body.get("source"), "source", existing="view")
    destination = identifier(request.body.get("destination"), "destination")
    service.rename_view(request.context, catalog_key(request), source, destination)
    return PaimonResponse()
