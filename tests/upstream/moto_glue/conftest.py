"""moto's own crawler tests (vendored from getmoto/moto tests/test_glue/) against this service.

Upstream's tests create ``boto3.client("glue", region_name="us-east-1")`` under ``@mock_aws``, in
moto's default account 123456789012, and expect that account empty at the start of each test.
This conftest is the entry: it starts a server of the suite's own on the session's DynamoDB
(tests/conftest.py ``stack``) whose crawl worker runs ``slow_engine`` (a crawl that runs until
stopped, as a real one runs for a minute or more) on a queue of its own, points the tests' clients
at it (``AWS_ENDPOINT_URL_GLUE``, access key 123456789012, in a boto3 default session of the
suite's own that keeps the response shape checks), empties the account's crawlers before each test
(stopping the running ones first), and marks what asserts moto's behaviour rather than AWS's
(``MOTO_ONLY``), each with its reason.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest

from infra.local.stack import REGION, CatalogStack, client
from tests import shape_check

ACCOUNT = "123456789012"
HERE = Path(__file__).parent

# Tests that assert moto's behaviour where AWS behaves otherwise: name -> why (skipped).
_NO_TARGET = ("creates its crawler with every target list empty (helpers.create_crawler's default), which "
              "moto accepts; AWS's CreateCrawler reference: 'At least one crawl target must be specified' "
              "(here InvalidInputException 'Crawler must have at least one target'). With that one check "
              "lifted, this test passes here unless a second reason is given")
_COMPLETES = ("and moto ends a crawl when ListCrawls is called ('turn crawler to completed'); on AWS (and "
              "here) a crawl runs until its work is done or StopCrawler, and a second StartCrawler "
              "meanwhile is CrawlerRunningException")
_NOT_FOUND = ("the message is moto's ('Crawler my_crawler_name not found.'); AWS answers GetCrawler "
              "with 'Crawler entry with name my_crawler_name does not exist' (the console's trace in "
              "iann0036/AWSConsoleRecorder#35), as this service does (test_moto_local_checks.py)")
_VALIDATION = ("and it expects the code ValidationException for a value outside the model's enum; this "
               "service answers every model-constraint violation InvalidInputException with the same "
               "wording ('Value ... at 'filters.1.member.filterOperator' failed to satisfy constraint: "
               "Member must satisfy enum value set: [...]'), a choice of the whole Glue front end, not "
               "of ListCrawls")
_STOPPING = ("and it expects STOPPING right after StartCrawler + StopCrawler; here a run no worker has "
             "claimed yet ends CANCELLED at once (READY), so no crawler stays STOPPING where no worker "
             "runs (design.md, 'Crawlers and crawl runs'); a claimed run is STOPPING, as on AWS")
MOTO_ONLY: dict[str, str] = {
    "test_create_crawler_already_exists": _NO_TARGET,
    "test_get_crawlers_several_items": _NO_TARGET,
    "test_start_crawler": _NO_TARGET,
    "test_start_crawler_should_raise_exception_if_already_running": _NO_TARGET,
    "test_stop_crawler": f"{_NO_TARGET}, {_STOPPING}",
    "test_stop_crawler_should_raise_exception_if_not_running": _NO_TARGET,
    "test_delete_crawler": f"{_NO_TARGET}, and {_NOT_FOUND}",
    "test_list_crawls": _NO_TARGET,
    "test_bad_filter_operator": f"{_NO_TARGET}, {_VALIDATION}",
    "test_bad_filter_field_name": f"{_NO_TARGET}, {_VALIDATION}",
    "test_use_ordered_compare_operator_on_state_field": _NO_TARGET,
    "test_use_ordered_compare_operator_on_uid_field": _NO_TARGET,
    "test_crawl_filter_missing_field": _NO_TARGET,
    "test_filter_crawls_for_state": f"{_NO_TARGET}, {_COMPLETES}",
    "test_filter_crawls_for_start_time": f"{_NO_TARGET}, {_COMPLETES}",
    "test_filter_crawls_for_end_time": f"{_NO_TARGET}, {_COMPLETES}",
    "test_multiple_filters": f"{_NO_TARGET}, {_COMPLETES}",
    "test_filter_crawls_for_crawl_id": f"{_NO_TARGET}, {_COMPLETES}",
    "test_filter_crawls_for_not_crawl_id": f"{_NO_TARGET}, {_COMPLETES}",
    "test_get_crawler_not_exits": _NOT_FOUND,
    "test_delete_crawler_not_exists": _NOT_FOUND,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent != HERE:
            continue
        reason = MOTO_ONLY.get(getattr(item, "originalname", item.name))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def moto_suite_server(stack: CatalogStack) -> Iterator[str]:
    """The suite's server: its worker crawls with slow_engine, on a queue of its own."""
    server = stack.extra_server({"GLUE_CRAWL_ENGINE": "tests.upstream.moto_glue.slow_engine",
                                 "GLUE_CRAWL_QUEUE": f"moto-{uuid.uuid4().hex}",
                                 "GLUE_CRAWL_HEARTBEAT_SECONDS": "0.3", "GLUE_CRAWL_STALE_SECONDS": "30"},
                                name="moto-glue")
    server.start()
    try:
        yield server.endpoint
    finally:
        server.stop()


# Module scope: the environment and boto3's default session are put back right after each vendored
# module, not at the session's end (the rest of a run must not reach this server).
@pytest.fixture(scope="module", autouse=True)
def moto_suite_clients(moto_suite_server: str) -> Iterator[str]:
    """The tests' clients reach the suite's server as account 123456789012: the environment boto3
    reads, and a default session of their own (created after it is set; with the shape checks)."""
    wanted = {"AWS_ENDPOINT_URL_GLUE": moto_suite_server, "AWS_ACCESS_KEY_ID": ACCOUNT,
              "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
    saved_env = {name: os.environ.get(name) for name in (*wanted, "AWS_SESSION_TOKEN", "AWS_PROFILE")}
    saved_session = boto3.DEFAULT_SESSION
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(wanted)
    boto3.setup_default_session()
    shape_check.install(boto3.DEFAULT_SESSION.events)
    try:
        yield moto_suite_server
    finally:
        boto3.DEFAULT_SESSION = saved_session
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _empty(glue: Any) -> None:
    """Delete every crawler of the account, stopping (and waiting for) the running ones first."""
    names = [c["Name"] for page in glue.get_paginator("get_crawlers").paginate() for c in page["Crawlers"]]
    for name in names:
        try:
            glue.stop_crawler(Name=name)
        except (glue.exceptions.CrawlerNotRunningException, glue.exceptions.CrawlerStoppingException):
            pass
    deadline = time.monotonic() + 30
    for name in names:
        while glue.get_crawler(Name=name)["Crawler"]["State"] != "READY":
            if time.monotonic() > deadline:
                raise AssertionError(f"crawler {name} did not stop in 30 s")
            time.sleep(0.1)
        glue.delete_crawler(Name=name)


@pytest.fixture(autouse=True)
def empty_account(moto_suite_server: str) -> Iterator[None]:
    """Each test starts (and leaves) account 123456789012 without crawlers, as under mock_aws."""
    glue = client(moto_suite_server, "glue", account=ACCOUNT)
    _empty(glue)
    yield
    _empty(glue)
