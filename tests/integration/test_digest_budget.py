"""The first unindexed GetPartitions after a bulk load, within the work budget (issue #46): the
digest work a load leaves (one delta item per BatchCreatePartition transaction) is done by a
cleanup job, never inside a read, and a read that cannot get through the digest within its share
of the budget answers a partial (or empty) page with a NextToken, as every listing does past
its budget. Paging to the end returns exactly the partitions, in order.

On a stack of this module's own with no background cleaner, so the digest is seen exactly as the
load left it until the test runs the scheduled cleaner's code itself; a second server on the same
store has a work budget of 0 s, so its every request is out of budget at once. No timing is
asserted: only the shape of the pages, the answers and the digest items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from chalicelib.domain import partition_digest
from infra.local.stack import REPO, CatalogStack, ServerProcess, client
from tests.integration.partition_helpers import create_partitions, items_read, partitioned_table
from tests.integration.store_helpers import Store

pytestmark = pytest.mark.slow

KEYS = [("region", "string"), ("day", "int"), ("shard", "int")]
# The leading key, region, has no range here (LIKE '%3' is no prefix): every partition is a
# candidate, so the listing reads through the digest.
EXPRESSION = "day = 17 AND region LIKE '%3'"
ENV = {"GLUE_CLEANUP_THREAD": "0", "GLUE_DIGEST_COMPACT_DELTAS": "2"}


def values(count: int) -> list[list[str]]:
    """``count`` partitions: regions of 4 days x 4 shards each."""
    return [[f"r{i // 16:02d}", str(14 + (i // 4) % 4), str(i % 4)] for i in range(count)]


def expected(rows: list[list[str]]) -> list[tuple[str, ...]]:
    """The matches of EXPRESSION, in partition key order (region, then day and shard as numbers)."""
    found = [tuple(v) for v in rows if v[1] == "17" and v[0].endswith("3")]
    return sorted(found, key=lambda v: (v[0], int(v[1]), int(v[2])))


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogStack]:
    with CatalogStack(log_dir=tmp_path_factory.mktemp("digest-budget-logs"), server_env=ENV) as stack:
        yield stack


@pytest.fixture(scope="module")
def spent(own: CatalogStack) -> Iterator[ServerProcess]:
    server = own.extra_server({**ENV, "GLUE_WORK_BUDGET_SECONDS": "0"}, name="budget0").start()
    yield server
    server.stop()


def pages(glue: Any, db: str, table: str) -> list[tuple[list[tuple[str, ...]], bool, int]]:
    """Every page of the listing, following NextToken: (values, whether a token came, items read)."""
    request: dict[str, Any] = {"DatabaseName": db, "TableName": table, "Expression": EXPRESSION}
    found = []
    for _ in range(5_000):
        response = glue.get_partitions(**request)
        token = response.get("NextToken")
        found.append(([tuple(p["Values"]) for p in response["Partitions"]], bool(token), items_read(response)))
        if not token:
            return found
        request["NextToken"] = token
    raise AssertionError("GetPartitions never stopped paging")


def flat(found: list[tuple[list[tuple[str, ...]], bool, int]]) -> list[tuple[str, ...]]:
    return [v for page, _, _ in found for v in page]


def digest_items(store: Store, db: str, table: str) -> list[dict[str, Any]]:
    return store.query("partition_digests", "table_uid", store.table_item(db, table)["uid"]["S"])


def digest_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return sorted(v for item in items if "data" in item for v, _ in partition_digest.decode(item["data"]["B"]).rows())


def run_cleaner(stack: CatalogStack, **env: str) -> None:
    """What the scheduled function runs, in a process of its own."""
    subprocess.run([sys.executable, "-c", "import app\nfrom chalicelib.service import cleanup\n"
                    "while cleanup.run(max_seconds=30.0):\n    pass"],
                   env={**stack.env, **ENV, **env}, cwd=Path(REPO), check=True, timeout=300)


def bulk_load(glue: Any, db: str, table: str, rows: list[list[str]], per_call: int) -> None:
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(table, KEYS))
    for start in range(0, len(rows), per_call):
        create_partitions(glue, db, table, rows[start:start + per_call])


def test_first_read_after_a_bulk_load_stays_within_the_budget_and_pages_to_the_right_answer(
        own: CatalogStack, spent: ServerProcess) -> None:
    glue, store, rows = own.client("glue"), Store(own), values(360)
    bulk_load(glue, "bulk", "events", rows, per_call=30)  # one transaction, so one delta, a call
    loaded = digest_items(store, "bulk", "events")
    assert len(loaded) == 13 and [i["kind"]["S"] for i in loaded].count("delta") == 12
    want = expected(rows)
    assert len(want) == 8

    # Out of budget at once: the digest's 13 items are not evaluated in time, so each request
    # examines one partition as planned and answers with a NextToken (empty pages included).
    budgeted = pages(client(spent.endpoint), "bulk", "events")
    assert flat(budgeted) == want
    assert all(len(page) <= 1 for page, _, _ in budgeted)
    assert any(not page and token for page, token, _ in budgeted)
    # Within the budget: one page through the digest, reading the digest and the matches only.
    (page, token, read), = pages(glue, "bulk", "events")
    assert page == want and not token and read <= 2 + len(loaded) + len(want)  # + the table read
    # Neither read merged anything: the digest is as the load left it.
    assert [i["key"]["S"] for i in digest_items(store, "bulk", "events")] == [i["key"]["S"] for i in loaded]
    # The writers and the readers queued its compaction; a cleaner runs it.
    jobs = store.query("cleanup_jobs", "queue", "purge")
    assert {j["kind"]["S"] for j in jobs} >= {"digest-compact"}
    run_cleaner(own)
    compacted = digest_items(store, "bulk", "events")
    assert [i["kind"]["S"] for i in compacted] == ["base"]
    assert digest_rows(compacted) == sorted(map(tuple, rows))
    # Now the digest is one item: out of budget, the listing still goes through it (one
    # candidate fetched a request, no empty pages), and the answer is the same.
    budgeted = pages(client(spent.endpoint), "bulk", "events")
    assert flat(budgeted) == want and all(len(page) == 1 for page, _, _ in budgeted[:-1])
    assert flat(pages(glue, "bulk", "events")) == want


def test_a_large_backlog_is_compacted_a_bounded_step_at_a_time(own: CatalogStack) -> None:
    glue, store, rows = own.client("glue"), Store(own), values(400)
    bulk_load(glue, "backlog", "events", rows, per_call=20)  # 20 deltas and the empty base
    assert len(digest_items(store, "backlog", "events")) == 21
    # Steps of at most 6 items: merged deltas a slice at a time, then one base set.
    run_cleaner(own, GLUE_DIGEST_STEP_PIECES="6")
    compacted = digest_items(store, "backlog", "events")
    assert [i["kind"]["S"] for i in compacted] == ["base"]
    assert digest_rows(compacted) == sorted(map(tuple, rows))
    glue.batch_delete_partition(DatabaseName="backlog", TableName="events",
                                PartitionsToDelete=[{"Values": v} for v in rows[:16]])
    assert flat(pages(glue, "backlog", "events")) == expected(rows[16:])
