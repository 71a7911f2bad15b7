"""Namespaces: list, create, load, exists, update properties, drop (``service.iceberg_namespaces``)."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.iceberg import paging
from chalicelib.protocol.iceberg.config import catalog_key
from chalicelib.protocol.iceberg.wire import (NAMESPACE_SEPARATOR, IcebergError, IcebergRequest, IcebergResponse, bad_request,
                                              check_kind, no_content)
from chalicelib.service import iceberg_namespaces

MAX_NAME_LENGTH = 255  # a Glue database name
_MAX_KEY, _MAX_VALUE = 255, 512000


def path_namespace(request: IcebergRequest) -> str:
    """The database the path's ``{namespace}`` names (404 for a nested one: none exists here)."""
    return iceberg_namespaces.single_level(tuple(request.path["namespace"].split(NAMESPACE_SEPARATOR)))


def check_name(name: Any, what: str) -> str:
    """A namespace or table name the Glue catalog can hold (400 naming ``what`` otherwise)."""
    check_kind(name, str, what)
    if not name.strip():
        raise bad_request(f"Invalid request: {what} must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise bad_request(f"Invalid request: {what} must be at most {MAX_NAME_LENGTH} characters, not {len(name)}")
    if any(ord(c) < 32 and c != "\t" for c in name):
        raise bad_request(f"Invalid request: {what} must not contain control characters")
    return name


def levels(value: Any, what: str) -> tuple[str, ...]:
    """A namespace in JSON form: a list of strings."""
    check_kind(value, list, what)
    for i, part in enumerate(value):
        check_kind(part, str, f"{what}[{i}]")
    return tuple(value)


def string_map(value: Any, what: str) -> dict[str, str]:
    """An object of string values (None: empty), within what a Glue database holds."""
    if value is None:
        return {}
    check_kind(value, dict, what)
    for key, item in value.items():
        check_kind(item, str, f"{what}.{key}")
        if not key or len(key) > _MAX_KEY or len(item) > _MAX_VALUE:
            raise bad_request(f"Invalid request: {what}: keys must be 1 to {_MAX_KEY} characters and values at "
                              f"most {_MAX_VALUE}")
    return dict(value)


def list_namespaces(request: IcebergRequest) -> IcebergResponse:
    """ListNamespacesResponse: the top-level namespaces (a ``parent`` has none: namespaces are
    single-level), paged by ``pageToken``/``pageSize``."""
    key = catalog_key(request)
    parent = request.query.get("parent")
    if parent:
        name = iceberg_namespaces.single_level(tuple(parent.split(NAMESPACE_SEPARATOR)))
        iceberg_namespaces.load_properties(key, name)  # 404 for no such parent
        return IcebergResponse({"namespaces": [], "next-page-token": None})
    after = paging.read_token(request)
    names, last = iceberg_namespaces.list_namespaces(key, after, paging.page_size(request))
    return IcebergResponse({"namespaces": [[name] for name in names],
                            "next-page-token": paging.make_token(request, last)})


def create_namespace(request: IcebergRequest) -> IcebergResponse:
    """CreateNamespaceResponse."""
    namespace = levels(request.require("namespace", list), "namespace")
    name = check_name(iceberg_namespaces.single_level(namespace, creating=True), "namespace")
    properties = string_map(request.optional("properties", dict), "properties")
    stored = iceberg_namespaces.create_namespace(catalog_key(request), name, properties)
    return IcebergResponse({"namespace": [stored_name(name)], "properties": stored})


def stored_name(name: str) -> str:
    """A name as Glue keeps it (lowercase)."""
    return name.lower()


def load_namespace(request: IcebergRequest) -> IcebergResponse:
    """GetNamespaceResponse."""
    name = path_namespace(request)
    properties = iceberg_namespaces.load_properties(catalog_key(request), name)
    return IcebergResponse({"namespace": [stored_name(name)], "properties": properties})


def namespace_exists(request: IcebergRequest) -> IcebergResponse:
    """204 if the namespace exists, 404 if not."""
    name = path_namespace(request)
    if not iceberg_namespaces.exists(catalog_key(request), name):
        raise iceberg_namespaces.not_found(name)
    return no_content()


def update_properties(request: IcebergRequest) -> IcebergResponse:
    """UpdateNamespacePropertiesResponse: updated, removed and missing keys."""
    name = path_namespace(request)
    removals = request.optional("removals", list) or []
    for i, key in enumerate(removals):
        check_kind(key, str, f"removals[{i}]")
    updates = string_map(request.optional("updates", dict), "updates")
    both = sorted(set(removals) & set(updates))
    if both:  # the spec's 422
        raise IcebergError(422, "UnprocessableEntityException",
                           f"Invalid namespace update: cannot both set and remove properties {both}")
    updated, removed, missing = iceberg_namespaces.update_properties(catalog_key(request), name, updates, removals)
    return IcebergResponse({"updated": updated, "removed": removed, "missing": missing or None})


def drop_namespace(request: IcebergRequest) -> IcebergResponse:
    """204; 409 NamespaceNotEmptyException while it holds tables or views."""
    iceberg_namespaces.drop_namespace(catalog_key(request), path_namespace(request))
    return no_content()
