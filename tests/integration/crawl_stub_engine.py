"""A stand-in for ``pipelines.crawl`` (the crawl worker loads it when GLUE_CRAWL_ENGINE names
it): what it does is read from the crawler's Description, so each test picks its behaviour.

- ``table``: create the table ``<TablePrefix>stub`` in the crawler's database through the Glue
  client it is given (the crawler's role), report one table created;
- ``fail:<message>``: raise CrawlFailed(message);
- ``block``: report progress, then wait until should_stop() (then return Cancelled);
- ``once:<file>``: the first attempt creates <file> and blocks like ``block``; a later one
  (after a takeover) returns at once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable


class CrawlFailed(Exception):
    """The crawl failed; str(e) is LastCrawl.ErrorMessage."""


def _block(should_stop: Callable[[], bool], progress: Callable[[dict], None]) -> dict[str, Any]:
    progress({"TablesCreated": 0, "TimeLeftSeconds": 99.0})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if should_stop():
            return {"TablesCreated": 0, "TablesUpdated": 0, "TablesDeleted": 0, "PartitionsCreated": 0,
                    "FilesSkipped": 0, "Cancelled": True, "Summary": "stopped"}
        time.sleep(0.1)
    raise CrawlFailed("the stub blocked for two minutes")


def run_crawl(crawler: dict, *, classifiers: list[dict], glue: Any, s3: Any,
              should_stop: Callable[[], bool], progress: Callable[[dict], None]) -> dict:
    """Behave as the crawler's Description says."""
    mode = crawler.get("Description", "")
    if mode == "table":
        glue.create_table(DatabaseName=crawler["DatabaseName"],
                          TableInput={"Name": crawler.get("TablePrefix", "") + "stub",
                                      "Parameters": {"classification": "csv",
                                                     "classifiers": ",".join(c.get("CsvClassifier", {}).get("Name", "")
                                                                             for c in classifiers)}})
        progress({"TablesCreated": 1, "TimeLeftSeconds": 0.0})
        return {"TablesCreated": 1, "TablesUpdated": 0, "TablesDeleted": 0, "PartitionsCreated": 0,
                "FilesSkipped": 0, "Cancelled": False, "Summary": "1 table created"}
    if mode.startswith("fail:"):
        raise CrawlFailed(mode[len("fail:"):])
    if mode == "block":
        return _block(should_stop, progress)
    if mode.startswith("once:"):
        marker = Path(mode[len("once:"):])
        if not marker.exists():
            marker.write_text("claimed")
            return _block(should_stop, progress)
        return {"TablesCreated": 0, "TablesUpdated": 2, "TablesDeleted": 0, "PartitionsCreated": 0,
                "FilesSkipped": 0, "Cancelled": False, "Summary": "resumed"}
    return {"TablesCreated": 0, "TablesUpdated": 0, "TablesDeleted": 0, "PartitionsCreated": 0,
            "FilesSkipped": 0, "Cancelled": False, "Summary": "nothing"}
