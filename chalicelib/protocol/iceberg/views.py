"""Views: list, create, load, exists, replace, drop, rename, register (``service.iceberg_views``).

The handlers check the request's shape (members present and of the right JSON kind); what the
members mean (schemas, view versions, updates, requirements) the domain checks."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.iceberg import paging
from chalicelib.protocol.iceberg.config import catalog_key
from chalicelib.protocol.iceberg.namespaces import check_name, levels, path_namespace, stored_name
from chalicelib.protocol.iceberg.wire import IcebergRequest, IcebergResponse, bad_request, check_kind, no_content
from chalicelib.service import iceberg_namespaces, iceberg_views
from chalicelib.service.iceberg_views import IcebergView


def load_result(view: IcebergView) -> dict[str, Any]:
    """LoadViewResult (no ``config``: clients reach storage with their own credentials)."""
    return {"metadata-location": view.metadata_location, "metadata": view.metadata, "config": {}}


def _path_view(request: IcebergRequest) -> tuple[str, str]:
    return path_namespace(request), request.path["view"]


def _identifier(value: Any, what: str) -> tuple[str, str]:
    """A TableIdentifier ``{namespace: [...], name}`` as (database, view)."""
    check_kind(value, dict, what)
    namespace = levels(value.get("namespace"), f"{what}.namespace")
    return iceberg_namespaces.single_level(namespace), check_name(value.get("name"), f"{what}.name")


def list_views(request: IcebergRequest) -> IcebergResponse:
    """ListTablesResponse of the namespace's views (tables are listed by list_tables), paged."""
    namespace = path_namespace(request)
    after = paging.read_token(request, namespace.lower())
    names, last = iceberg_views.list_views(request.context, catalog_key(request), namespace, after,
                                           paging.page_size(request))
    return IcebergResponse({"identifiers": [{"namespace": [stored_name(namespace)], "name": name} for name in names],
                            "next-page-token": paging.make_token(request, last, namespace.lower())})


def create_view(request: IcebergRequest) -> IcebergResponse:
    """LoadViewResult of the new view (CreateViewRequest)."""
    namespace = path_namespace(request)
    check_name(request.require("name"), "name")
    request.require("schema", dict)
    request.require("view-version", dict)
    request.optional("location", str)
    for key, value in (request.optional("properties", dict) or {}).items():
        check_kind(value, str, f"properties.{key}")
    view = iceberg_views.create_view(request.context, catalog_key(request), namespace, request.body)
    return IcebergResponse(load_result(view))


def load_view(request: IcebergRequest) -> IcebergResponse:
    """LoadViewResult (``referenced-by`` needs no answer of its own: every view is loadable)."""
    namespace, name = _path_view(request)
    return IcebergResponse(load_result(iceberg_views.load_view(catalog_key(request), namespace, name)))


def view_exists(request: IcebergRequest) -> IcebergResponse:
    """204 if the view exists, 404 if not (a table of that name is no view)."""
    namespace, name = _path_view(request)
    if not iceberg_views.view_exists(catalog_key(request), namespace, name):
        raise iceberg_views.view_not_found(namespace, name)
    return no_content()


def replace_view(request: IcebergRequest) -> IcebergResponse:
    """LoadViewResult after a CommitViewRequest (409 CommitFailedException if a requirement
    failed or another commit won)."""
    namespace, name = _path_view(request)
    given = request.optional("identifier", dict)
    if given is not None:
        identified = _identifier(given, "identifier")
        if (identified[0].lower(), identified[1].lower()) != (namespace.lower(), name.lower()):
            raise bad_request("Invalid request: identifier names another view than the path")
    requirements = request.optional("requirements", list) or []
    updates = request.require("updates", list)
    for what, entries in (("requirements", requirements), ("updates", updates)):
        for i, entry in enumerate(entries):
            check_kind(entry, dict, f"{what}[{i}]")
    view = iceberg_views.replace_view(request.context, catalog_key(request), namespace, name, requirements, updates)
    return IcebergResponse(load_result(view))


def drop_view(request: IcebergRequest) -> IcebergResponse:
    """204."""
    namespace, name = _path_view(request)
    iceberg_views.drop_view(request.context, catalog_key(request), namespace, name)
    return no_content()


def rename_view(request: IcebergRequest) -> IcebergResponse:
    """204: RenameTableRequest's source view becomes its destination."""
    source = _identifier(request.require("source", dict), "source")
    destination = _identifier(request.require("destination", dict), "destination")
    iceberg_views.rename_view(request.context, catalog_key(request), source, destination)
    return no_content()


def register_view(request: IcebergRequest) -> IcebergResponse:
    """LoadViewResult of the view registered at ``metadata-location`` (RegisterViewRequest)."""
    namespace = path_namespace(request)
    name = check_name(request.require("name"), "name")
    location = request.require("metadata-location")
    view = iceberg_views.register_view(request.context, catalog_key(request), namespace, name, location)
    return IcebergResponse(load_result(view))
