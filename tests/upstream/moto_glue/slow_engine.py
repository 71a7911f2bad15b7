"""The crawl engine of the upstream moto suite's server (GLUE_CRAWL_ENGINE): a crawl that takes
its time, as every crawl on AWS does (at least a minute), so a crawler started by a test is still
RUNNING when the test looks, and StopCrawler finds it running. It crawls nothing; it returns
when stopped (Cancelled) or after two minutes."""

from __future__ import annotations

import time
from typing import Any, Callable


def run_crawl(crawler: dict, *, classifiers: list[dict], glue: Any, s3: Any,
              should_stop: Callable[[], bool], progress: Callable[[dict], None]) -> dict:
    """Wait for StopCrawler (or two minutes)."""
    progress({"TablesCreated": 0})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not should_stop():
        time.sleep(0.1)
    return {"TablesCreated": 0, "TablesUpdated": 0, "TablesDeleted": 0, "PartitionsCreated": 0,
            "FilesSkipped": 0, "Cancelled": True, "Summary": "stopped"}
