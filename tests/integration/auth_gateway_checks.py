"""Scenarios for test_auth.py: the Chalice app in process, with GLUE_AUTH=sigv4, on the session's store.

``python -m tests.integration.auth_gateway_checks AKID SECRET`` prints one JSON object: what
chalice.test.Client answers (chalice's local gateway event), and what the app answers to API
Gateway proxy events whose request context carries a stage path and whose Host is an execute-api
host, signed as a client calling that URL signs them.
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from chalice.test import Client

from app import app

HOST = "abc123defg.execute-api.us-east-1.amazonaws.com"
GLUE_HEADERS = {"Content-Type": "application/x-amz-json-1.1"}


def _signed(key: tuple[str, str], url: str, host: str, body: bytes, headers: dict[str, str],
            service: str = "glue", region: str = "us-east-1") -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body, headers={**headers, "Host": host})
    SigV4Auth(Credentials(*key), service, region).add_auth(request)
    return dict(request.headers.items())


def _event(path: str, resource: str, headers: dict[str, str], body: bytes,
           path_parameters: dict[str, str] | None = None,
           repeated: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """An API Gateway REST (proxy) event for the stage ``prod``: requestContext.path has the stage.
    ``repeated``: header values sent before the one ``headers`` holds (API Gateway's ``headers``
    keeps the last value of a repeated header, ``multiValueHeaders`` every one)."""
    multi = {name: [*(repeated or {}).get(name, []), value] for name, value in headers.items()}
    return {
        "resource": resource, "path": path[len("/prod"):], "httpMethod": "POST",
        "headers": headers, "multiValueHeaders": multi,
        "queryStringParameters": None, "multiValueQueryStringParameters": None,
        "pathParameters": path_parameters, "stageVariables": None,
        "requestContext": {"resourcePath": resource, "httpMethod": "POST", "path": path, "stage": "prod",
                           "domainName": HOST, "apiId": "abc123defg", "accountId": "999999999999",
                           "identity": {"sourceIp": "203.0.113.7", "accountId": None, "userArn": None}},
        "body": body.decode(), "isBase64Encoded": False,
    }


def _code(response: dict[str, Any]) -> Any:
    if response["statusCode"] == 200:
        return 200
    return json.loads(response["body"])["__type"]


def main(key_id: str, secret: str) -> dict[str, Any]:
    """Run every scenario; the answers by name."""
    key = (key_id, secret)
    name = "gw_" + uuid.uuid4().hex[:10]
    result: dict[str, Any] = {"created": name}
    with Client(app) as client:
        body = json.dumps({"DatabaseInput": {"Name": name}}).encode()
        target = {**GLUE_HEADERS, "X-Amz-Target": "AWSGlue.CreateDatabase"}
        response = client.http.post("/", headers=_signed(key, "http://localhost/", "localhost", body, target), body=body)
        result["client_ok"] = response.status_code
        response = client.http.post("/", headers={**target, "Host": "localhost"}, body=body)
        result["client_unsigned"] = response.json_body["__type"]

    list_body = b"{}"
    target = {**GLUE_HEADERS, "X-Amz-Target": "AWSGlue.GetDatabases"}
    stage_url = f"https://{HOST}/prod/"
    result["stage_ok"] = _code(app(_event("/prod/", "/", _signed(key, stage_url, HOST, list_body, target), list_body),
                                   None))
    without_stage = _signed(key, f"https://{HOST}/", HOST, list_body, target)
    result["stage_path_ignored"] = _code(app(_event("/prod/", "/", without_stage, list_body), None))
    wrong_host = {**_signed(key, stage_url, HOST, list_body, target), "Host": "evil.example.com"}
    result["stage_wrong_host"] = _code(app(_event("/prod/", "/", wrong_host, list_body), None))
    other_body = b'{"MaxResults": 1}'
    result["stage_other_body"] = _code(app(_event("/prod/", "/", _signed(key, stage_url, HOST, list_body, target),
                                                  other_body), None))
    lf_headers = _signed(key, f"https://{HOST}/prod/ListTransactions", HOST, b"{}",
                         {"Content-Type": "application/json"}, service="lakeformation")
    result["lakeformation_stage_ok"] = _code(app(_event("/prod/ListTransactions", "/{operation}", lf_headers, b"{}",
                                                        {"operation": "ListTransactions"}), None))
    # Signed for a region no partition has: refused (nothing created).
    create = {**GLUE_HEADERS, "X-Amz-Target": "AWSGlue.CreateDatabase"}
    refused = json.dumps({"DatabaseInput": {"Name": name + "_refused"}}).encode()
    nowhere = _signed(key, stage_url, HOST, refused, create, region="xx-nowhere-9")
    result["stage_unknown_region"] = _code(app(_event("/prod/", "/", nowhere, refused), None))
    # Two Authorization headers, each a valid signature of the request: refused (nothing created).
    signed = _signed(key, stage_url, HOST, refused, create)
    result["stage_two_authorizations"] = _code(app(_event("/prod/", "/", signed, refused,
                                                          repeated={"Authorization": [signed["Authorization"]]}),
                                                   None))
    result["lakeformation_two_authorizations"] = _code(app(_event(
        "/prod/ListTransactions", "/{operation}", lf_headers, b"{}", {"operation": "ListTransactions"},
        repeated={"Authorization": [lf_headers["Authorization"]]}), None))
    return result


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
