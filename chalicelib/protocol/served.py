"""The AWS operations this service serves: every (service, operation) of Glue's and Lake
Formation's route tables, for docs (infra/compatibility.py) and tests. Reading it imports no
handler module."""

from __future__ import annotations

from chalicelib.protocol.aws_json.model import GLUE, LAKEFORMATION
from chalicelib.protocol.glue import routes as glue_routes
from chalicelib.protocol.lakeformation import routes as lakeformation_routes

ROUTE_TABLES = {GLUE: glue_routes.ROUTES, LAKEFORMATION: lakeformation_routes.ROUTES}


def implemented() -> list[tuple[str, str]]:
    """Every (service, operation) served, sorted."""
    return sorted((service, operation) for service, routes in ROUTE_TABLES.items() for operation in routes)
