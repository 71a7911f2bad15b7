"""The Paimon REST protocol's edge, through the running service: config, routing, errors.

pypaimon 2.1.0 (its RESTApi and RESTCatalog with ``token.provider = bear``) is the client; raw HTTP
is used where the point is the wire (bad JSON, unknown paths, wrong methods).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Iterator

import pytest
import requests
from pypaimon.api.rest_api import RESTApi
from pypaimon.api.rest_exception import (BadRequestException, NotImplementedException,
                                         RESTException)
from pypaimon.api.rest_util import RESTUtil
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog

WAREHOUSE = "paimon_wh"
ACCOUNT = "123456789012"


def options(endpoint: str, warehouse: str = WAREHOUSE, token: str = ACCOUNT) -> dict[str, str]:
    """RESTCatalog options for this service: a bearer token naming the account."""
    return {"metastore": "rest", "uri": endpoint, "warehouse": warehouse, "token.provider": "bear",
            "token": token}


def error_of(response: requests.Response) -> dict[str, Any]:
    """The ErrorResponse body, checked for Paimon's four members."""
    body = response.json()
    assert set(body) == {"message", "code", "resourceType", "resourceName"}, body
    assert body["code"] == response.status_code
    assert isinstance(body["message"], str) and body["message"]
    return body


def test_config_gives_the_warehouse_as_prefix(endpoint: str) -> None:
    api = RESTApi(options(endpoint))
    assert api.options.to_map()["prefix"] == WAREHOUSE
    assert api.resource_paths.databases() == f"/v1/{WAREHOUSE}/databases"


def test_config_for_a_warehouse_name_needing_encoding(endpoint: str) -> None:
    name = "my wh/ä+1"
    api = RESTApi(options(endpoint, warehouse=name))
    assert api.options.to_map()["prefix"] == name


def test_config_without_warehouse_is_400(endpoint: str) -> None:
    response = requests.get(f"{endpoint}/v1/config", timeout=30)
    assert response.status_code == 400
    assert "warehouse" in error_of(response)["message"]


def test_rest_catalog_is_created_and_unimplemented_calls_are_501(endpoint: str) -> None:
    catalog = CatalogFactory.create(options(endpoint))
    assert isinstance(catalog, RESTCatalog)
    with pytest.raises(NotImplementedException):
        catalog.rest_api.load_table_token(_identifier("db", "t"))


def _identifier(database: str, table: str) -> Any:
    from pypaimon.common.identifier import Identifier
    return Identifier.create(database, table)


@pytest.mark.parametrize("method, path", [
    ("GET", "/v1/wh/databases/d/tables/t/token"), ("POST", "/v1/wh/databases/d/tables/t/auth"),
    ("GET", "/v1/wh/permissions"), ("POST", "/v1/wh/permissions/grant"), ("POST", "/v1/wh/permissions/revoke"),
])
def test_unserved_routes_answer_501_as_error_response(endpoint: str, method: str, path: str) -> None:
    response = requests.request(method, endpoint + path, data=b"{}" if method == "POST" else None,
                                headers={"Authorization": f"Bearer {ACCOUNT}"}, timeout=30)
    assert response.status_code == 501, response.text
    error_of(response)


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "PUT"])
def test_unknown_path_is_501_error_response(endpoint: str, method: str) -> None:
    # Never a bare 404: Paimon's Java RESTCatalog reads a 404 as "the table does not exist".
    for path in ("/v1/wh/databases/d/tables/t/nothing-here", "/v1/wh", "/v1/wh/no/such/path/at/all"):
        response = requests.request(method, endpoint + path, data=b"{}" if method != "GET" else None, timeout=30)
        assert response.status_code == 501, (path, response.text)
        assert error_of(response)["resourceType"] is None
    api = RESTApi(options(endpoint))
    with pytest.raises(NotImplementedException):
        api.client.get("/v1/wh/no/such/path/at/all", None, api.rest_auth_function)


