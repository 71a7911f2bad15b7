"""Chalice's own error answers as AWS errors, on the Lambda path (Chalice.__call__), no server."""

from __future__ import annotations

import json

from chalice import Chalice
from chalice.test import Client

import app as service
from chalicelib.protocol import framework


def test_unsupported_media_type_in_lambda() -> None:
    with Client(service.app) as client:
        response = client.http.post("/", headers={"Content-Type": "text/xml"}, body=b"{}")
    assert response.status_code == 415
    assert json.loads(response.body)["__type"] == "UnsupportedMediaTypeException"
    assert response.headers["x-amzn-ErrorType"] == "UnsupportedMediaTypeException"
    assert response.headers["Content-Type"] == "application/x-amz-json-1.1"


def test_method_not_allowed_in_lambda_keeps_allow() -> None:
    with Client(service.app) as client:
        response = client.http.request("PUT", "/GetDataLakeSettings", headers={"Content-Type": "application/json"})
    assert response.status_code == 405
    assert json.loads(response.body)["__type"] == "MethodNotAllowedException"
    assert response.headers["Allow"] == "POST"
    assert response.headers["Content-Type"] == "application/json"


def test_view_crash_is_an_internal_service_exception() -> None:
    app = Chalice(app_name="crash")
    app.middleware("http")(service.aws_shaped_framework_errors)

    @app.route("/", methods=["POST"])
    def crash() -> None:
        raise RuntimeError("boom")

    with Client(app) as client:
        response = client.http.post("/", body=b"{}")
    assert response.status_code == 500
    body = json.loads(response.body)
    assert body["__type"] == "InternalServiceException" and "boom" not in body["Message"]


def test_error_names() -> None:
    assert framework.aws_error_name("UnsupportedMediaType") == "UnsupportedMediaTypeException"
    assert framework.aws_error_name("NotFoundError") == "NotFoundException"
    assert framework.aws_error_name("BadRequestError") == "BadRequestException"
    assert framework.aws_error_name("InternalServerError") == "InternalServiceException"
