"""GET /health (and /ping): the service's status and whether the store answers, unauthenticated;
GET / from a browser leads to the page at /ui, whose files come from a fixed allow-list; every
other answer on these paths stays what it was (Glue on POST /, AWS-shaped 405 on GET /)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from infra.local.dynamodb_local import free_port


def _get(url: str, headers: dict[str, str] | None = None, method: str = "GET",
         body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers=headers or {}, method=method, data=body)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


@pytest.mark.parametrize("path", ["/health", "/ping"])
def test_health_answers_ok_without_authentication(endpoint: str, path: str) -> None:
    status, headers, body = _get(endpoint + path)
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["status"] == "ok" and answer["store"] == "ok" and answer["auth"] == "open"
    assert answer["account"] == "123456789012" and answer["region"] == "us-east-1"


def test_health_is_cheap_when_probed_often(endpoint: str) -> None:
    # The store probe is cached: a burst of probes is answered without a store read each.
    started = time.monotonic()
    for _ in range(20):
        assert _get(endpoint + "/health")[0] == 200
    assert time.monotonic() - started < 30  # a sanity bound, not a timing claim


def test_health_says_when_the_store_does_not_answer(start_server: Any) -> None:
    server = start_server(GLUE_DDB_ENDPOINT=f"http://127.0.0.1:{free_port()}")
    status, _, body = _get(server.endpoint + "/health")
    answer = json.loads(body)
    assert status == 503 and answer["status"] == "degraded" and answer["store"] not in ("ok", "")


def test_health_with_sigv4_on_names_no_account(start_server: Any) -> None:
    server = start_server(GLUE_AUTH="sigv4")
    status, _, body = _get(server.endpoint + "/health")
    answer = json.loads(body)
    assert status == 200 and answer["auth"] == "sigv4" and "account" not in answer


def test_a_browser_at_the_root_is_sent_to_the_page(endpoint: str) -> None:
    status, headers, _ = _get(endpoint + "/", {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert status == 302 and headers["location"] == "ui"
    status, headers, body = _get(endpoint + "/ui")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b"<title>Catalog browser</title>" in body and "script-src 'self'" in headers["content-security-policy"]


def test_the_page_with_a_trailing_slash_is_sent_to_the_page(endpoint: str) -> None:
    status, headers, _ = _get(endpoint + "/ui/")  # its relative links (ui/app.js) need /ui
    assert status == 302 and headers["location"] == "../ui"


def test_other_gets_of_the_root_keep_their_aws_answer(endpoint: str) -> None:
    status, headers, body = _get(endpoint + "/", {"Content-Type": "application/x-amz-json-1.1"})
    assert status == 405 and json.loads(body)["__type"] == "MethodNotAllowedException"
    assert headers["x-amzn-errortype"] == "MethodNotAllowedException"


@pytest.mark.parametrize("name, kind", [("app.js", "text/javascript"), ("sigv4.js", "text/javascript"),
                                        ("style.css", "text/css"), ("favicon.svg", "image/svg+xml")])
def test_the_page_s_files_are_served(endpoint: str, name: str, kind: str) -> None:
    status, headers, body = _get(f"{endpoint}/ui/{name}")
    assert status == 200 and headers["content-type"].startswith(kind) and body


@pytest.mark.parametrize("path", ["/ui/app.py", "/ui/..%2Fapp.py", "/ui/%2E%2E%2Fchalicelib%2Fsettings.py",
                                  "/ui/index.HTML", "/ui/wire.py"])
def test_no_other_file_is_served(endpoint: str, path: str) -> None:
    status, _, body = _get(endpoint + path)
    assert status in (403, 404) and b"import" not in body


def test_post_on_the_new_paths_stays_lake_formation(endpoint: str) -> None:
    for path in ("/health", "/ping", "/ui"):
        status, headers, body = _get(endpoint + path, {"Content-Type": "application/json"}, "POST", b"{}")
        assert status == 400 and json.loads(body)["__type"] == "UnknownOperationException", path


def test_glue_on_post_root_is_unchanged(glue: Any) -> None:
    assert "DatabaseList" in glue.get_databases()
