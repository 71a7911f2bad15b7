"""CreatePartitionIndex within the request's work budget (issue #16): on a table too large to
backfill in one request the call answers with the index CREATING, and the background cleaner
finishes the backfill (ACTIVE), as Glue's own CreatePartitionIndex is asynchronous."""

from __future__ import annotations

import time
from typing import Any, Callable

from tests.conftest import client
from tests.integration.partition_helpers import create_partitions, partitioned_table, value_tuples
from tests.integration.test_partition_indexes import KEYS, index, indexes_of, row


def test_a_backfill_past_the_budget_finishes_in_the_background(start_server: Callable[..., Any]) -> None:
    # A budget of 0: the request stops after its first chunk of 500 partitions.
    server = start_server(GLUE_WORK_BUDGET_SECONDS="0", GLUE_CLEANUP_POLL_SECONDS="0.5")
    glue = client(server.endpoint, "glue")
    db = f"budget_{int(time.time() * 1000)}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("big", KEYS))
    rows = [row(country, "Books", year, month, 1 + month)
            for country in ("US", "UK", "DE", "FR", "JP") for year in range(2000, 2020) for month in range(1, 13)]
    create_partitions(glue, db, "big", rows)  # 1,200
    glue.create_partition_index(DatabaseName=db, TableName="big", PartitionIndex=index("by_year", "year"))
    status = indexes_of(glue, db, "big")["by_year"]["IndexStatus"]
    assert status in ("CREATING", "ACTIVE")
    deadline = time.monotonic() + 120
    while status == "CREATING" and time.monotonic() < deadline:
        time.sleep(0.3)
        status = indexes_of(glue, db, "big")["by_year"]["IndexStatus"]
    assert status == "ACTIVE"
    found = glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName="big", Expression="year BETWEEN 2005 AND 2006").build_full_result()
    assert sorted(value_tuples(found["Partitions"])) == sorted(tuple(r) for r in rows if r[2] in ("2005", "2006"))
