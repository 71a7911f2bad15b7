"""The work budget of one request (issue #16): how long a request may work before it answers
with what it has (a partial page and a NextToken, or a CREATING index whose backfill continues
in the background). API Gateway cuts integrations at 29 s and boto3 reads time out at 60 s, so
no request may run unbounded however large the table. Shared: imports no layer."""

from __future__ import annotations

import os


def seconds() -> float:
    """``GLUE_WORK_BUDGET_SECONDS`` (default 5), read on each call so tests can set it."""
    return float(os.environ.get("GLUE_WORK_BUDGET_SECONDS", "5"))