def test_wrong_method_is_405_error_response(endpoint: str) -> None:
    response = requests.put(f"{endpoint}/v1/wh/databases", data=b"{}", timeout=30)
    assert response.status_code == 405
    error_of(response)


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\"text\"", b"\xff\xfe", b'{"a": "\\ud800"}'])
def test_bad_json_is_400(endpoint: str, body: bytes) -> None:
    response = requests.post(f"{endpoint}/v1/wh/databases", data=body,
                             headers={"Content-Type": "application/json"}, timeout=30)
    assert response.status_code == 400, response.text
    error_of(response)


def test_bad_json_raises_pypaimons_bad_request(endpoint: str) -> None:
    api = RESTApi(options(endpoint))
    with pytest.raises(BadRequestException):
        # post() serializes its body itself; send an undecodable body through the session instead.
        response = api.client.session.post(f"{endpoint}/v1/{WAREHOUSE}/databases", data=b"{x",
                                           headers={"Authorization": f"Bearer {ACCOUNT}"}, timeout=30)
        from pypaimon.api.client import DefaultErrorHandler, _parse_error_response
        DefaultErrorHandler.get_instance().accept(_parse_error_response(response.text, response.status_code),
                                                  "unknown")


def test_a_bad_bearer_region_is_refused_not_500(endpoint: str) -> None:
    response = requests.get(f"{endpoint}/v1/wh/databases",
                            headers={"Authorization": f"Bearer {ACCOUNT}/Not_A_Region"}, timeout=30)
    assert response.status_code == 401
    assert "region" in error_of(response)["message"]
    with pytest.raises(RESTException):
        RESTApi(options(endpoint, token=f"{ACCOUNT}/Not_A_Region")).list_databases()


# -- path parameters needing encoding, through the real local server in this process ------------

@pytest.fixture
def echo_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The local server (infra.local.server) serving the app in this process, with GET table and
    GET tag answering the decoded path parameters and the request's account and region."""
    from chalicelib.protocol.paimon import routes
    from chalicelib.protocol.paimon.wire import PaimonResponse
    from infra.local.server import make_server

    def echo(request: Any) -> PaimonResponse:
        return PaimonResponse({"path": request.path, "account": request.context.account_id,
                               "region": request.context.region, "query": request.query})
    monkeypatch.setitem(routes.ROUTES, ("GET", routes.TABLE), echo)
    monkeypatch.setitem(routes.ROUTES, ("GET", routes.TABLE + "/tags/{tag}"), echo)
    server = make_server(port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_names_needing_encoding_arrive_decoded(echo_server: str) -> None:
    from pypaimon.api.resource_paths import ResourcePaths
    names = {"prefix": "wh 1", "database": "db/with slash+plus", "table": "täble~%20", "tag": "t?#&="}
    paths = ResourcePaths(names["prefix"])
    url = echo_server + paths.tag(names["database"], names["table"], names["tag"])
    response = requests.get(url, headers={"Authorization": "Bearer 111122223333/eu-west-1"}, timeout=30)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["path"] == names
    assert (body["account"], body["region"]) == ("111122223333", "eu-west-1")
    # The same names through pypaimon's own encoder, and an unscoped token: the default region.
    url = echo_server + paths.table(names["database"], names["table"])
    assert RESTUtil.encode_string(names["database"]) in url
    body = requests.get(url, headers={"Authorization": "Bearer 111122223333"}, timeout=30).json()
    assert body["path"] == {k: v for k, v in names.items() if k != "tag"}
    assert body["account"] == "111122223333"


def test_query_parameters_arrive_decoded(echo_server: str) -> None:
    url = f"{echo_server}/v1/wh/databases/d/tables/t?maxResults=5&pageToken=a%2Bb+c"
    body = requests.get(url, timeout=30).json()
    assert body["query"] == {"maxResults": "5", "pageToken": "a+b c"}
    assert json.dumps(body)
