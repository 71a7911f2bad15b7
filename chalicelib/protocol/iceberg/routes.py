"""The Iceberg REST route table: (HTTP method, Chalice path template) -> handler. Plain data, read
by app.py (to register the routes), by wire.handle (to dispatch) and by config (the ``endpoints``
a ConfigResponse lists).

Every path of the Iceberg REST OpenAPI spec under ``/iceberg/v1``: Glue's prefix
``catalogs/{catalog}`` (what GET /v1/config answers in ``defaults.prefix``), and the same paths
without a prefix for clients that ignore it (the caller's own catalog). Chalice has no greedy path
parameters, so each shape is its own template.
"""

from __future__ import annotations

from chalicelib.protocol.iceberg.wire import Handler, unserved
from chalicelib.protocol.routing import families, resolve

config, namespaces, tables, views = families("chalicelib.protocol.iceberg", "config", "namespaces", "tables",
                                             "views")

BASE = "/iceberg/v1"
PREFIXED = BASE + "/catalogs/{catalog}"

# Relative to a prefix: (method, path, handler).
_SPEC: list[tuple[str, str, Handler]] = [
    ("GET", "/namespaces", namespaces.list_namespaces),
    ("POST", "/namespaces", namespaces.create_namespace),
    ("GET", "/namespaces/{namespace}", namespaces.load_namespace),
    ("HEAD", "/namespaces/{namespace}", namespaces.namespace_exists),
    ("DELETE", "/namespaces/{namespace}", namespaces.drop_namespace),
    ("POST", "/namespaces/{namespace}/properties", namespaces.update_properties),
    ("GET", "/namespaces/{namespace}/tables", tables.list_tables),
    ("POST", "/namespaces/{namespace}/tables", tables.create_table),
    ("GET", "/namespaces/{namespace}/tables/{table}", tables.load_table),
    ("HEAD", "/namespaces/{namespace}/tables/{table}", tables.table_exists),
    ("POST", "/namespaces/{namespace}/tables/{table}", tables.commit_table),
    ("DELETE", "/namespaces/{namespace}/tables/{table}", tables.drop_table),
    ("POST", "/namespaces/{namespace}/register", tables.register_table),
    ("POST", "/namespaces/{namespace}/tables/{table}/metrics", tables.report_metrics),
    # Access delegation waits for credential vending: clients use their own storage credentials.
    ("GET", "/namespaces/{namespace}/tables/{table}/credentials", unserved("Vended credentials")),
    ("POST", "/namespaces/{namespace}/tables/{table}/plan", unserved("Server-side scan planning")),
    ("GET", "/namespaces/{namespace}/tables/{table}/plan/{plan_id}", unserved("Server-side scan planning")),
    ("DELETE", "/namespaces/{namespace}/tables/{table}/plan/{plan_id}", unserved("Server-side scan planning")),
    ("POST", "/namespaces/{namespace}/tables/{table}/tasks", unserved("Server-side scan planning")),
    ("POST", "/tables/rename", tables.rename_table),
    ("POST", "/transactions/commit", tables.commit_transaction),
    ("GET", "/namespaces/{namespace}/views", views.list_views),
    ("POST", "/namespaces/{namespace}/views", views.create_view),
    ("GET", "/namespaces/{namespace}/views/{view}", views.load_view),
    ("HEAD", "/namespaces/{namespace}/views/{view}", views.view_exists),
    ("POST", "/namespaces/{namespace}/views/{view}", views.replace_view),
    ("DELETE", "/namespaces/{namespace}/views/{view}", views.drop_view),
    ("POST", "/namespaces/{namespace}/register-view", views.register_view),
    ("POST", "/views/rename", views.rename_view),
]



def served_endpoints() -> list[str]:
    """What ConfigResponse.endpoints lists: every spec route served here, as
    ``"<METHOD> /v1/{prefix}/<path>"`` (pyiceberg 0.12 and Iceberg Java call only the endpoints
    listed). Resolving a handler imports its module: this runs on a config call, not at import."""
    return [f"{method} /v1/{{prefix}}{path}" for method, path, handler in _SPEC
            if not resolve(handler).__name__.startswith("unserved")]


ROUTE_LIST: list[tuple[str, str, Handler]] = [
    ("GET", BASE + "/config", config.get_config),
    *((method, PREFIXED + path, handler) for method, path, handler in _SPEC),
    *((method, BASE + path, handler) for method, path, handler in _SPEC),
]
ROUTES: dict[tuple[str, str], Handler] = {(method, template): handler for method, template, handler in ROUTE_LIST}
