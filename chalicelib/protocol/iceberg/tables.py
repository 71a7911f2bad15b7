"""Tables: list, create (staged too), load, exists, commit, drop (purge), register, rename, metrics,
and the multi-table commit (``service.iceberg_catalog``)."""

from __future__ import annotations

from typing import Any

from chalicelib import json_text
from chalicelib.protocol.iceberg import paging
from chalicelib.protocol.iceberg.config import catalog_key
from chalicelib.protocol.iceberg.namespaces import check_name, levels, path_namespace, stored_name
from chalicelib.protocol.iceberg.wire import (IcebergRequest, IcebergResponse, bad_request, check_kind,
                                              no_content)
from chalicelib.service import iceberg_catalog, iceberg_namespaces
from chalicelib.service.iceberg_catalog import IcebergTable, TableChange


def load_result(table: IcebergTable) -> dict[str, Any]:
    """LoadTableResult (no ``config``: clients reach storage with their own credentials)."""
    return {"metadata-location": table.metadata_location, "metadata": table.metadata, "config": {}}


def _path_table(request: IcebergRequest) -> tuple[str, str]:
    return path_namespace(request), request.path["table"]


def _identifier(value: Any, what: str) -> tuple[str, str]:
    """A TableIdentifier ``{namespace: [...], name}`` as (database, table)."""
    check_kind(value, dict, what)
    namespace = levels(value.get("namespace"), f"{what}.namespace")
    database = iceberg_namespaces.single_level(namespace)
    return database, check_name(value.get("name"), f"{what}.name")


def _list_of_objects(value: Any, what: str) -> list[dict[str, Any]]:
    """A list of objects (requirements, updates: their members are the domain's to check)."""
    check_kind(value, list, what)
    for i, entry in enumerate(value):
        check_kind(entry, dict, f"{what}[{i}]")
    return list(value)


def list_tables(request: IcebergRequest) -> IcebergResponse:
    """ListTablesResponse: the namespace's tables (views are listed by list_views), paged."""
    namespace = path_namespace(request)
    after = paging.read_token(request, namespace.lower())
    names, last = iceberg_catalog.list_tables(request.context, catalog_key(request), namespace, after,
                                              paging.page_size(request))
    return IcebergResponse({"identifiers": [{"namespace": [stored_name(namespace)], "name": name} for name in names],
                            "next-page-token": paging.make_token(request, last, namespace.lower())})


def create_table(request: IcebergRequest) -> IcebergResponse:
    """LoadTableResult of the new (or, with ``stage-create``, staged) table."""
    namespace = path_namespace(request)
    check_name(request.require("name"), "name")
    request.require("schema", dict)
    for member, kind in (("location", str), ("partition-spec", dict), ("write-order", dict), ("properties", dict),
                         ("stage-create", bool)):
        request.optional(member, kind)
    for key, value in (request.body.get("properties") or {}).items():
        check_kind(value, str, f"properties.{key}")
    table = iceberg_catalog.create_table(request.context, catalog_key(request), namespace, request.body,
                                         stage=bool(request.body.get("stage-create")))
    return IcebergResponse(load_result(table))


def load_table(request: IcebergRequest) -> IcebergResponse:
    """LoadTableResult (``snapshots=all`` or ``refs``)."""
    snapshots = (request.query.get("snapshots") or "all").lower()
    if snapshots not in ("all", "refs"):
        raise bad_request(f"Invalid snapshots: {snapshots[:32]!r} (all or refs)")
    namespace, name = _path_table(request)
    return IcebergResponse(load_result(iceberg_catalog.load_table(request.context, catalog_key(request), namespace,
                                                                  name, snapshots)))


def table_exists(request: IcebergRequest) -> IcebergResponse:
    """204 if the table exists, 404 if not."""
    namespace, name = _path_table(request)
    if not iceberg_catalog.table_exists(request.context, catalog_key(request), namespace, name):
        raise iceberg_catalog.table_not_found(namespace, name)
    return no_content()


def _change(body: dict[str, Any], what: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    requirements = _list_of_objects(body.get("requirements") if body.get("requirements") is not None else [],
                                    f"{what}requirements")
    updates = _list_of_objects(body.get("updates") if body.get("updates") is not None else [], f"{what}updates")
    return requirements, updates


def commit_table(request: IcebergRequest) -> IcebergResponse:
    """CommitTableResponse: the new metadata location and metadata."""
    namespace, name = _path_table(request)
    if request.body.get("identifier") is not None:
        given = _identifier(request.body["identifier"], "identifier")
        if (given[0].lower(), given[1].lower()) != (namespace.lower(), name.lower()):
            raise bad_request("Invalid request: identifier names another table than the path")
    requirements, updates = _change(request.body, "")
    table = iceberg_catalog.commit_table(request.context, catalog_key(request), namespace, name, requirements,
                                         updates)
    answer = {"metadata-location": table.metadata_location}
    if table.text is None:
        return IcebergResponse({**answer, "metadata": table.metadata})
    # The metadata file's text is the metadata's JSON (both by json_text.compact_lenient).
    return IcebergResponse(json_text.Spliced(answer, "metadata", table.text, table.metadata))


def drop_table(request: IcebergRequest) -> IcebergResponse:
    """204; ``purgeRequested=true`` also deletes the files the server may delete."""
    purge = (request.query.get("purgeRequested") or "false").strip().lower()
    if purge not in ("true", "false"):
        raise bad_request(f"Invalid purgeRequested: {purge[:16]!r} (true or false)")
    namespace, name = _path_table(request)
    iceberg_catalog.drop_table(request.context, catalog_key(request), namespace, name, purge == "true")
    return no_content()


def register_table(request: IcebergRequest) -> IcebergResponse:
    """LoadTableResult of the table registered at ``metadata-location``."""
    namespace = path_namespace(request)
    name = check_name(request.require("name"), "name")
    location = request.require("metadata-location")
    overwrite = bool(request.optional("overwrite", bool))
    table = iceberg_catalog.register_table(request.context, catalog_key(request), namespace, name, location,
                                           overwrite)
    return IcebergResponse(load_result(table))


def rename_table(request: IcebergRequest) -> IcebergResponse:
    """204: RenameTableRequest's source becomes its destination."""
    source = _identifier(request.require("source", dict), "source")
    destination = _identifier(request.require("destination", dict), "destination")
    iceberg_catalog.rename_table(request.context, catalog_key(request), *source, *destination)
    return no_content()


def report_metrics(request: IcebergRequest) -> IcebergResponse:
    """204: a ReportMetricsRequest is accepted (the table must exist and be visible to the caller)
    and not kept."""
    namespace, name = _path_table(request)
    if not iceberg_catalog.table_exists(request.context, catalog_key(request), namespace, name):
        raise iceberg_catalog.table_not_found(namespace, name)
    return no_content()


def commit_transaction(request: IcebergRequest) -> IcebergResponse:
    """204: every table change of a CommitTransactionRequest landed, or none did."""
    entries = request.require("table-changes", list)
    if not entries:
        raise bad_request("Invalid request: table-changes must not be empty")
    changes = []
    for i, entry in enumerate(entries):
        check_kind(entry, dict, f"table-changes[{i}]")
        if entry.get("identifier") is None:
            raise bad_request(f"Invalid request: table-changes[{i}].identifier is required")
        namespace, name = _identifier(entry["identifier"], f"table-changes[{i}].identifier")
        requirements, updates = _change(entry, f"table-changes[{i}].")
        changes.append(TableChange(namespace, name, requirements, updates))
    iceberg_catalog.commit_transaction(request.context, catalog_key(request), changes)
    return no_content()
