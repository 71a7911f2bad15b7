"""What the vendored moto tests import from moto and freezegun, for a run against this service.

``mock_aws`` is no mock here: the tests' boto3 clients reach the service (conftest.py points
``AWS_ENDPOINT_URL_GLUE`` at it). ``settings.TEST_SERVER_MODE`` is True, as in moto's own server
mode (the client and the server do not share a clock, so the tests skip their frozen-time checks);
``freeze_time`` therefore changes nothing. ``utcnow`` is moto.core.utils.utcnow: UTC now, naive.
"""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any, Callable


def mock_aws(func: Callable[..., Any]) -> Callable[..., Any]:
    """The test itself, unchanged."""
    return func


def freeze_time(_when: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """No frozen clock: only the TEST_SERVER_MODE-guarded checks would read it."""
    return lambda func: func


settings = SimpleNamespace(TEST_SERVER_MODE=True)


def utcnow() -> datetime:
    """UTC now without a time zone, as moto's."""
    return datetime.now(timezone.utc).replace(tzinfo=None)
