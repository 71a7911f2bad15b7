"""Every protocol's route table (chalicelib/protocol/<protocol>/routes.py): data, every handler a
documented function of its family module, and loaded only when called."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.protocol import routing, served
from chalicelib.protocol.aws_json.model import service_model
from chalicelib.protocol.paimon import routes as paimon_routes

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("service", sorted(served.ROUTE_TABLES))
def test_every_aws_route_is_an_operation_of_the_model_with_a_handler_named_after_it(service: str) -> None:
    operations = set(service_model(service).operation_names)
    for operation, handler in served.ROUTE_TABLES[service].items():
        assert operation in operations
        function = routing.resolve(handler)
        assert function.__module__.startswith(f"chalicelib.protocol.{service}.")
        # One function per operation, named after it: CreateTable -> create_table.
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in operation).lstrip("_")
        assert function.__name__ == snake, operation
        assert function.__doc__, operation


def test_every_paimon_route_has_a_documented_handler_of_the_paimon_package() -> None:
    for _method, _template, handler in paimon_routes.ROUTE_LIST:
        function = routing.resolve(handler)
        assert function.__doc__
        assert function.__module__.startswith("chalicelib.protocol.paimon.")


def test_a_handler_runs_what_its_module_holds_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.protocol.glue import databases, routes

    monkeypatch.setattr(databases, "get_database", lambda ctx, params: {"called": params})
    assert routes.ROUTES["GetDatabase"](None, {"Name": "d"}) == {"called": {"Name": "d"}}


def test_importing_the_app_loads_no_handler_family() -> None:
    """A Lambda cold start reads every route table at import (app.py) but loads no handler module,
    nor the service and store below them, before the first request."""
    code = ("import sys, app; print(sorted(m for m in sys.modules if m.startswith(('chalicelib.service', "
            "'chalicelib.store', 'chalicelib.protocol.aws_json.common')) or (m.startswith('chalicelib.protocol.') "
            "and m.rsplit('.', 1)[-1] not in ('wire', 'routes', 'aws_json', 'glue', 'lakeformation', 'paimon', 'iceberg', 'web', "
            "'model', 'quick_check', 'validate', 'shape_rules', 'sigv4', 'framework', 'response', 'routing', "
            "'json_body'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout == "[]\n"
