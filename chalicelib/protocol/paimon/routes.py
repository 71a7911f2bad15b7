"""The Paimon route table: (HTTP method, Chalice path template) -> handler. Plain data, read by
app.py (to register the routes) and by wire.handle (to dispatch).

Every path pypaimon 2.1.0 sends (api/resource_paths.py, api/rest_api.py), plus the Java client's
(paimon-api .../rest/ResourcePaths.java): global listings, views, table by id, register, replace,
rollback-schema, snapshots, consumers. tests/unit/test_paimon_openapi.py holds this table against
Paimon's OpenAPI spec.
Chalice has no greedy path parameters, so each shape is its own template.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import Handler, unserved
from chalicelib.protocol.routing import families, resolve  # noqa: F401  (resolve: for tests and docs)

# A handler module is imported on its handler's first call (protocol.routing): app.py reads this
# table at import to register the routes.
branches, config, databases, functions, history, partitions, snapshots, tables, tags, views = families(
    "chalicelib.protocol.paimon", "branches", "config", "databases", "functions", "history", "partitions", "snapshots",
    "tables", "tags", "views")

P = "/v1/{prefix}"
DB = P + "/databases/{database}"
TABLE = DB + "/tables/{table}"

ROUTE_LIST: list[tuple[str, str, Handler]] = [
    ("GET", "/v1/config", config.get_config),
    # databases
    ("GET", P + "/databases", databases.list_databases),
    ("POST", P + "/databases", databases.create_database),
    ("GET", DB, databases.get_database),
    ("POST", DB, databases.alter_database),
    ("DELETE", DB, databases.drop_database),
    # tables
    ("GET", DB + "/tables", tables.list_tables),
    ("POST", DB + "/tables", tables.create_table),
    ("GET", DB + "/table-details", tables.list_table_details),
    ("GET", P + "/tables", tables.list_tables_globally),
    ("POST", P + "/tables/rename", tables.rename_table),
    ("GET", P + "/tables/id/{id}", tables.get_table_by_id),
    ("POST", DB + "/register", tables.register_table),
    ("GET", TABLE, tables.get_table),
    ("POST", TABLE, tables.alter_table),
    ("DELETE", TABLE, tables.drop_table),
    ("GET", TABLE + "/token", unserved("Load table token")),
    ("POST", TABLE + "/auth", unserved("Auth table query")),
    ("POST", TABLE + "/replace", tables.replace_table),
    ("POST", TABLE + "/rollback-schema", tables.rollback_schema),
    # snapshots
    ("POST", TABLE + "/commit", snapshots.commit_table),
    ("GET", TABLE + "/snapshot", snapshots.load_snapshot),
    ("POST", TABLE + "/rollback", snapshots.rollback_table),
    ("GET", TABLE + "/snapshots", history.list_snapshots),
    ("GET", TABLE + "/snapshots/{version}", history.get_snapshot),
    ("GET", TABLE + "/consumers", history.list_consumers),
    ("POST", TABLE + "/consumers/reset", history.reset_consumer),
    # partitions
    ("GET", TABLE + "/partitions", partitions.list_partitions),
    ("POST", TABLE + "/partitions", partitions.create_partitions),
    ("POST", TABLE + "/partitions/drop", partitions.drop_partitions),
    ("POST", TABLE + "/partitions/mark", partitions.mark_done_partitions),
    ("POST", TABLE + "/partitions/list-by-names", partitions.list_partitions_by_names),
    ("POST", TABLE + "/partitions/list-by-filter", partitions.list_partitions_by_filter),
    # tags
    ("GET", TABLE + "/tags", tags.list_tags),
    ("POST", TABLE + "/tags", tags.create_tag),
    ("GET", TABLE + "/tags/{tag}", tags.get_tag),
    ("DELETE", TABLE + "/tags/{tag}", tags.delete_tag),
    # branches
    ("GET", TABLE + "/branches", branches.list_branches),
    ("POST", TABLE + "/branches", branches.create_branch),
    ("DELETE", TABLE + "/branches/{branch}", branches.drop_branch),
    ("POST", TABLE + "/branches/{branch}/rename", branches.rename_branch),
    ("POST", TABLE + "/branches/{branch}/forward", branches.fast_forward_branch),
    # functions
    ("GET", DB + "/functions", functions.list_functions),
    ("POST", DB + "/functions", functions.create_function),
    ("GET", DB + "/function-details", functions.list_function_details),
    ("GET", P + "/functions", functions.list_functions_globally),
    ("GET", DB + "/functions/{function}", functions.get_function),
    ("POST", DB + "/functions/{function}", functions.alter_function),
    ("DELETE", DB + "/functions/{function}", functions.drop_function),
    # views
    ("GET", DB + "/views", views.list_views),
    ("POST", DB + "/views", views.create_view),
    ("GET", DB + "/view-details", views.list_view_details),
    ("GET", P + "/views", views.list_views_globally),
    ("POST", P + "/views/rename", views.rename_view),
    ("GET", DB + "/views/{view}", views.get_view),
    ("POST", DB + "/views/{view}", views.alter_view),
    ("DELETE", DB + "/views/{view}", views.drop_view),
    # permissions
    ("GET", P + "/permissions", unserved("List permissions")),
    ("POST", P + "/permissions/grant", unserved("Grant permission")),
    ("POST", P + "/permissions/revoke", unserved("Revoke permission")),
]

ROUTES: dict[tuple[str, str], Handler] = {(method, path): handler for method, path, handler in ROUTE_LIST}

# Every other path under /v1 answers 501 (wire.unrouted), never API Gateway's or Chalice's 404:
# Paimon's Java client reads a 404 as "no such table". app.py registers these after the routes
# above; API Gateway (and infra/local/server.py) try a greedy ``{proxy+}`` only when no other
# resource matches. ``/v1/{proxy+}`` itself cannot be: API Gateway allows one variable path part
# among siblings, and ``/v1/{prefix}`` is one.
CATCH_ALL_PATHS = ("/v1/{prefix}", P + "/{proxy+}")
CATCH_ALL_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"]
