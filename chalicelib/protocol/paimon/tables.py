"""Tables: create with a Schema, get, alter (SchemaChanges), rename, drop, listings
(``service.paimon_tables``); by id, rollback-schema, replace and register
(``service.paimon_table_admin``); the data token and query auth are not served (``routes``: 501)."""

from __future__ import annotations

from typing import Any, Callable

from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.schema import Schema
from chalicelib.domain.paimon.schema_changes import parse_changes
from chalicelib.protocol.paimon import paging
from chalicelib.protocol.paimon.databases import catalog_key, check_name
from chalicelib.protocol.paimon.wire import PaimonError, PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_table_admin, paimon_tables
from chalicelib.service.paimon_tables import PaimonTable


def table_response(table: PaimonTable, database: str) -> dict[str, Any]:
    """GetTableResponse (``database``: the database's name, as Paimon's servers fill it in)."""
    return {"id": table.id, "database": database.lower(), "name": table.name, "path": table.path, "isExternal": table.is_external,
            "schemaId": table.schema_id, "schema": table.schema.to_json(), "owner": table.owner,
            "createdAt": table.created_at, "createdBy": table.owner, "updatedAt": table.updated_at,
            "updatedBy": table.owner}


def _identifier(request: PaimonRequest, member: str, existing: bool = False) -> tuple[str, str]:
    """``{database, object}``: names of a table to create (400 when invalid), or ``existing``
    (404 when too long to exist)."""
    value = request.require(member, dict)
    database, name = value.get("database"), value.get("object")
    if existing and isinstance(database, str) and isinstance(name, str):
        names.existing("database", database)
        names.existing("table", name)
    return check_name(database, f"{member}.database"), check_name(name, f"{member}.object")


def _listing(request: PaimonRequest, details: bool) -> tuple[list[Any], str | None]:
    pattern = paging.name_pattern(request, "tableNamePattern")
    table_type = (request.query.get("tableType") or "").strip().lower() or None
    database = request.path["database"]
    scope = (database.lower(), pattern.prefix, pattern.exact, table_type)
    after = paging.read_token(request, *scope)
    if table_type not in (None, "table", paimon_tables.FORMAT_TABLE):
        # Paimon tables ("table") and Glue tables as format tables are all this catalog serves:
        # no object, iceberg or lance tables (the reference server filters on "type" the same way).
        paimon_tables.list_tables(request.context, catalog_key(request), database, None, 1)  # 404 for no database
        return [], None
    page, last = paimon_tables.list_tables(request.context, catalog_key(request), database, after,
                                           paging.max_results(request), pattern.prefix, pattern.exact, details,
                                           table_type)
    return page, paging.make_token(request, last, *scope)


def list_tables(request: PaimonRequest) -> PaimonResponse:
    """ListTablesResponse: the Paimon tables' names, paged, by ``tableNamePattern``."""
    names, token = _listing(request, details=False)
    return PaimonResponse({"tables": names, "nextPageToken": token})


def list_table_details(request: PaimonRequest) -> PaimonResponse:
    """ListTableDetailsResponse: GetTableResponse of each table, paged."""
    found, token = _listing(request, details=True)
    return PaimonResponse({"tableDetails": [table_response(t, request.path["database"]) for t in found], "nextPageToken": token})


def list_tables_globally(request: PaimonRequest) -> PaimonResponse:
    """ListTablesGloballyResponse: ``{database, object}`` identifiers of the whole catalog, paged,
    by ``databaseNamePattern`` and ``tableNamePattern`` (the Java client's listTablesPagedGlobally)."""
    databases = paging.name_pattern(request, "databaseNamePattern")
    names = paging.name_pattern(request, "tableNamePattern")
    scope = (databases.prefix, databases.exact, names.prefix, names.exact)
    after = paging.read_token(request, *scope)
    if after is not None and not (isinstance(after, list) and len(after) == 2
                                  and all(isinstance(x, str) for x in after)):
        raise bad_request("Invalid pageToken")
    found, last = paimon_tables.list_tables_globally(
        request.context, catalog_key(request), after, paging.max_results(request), databases.prefix,
        None if databases.exact is None else databases.exact.lower(), names.prefix, names.exact)
    return PaimonResponse({"tables": [{"database": d, "object": t} for d, t in found],
                           "nextPageToken": paging.make_token(request, last, *scope)})


