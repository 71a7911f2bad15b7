"""chalicelib.protocol.paimon.wire in process: dispatch, decoding, and the one error mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import errors
from chalicelib.context import context_from_bearer
from chalicelib.protocol.paimon import routes, wire
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse


def call(method: str, route: str, path: dict[str, str] | None = None, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    result = wire.handle(method, route, path, {}, headers or {}, body, None)
    return result.status, json.loads(result.body) if result.body else None


@pytest.mark.parametrize("error, status", [
    (errors.EntityNotFoundException("x", "TABLE", "t"), 404), (errors.AlreadyExistsException("x", "DATABASE", "d"), 409),
    (errors.InvalidInputException("x"), 400), (errors.AccessDeniedException("x"), 403),
    (errors.SignatureDoesNotMatchException("x"), 401), (errors.ConcurrentModificationException("x"), 409),
    (errors.SerializationException("x"), 400), (errors.InternalServiceException("x"), 500),
    (wire.not_implemented("x"), 501), (wire.PaimonError(405, "x"), 405),
])
def test_error_mapping(error: errors.ServiceError, status: int) -> None:
    got, body = wire.error_response(error)
    assert got == status == body["code"]
    assert body == {"message": error.message, "code": status, "resourceType": error.resource_type,
                    "resourceName": error.resource_name}


def test_handler_errors_become_error_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(request: PaimonRequest) -> PaimonResponse:
        raise errors.EntityNotFoundException(f"Table {request.path['table']} does not exist.", "TABLE",
                                             request.path["table"])
    monkeypatch.setitem(routes.ROUTES, ("GET", routes.TABLE), missing)
    status, body = call("GET", routes.TABLE, {"prefix": "wh", "database": "d", "table": "a+b%2Fc"})
    assert status == 404
    assert body["resourceType"] == "TABLE" and body["resourceName"] == "a b/c"


def test_a_bug_is_a_clean_500(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(request: PaimonRequest) -> PaimonResponse:
        raise KeyError("secret detail")
    monkeypatch.setitem(routes.ROUTES, ("GET", routes.TABLE), broken)
    status, body = call("GET", routes.TABLE, {"prefix": "wh", "database": "d", "table": "t"})
    assert status == 500 and "secret" not in body["message"]


def test_body_helpers_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    def create(request: PaimonRequest) -> PaimonResponse:
        request.require("name")
        request.optional("options", dict)
        return PaimonResponse()
    monkeypatch.setitem(routes.ROUTES, ("POST", routes.P + "/databases"), create)
    assert call("POST", routes.P + "/databases", {"prefix": "w"}, b'{"name": "d"}') == (200, None)
    status, body = call("POST", routes.P + "/databases", {"prefix": "w"}, b'{"options": {}}')
    assert status == 400 and body["message"] == "name is required"
    status, body = call("POST", routes.P + "/databases", {"prefix": "w"}, b'{"name": "d", "options": []}')
    assert status == 400 and "options must be a dict" in body["message"]


def test_unknown_route_and_method() -> None:
    status, body = call("GET", "/v1/{prefix}/nothing")
    assert status == 501 and body["resourceType"] is None and body["code"] == 501
    status, body = call("PUT", routes.P + "/databases", {"prefix": "w"})
    assert status == 405 and "GET, POST" in body["message"]


def test_every_route_has_a_handler_with_a_docstring() -> None:
    assert len(routes.ROUTES) == len(routes.ROUTE_LIST)
    for handler in routes.ROUTES.values():
        assert routes.resolve(handler).__doc__


def test_importing_the_routes_loads_no_handler() -> None:
    # app.py reads the route table at import: a Lambda cold start must not load every handler
    # (and the service and store layers below them) before the first request.
    import subprocess
    import sys
    code = ("import sys, chalicelib.protocol.paimon.routes; "
            "print(sorted(m for m in sys.modules if m.startswith(('chalicelib.service', 'chalicelib.store', "
            "'chalicelib.protocol.paimon.tables'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize("token, account, region", [
    ("Bearer 111122223333", "111122223333", None), ("Bearer 111122223333/eu-west-1", "111122223333", "eu-west-1"),
    ("Bearer some-opaque-token", None, None), ("", None, None),
])
def test_bearer_tokens(token: str, account: str | None, region: str | None) -> None:
    from chalicelib.context import DEFAULT_ACCOUNT_ID, DEFAULT_REGION
    ctx = context_from_bearer({"authorization": token}, None)
    assert (ctx.account_id, ctx.region) == (account or DEFAULT_ACCOUNT_ID, region or DEFAULT_REGION)
