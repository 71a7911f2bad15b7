"""Session fixtures: the real service over HTTP, on DynamoDB Local, driven by boto3.

Every fixture that starts a process is lazy: a run of tests/unit alone starts nothing.

- ``stack``            the session's CatalogStack (in-memory DynamoDB Local, random table prefix,
                       API server subprocess); a user's LocalStack instead when LOCALSTACK_HOST or
                       GLUE_USE_LOCALSTACK=1 is set.
- ``endpoint``         the API URL; ``ddb_endpoint`` DynamoDB Local's URL (its catalog tables are
                       visible only under the stack's key: read them through ``stack.ddb_client()``).
- ``glue``, ``lakeformation``  boto3 clients for the default account 123456789012.
- ``make_client``      ``make_client("glue", account="111122223333", region="eu-west-1")``:
                       the service takes a 12-digit access key id as the caller's account.
- ``restart_server``   a function that restarts the session's API server on the same port.
- ``start_server``     ``start_server(GLUE_LF_IDLE_SECONDS="2", port=None)``: one more API server on
                       the session's DynamoDB with extra environment variables, stopped after the test.
- Every Glue / Lake Formation response a boto3 client receives is checked against botocore's output
  shape (tests/shape_check.py); a violation fails the test phase in which it happened.
- ``configure``        ``configure(work_budget_seconds=0.0)``: this process's settings changed for the test.
- ``persistent_stack`` a stack of its own with DynamoDB Local on a -dbPath under tmp_path;
                       ``.restart()``, ``.restart_server()``, ``.restart_dynamodb()``, ``.client()``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import boto3
import pytest

from chalicelib import settings
from infra.local.stack import CatalogStack, ServerProcess, client, localstack_dynamodb_endpoint
from tests import shape_check

# Every boto3 client the tests create comes from the default session, and a client copies the
# session's event handlers when it is created: registering here checks every Glue and Lake
# Formation response of the whole suite against botocore's output shapes.
boto3.setup_default_session()
shape_check.install(boto3.DEFAULT_SESSION.events)


def _fail_on_shape_violations() -> Iterator[None]:
    """Fail the test phase during which a response did not follow its output shape."""
    try:
        return (yield)
    finally:
        found = shape_check.take_violations()
        if found:
            pytest.fail("responses that do not follow botocore's output shapes:\n  "
                        + "\n  ".join(found), pytrace=False)


pytest_runtest_setup = pytest.hookimpl(wrapper=True)(_fail_on_shape_violations)
pytest_runtest_call = pytest.hookimpl(wrapper=True)(_fail_on_shape_violations)
pytest_runtest_teardown = pytest.hookimpl(wrapper=True)(_fail_on_shape_violations)


@pytest.fixture(scope="session", autouse=True)
def allowed_locations(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """GLUE_ALLOWED_LOCATIONS for every server the session starts: the session's pytest temporary
    directory, where tests put Iceberg tables and external Paimon tables (anything else, but the
    warehouse, the servers refuse). Set before any server starts; its environment is theirs; and in
    this process's settings, for the tests that use the warehouse module here."""
    allowed = tmp_path_factory.getbasetemp().resolve().as_uri()
    before = os.environ.get("GLUE_ALLOWED_LOCATIONS")
    os.environ["GLUE_ALLOWED_LOCATIONS"] = allowed
    # This process's settings too (read once, perhaps already while tests were collected).
    with settings.replace(allowed_locations=allowed):
        yield allowed
    if before is None:
        os.environ.pop("GLUE_ALLOWED_LOCATIONS", None)
    else:
        os.environ["GLUE_ALLOWED_LOCATIONS"] = before


@pytest.fixture
def configure() -> Iterator[Callable[..., settings.Settings]]:
    """``configure(auth="sigv4", lambda_function_name=None)``: this process's settings
    (chalicelib.settings) with these fields changed for the rest of the test; calls add up. Reaches
    what the service looks up at use, not the constants modules took at import."""
    with contextlib.ExitStack() as changes:
        yield lambda **fields: changes.enter_context(settings.replace(**fields))


@pytest.fixture(scope="session")
def stack(allowed_locations: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogStack]:
    """DynamoDB Local in memory + tables with a random prefix + the API server, for the session.

    With LOCALSTACK_HOST or GLUE_USE_LOCALSTACK=1 the tables go to that LocalStack's DynamoDB.
    """
    log_dir = tmp_path_factory.mktemp("stack-logs")
    with CatalogStack(log_dir=log_dir, external_ddb=localstack_dynamodb_endpoint()) as running:
        yield running


@pytest.fixture(scope="session")
def endpoint(stack: CatalogStack) -> str:
    """The API server's URL."""
    return stack.endpoint


@pytest.fixture(scope="session")
def ddb_endpoint(stack: CatalogStack) -> str:
    """DynamoDB Local's URL; ``stack.ddb_client()`` signs with the key that sees the catalog's tables."""
    return stack.ddb_endpoint


@pytest.fixture(scope="session")
def make_client(endpoint: str) -> Callable[..., Any]:
    """Client factory: ``make_client("glue", account="111122223333", region="eu-west-1")``."""
    return functools.partial(client, endpoint)


# The clients use ``client`` directly rather than the ``make_client`` fixture, so a conftest
# further down may override make_client (even function-scoped) without breaking them.
@pytest.fixture(scope="session")
def glue(endpoint: str) -> Any:
    """A Glue client for the default account."""
    return client(endpoint, "glue")


@pytest.fixture(scope="session")
def lakeformation(endpoint: str) -> Any:
    """A Lake Formation client for the default account."""
    return client(endpoint, "lakeformation")


@pytest.fixture
def restart_server(stack: CatalogStack) -> Callable[[], None]:
    """Restart the session's API server (same port; in-memory data stays in DynamoDB Local)."""
    return stack.restart_server


@pytest.fixture
def start_server(stack: CatalogStack) -> Iterator[Callable[..., ServerProcess]]:
    """``start_server(port=None, **env)``: start another API server on the session's DynamoDB
    and tables whose environment adds ``env`` (e.g. GLUE_FAULT_CRASH_AT); ``.endpoint`` is its URL.
    Every server it started is stopped after the test."""
    started: list[ServerProcess] = []

    def start(port: int | None = None, **env: str) -> ServerProcess:
        server = stack.extra_server(env, port=port, name=f"extra{len(started)}")
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def persistent_stack(tmp_path: Path) -> Iterator[CatalogStack]:
    """A stack of its own whose DynamoDB Local persists under tmp_path, for restart tests."""
    with CatalogStack(db_path=tmp_path / "dynamodb", log_dir=tmp_path / "logs") as running:
        yield running
