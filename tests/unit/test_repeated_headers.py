"""A request carrying two Authorization headers is refused on the Lambda path (API Gateway's REST
API proxy events: ``headers`` holds the last value, ``multiValueHeaders`` every one), in the open
mode here, before anything is read or stored (no store runs in these tests). The verified mode and
the local server: tests/integration/test_auth.py and test_http_edge.py."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from app import app

GLUE = "AWS4-HMAC-SHA256 Credential={key}/20260101/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=0"


def _event(path: str, resource: str, headers: list[tuple[str, str]], method: str = "POST",
           path_parameters: dict[str, str] | None = None) -> dict[str, Any]:
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        multi.setdefault(name, []).append(value)
    return {
        "resource": resource, "path": path, "httpMethod": method,
        "headers": dict(headers), "multiValueHeaders": multi,
        "queryStringParameters": None, "multiValueQueryStringParameters": None,
        "pathParameters": path_parameters, "stageVariables": None,
        "requestContext": {"resourcePath": resource, "httpMethod": method, "path": path, "stage": "api",
                           "identity": {"sourceIp": "203.0.113.7"}},
        "body": '{"DatabaseInput": {"Name": "dup"}}', "isBase64Encoded": False,
    }


@pytest.fixture(autouse=True)
def open_mode(configure: Callable[..., Any]) -> None:
    configure(auth="open", lambda_function_name=None)


@pytest.mark.parametrize("second", ["Authorization", "authorization", "AUTHORIZATION"])
def test_glue_refuses_two_authorization_headers(second: str) -> None:
    headers = [("Content-Type", "application/x-amz-json-1.1"), ("X-Amz-Target", "AWSGlue.CreateDatabase"),
               ("Authorization", GLUE.format(key="111122223333")), (second, GLUE.format(key="444455556666"))]
    response = app(_event("/", "/", headers), None)
    assert response["statusCode"] == 400
    body = json.loads(response["body"])
    assert body["__type"] == "IncompleteSignatureException" and "more than one 'Authorization'" in body["Message"]


def test_lake_formation_refuses_two_authorization_headers() -> None:
    lf = GLUE.replace("/glue/", "/lakeformation/")
    headers = [("Content-Type", "application/json"), ("Authorization", lf.format(key="111122223333")),
               ("Authorization", lf.format(key="111122223333"))]
    response = app(_event("/api/StartTransaction", "/{operation}", headers,
                          path_parameters={"operation": "StartTransaction"}), None)
    assert response["statusCode"] == 403
    assert json.loads(response["body"])["__type"] == "IncompleteSignatureException"
    assert response["headers"]["x-amzn-ErrorType"] == "IncompleteSignatureException"


def test_paimon_refuses_two_bearer_tokens() -> None:
    headers = [("Content-Type", "application/json"), ("Authorization", "Bearer 111122223333"),
               ("Authorization", "Bearer 444455556666/eu-west-1")]
    response = app(_event("/v1/config", "/v1/config", headers, method="GET"), None)
    assert response["statusCode"] == 401
    body = json.loads(response["body"])
    assert body["code"] == 401 and "more than one 'Authorization'" in body["message"]


@pytest.mark.parametrize("path, authorization, status", [
    ("/", GLUE.format(key="111122223333") + ", " + GLUE.format(key="444455556666"), 400),
    ("/", GLUE.format(key="111122223333") + ",aws4-hmac-sha256 Credential=x", 400),
    ("/v1/config", "Bearer 111122223333, Bearer 444455556666", 401),
    ("/v1/config", "Bearer 111122223333,Bearer", 401),
])
def test_two_values_folded_into_one_line_are_refused_too(path: str, authorization: str, status: int) -> None:
    headers = [("Content-Type", "application/x-amz-json-1.1"), ("X-Amz-Target", "AWSGlue.CreateDatabase"),
               ("Authorization", authorization)]
    response = app(_event(path, path, headers, method="POST" if path == "/" else "GET"), None)
    assert response["statusCode"] == status
    body = json.loads(response["body"])
    assert "more than one 'Authorization'" in (body.get("Message") or body.get("message"))


def test_one_authorization_header_in_multi_value_headers_is_served_as_before() -> None:
    headers = [("Authorization", "Bearer 111122223333")]
    response = app(_event("/v1/config", "/v1/config", headers, method="GET"), None)
    assert response["statusCode"] == 400  # no warehouse named: the config call itself answers
