"""The work budget of one request (issue #16): how long a request may work before it answers
with what it has (a partial page and a NextToken, or a CREATING index whose backfill continues
in the background). API Gateway cuts integrations at 29 s and boto3 reads time out at 60 s, so
no request may run unbounded however large the table. Shared: imports no layer."""

from __future__ import annotations

from chalicelib import settings


def seconds() -> float:
    """``GLUE_WORK_BUDGET_SECONDS`` (default 5), looked up on each call so tests can replace it."""
    return settings.current().work_budget_seconds