def create_table(request: PaimonRequest) -> PaimonResponse:
    """CreateTableRequest ``{identifier, schema}``."""
    database, name = _identifier(request, "identifier")
    if database.lower() != request.path["database"].lower():
        raise bad_request(f"identifier.database {database!r} differs from the path's database "
                          f"{request.path['database']!r}")
    schema = Schema.from_json(request.require("schema", dict), "schema")
    paimon_tables.create_table(request.context, catalog_key(request), database, name, schema)
    return PaimonResponse()


def get_table(request: PaimonRequest) -> PaimonResponse:
    """GetTableResponse."""
    table = paimon_tables.get_table(request.context, catalog_key(request), request.path["database"],
                                    request.path["table"])
    return PaimonResponse(table_response(table, request.path["database"]))


def alter_table(request: PaimonRequest) -> PaimonResponse:
    """AlterTableRequest ``{changes}``: all of them or none."""
    changes = parse_changes(request.require("changes", list), "changes")
    if not changes:
        raise bad_request("changes must not be empty")
    paimon_tables.alter_table(request.context, catalog_key(request), request.path["database"],
                              request.path["table"], changes)
    return PaimonResponse()


def drop_table(request: PaimonRequest) -> PaimonResponse:
    """Drop a table (a managed table's directory too)."""
    paimon_tables.drop_table(request.context, catalog_key(request), request.path["database"], request.path["table"])
    return PaimonResponse()


def rename_table(request: PaimonRequest) -> PaimonResponse:
    """RenameTableRequest ``{source, destination}``."""
    source_database, source = _identifier(request, "source", existing=True)
    target_database, target = _identifier(request, "destination")
    paimon_tables.rename_table(request.context, catalog_key(request), source_database, source, target_database,
                               target)
    return PaimonResponse()



def get_table_by_id(request: PaimonRequest) -> PaimonResponse:
    """GetTableResponse of the table whose ``id`` is the path's (RESTApi.getTableById)."""
    database, table = paimon_table_admin.get_table_by_id(request.context, catalog_key(request), request.path["id"])
    return PaimonResponse(table_response(table, database))


def _not_served(call: Callable[[], None]) -> PaimonResponse:
    try:
        call()
    except paimon_table_admin.NotServed as refusal:
        raise PaimonError(501, str(refusal)) from None
    return PaimonResponse()


def rollback_schema(request: PaimonRequest) -> PaimonResponse:
    """RollbackSchemaRequest ``{schemaId}``: the schemas above it dropped."""
    schema_id = request.require("schemaId", int)
    return _not_served(lambda: paimon_table_admin.rollback_schema(
        request.context, catalog_key(request), request.path["database"], request.path["table"], schema_id))


def replace_table(request: PaimonRequest) -> PaimonResponse:
    """ReplaceTableRequest ``{schema}``: CREATE OR REPLACE of an existing table (same id and path)."""
    schema = Schema.from_json(request.require("schema", dict), "schema")
    return _not_served(lambda: paimon_table_admin.replace_table(
        request.context, catalog_key(request), request.path["database"], request.path["table"], schema))


def register_table(request: PaimonRequest) -> PaimonResponse:
    """RegisterTableRequest ``{identifier, path}``: adopt an existing table directory."""
    database, name = _identifier(request, "identifier")
    if database.lower() != request.path["database"].lower():
        raise bad_request(f"identifier.database {database!r} differs from the path's database "
                          f"{request.path['database']!r}")
    path = request.require("path")
    paimon_table_admin.register_table(request.context, catalog_key(request), database, name, path)
    return PaimonResponse()
