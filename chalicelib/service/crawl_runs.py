"""The worker's side of crawl runs: claim a queued run, heartbeat it, read the stop flag, end
it (docs/design.md, "Crawlers and crawl runs").

A run is claimed by a write conditional on the run as read (``Worker.Owner`` and
``Worker.Heartbeat``): of two workers exactly one wins. Its owner rewrites the heartbeat every
few seconds (the same conditional write: a worker that lost its run to another learns it there
and stops). A run whose heartbeat is older than ``stale_seconds`` (a crashed worker) is claimed
again and crawled from the start; after ``MAX_ATTEMPTS`` claims it ends FAILED instead, so no
run stays RUNNING for ever. Nothing here crawls: the engine is the worker's.

Schedules fire here too (``fire_due``): a crawler whose schedule entry is due gets a run queued
by ``crawlers.start_crawler``, StartCrawler's own code path, once per tick whatever the number
of workers (the tick is won by a write conditional on the entry as read).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Optional

from chalicelib import clock
from chalicelib.domain import cron
from chalicelib.errors import ServiceError
from chalicelib.service import crawlers
from chalicelib.service.crawlers import crawler_scope, metrics_of, runs_scope
from chalicelib.service.databases import now
from chalicelib.store import crawls as store

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# Runtimes the median of GetCrawlerMetrics is taken over.
_RUNTIMES_KEPT = 20
_FINISH_ATTEMPTS = 8


@dataclass
class Claim:
    """A run this worker owns: where it is, the crawler as GetCrawler returned it at the claim,
    the account it runs for, and the run as last written (the condition of the next write)."""

    catalog_key: str
    crawler_name: str
    queue_key: str
    account_id: str
    crawler: dict[str, Any]
    run: store.Entry


def _copy(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(doc))
    return result


def pending() -> bool:
    """Whether any run is queued (one Query of at most one item)."""
    return next(iter(store.queued(1)), None) is not None


def claim_next(owner: str, stale_seconds: float) -> Optional[Claim]:
    """Claim a queued run nobody owns, or one whose owner's heartbeat is older than
    ``stale_seconds``; None when there is none. Runs claimed ``MAX_ATTEMPTS`` times already
    are ended FAILED here, and queue entries whose run is gone are removed."""
    for queued in list(store.queued()):
        catalog_key, crawler_name = store.split_queue_key(queued.key)
        runs = queued.doc["Runs"]
        run = store.get(runs, queued.doc["Run"])
        if run is None or run.doc["State"] != "RUNNING":
            store.delete_queued(queued.key)
            continue
        worker = run.doc["Worker"]
        stamp = now()
        if worker.get("Owner") is not None and stamp - float(worker.get("Heartbeat") or 0) < stale_seconds:
            continue
        claim = Claim(catalog_key, crawler_name, queued.key, queued.doc["Account"], {}, run)
        if int(worker.get("Attempts") or 0) >= MAX_ATTEMPTS:
            finish(claim, "FAILED", error=f"The crawl was interrupted {MAX_ATTEMPTS} times (its worker stopped "
                                           "responding) and was not resumed again")
            continue
        doc = _copy(run.doc)
        doc["Worker"].update(Owner=owner, Heartbeat=stamp, Attempts=int(worker.get("Attempts") or 0) + 1,
                             Progress={})
        if not store.replace(runs, run, doc, "crawl"):
            continue
        claim.run = store.get(runs, run.key) or run
        crawler = store.get(crawler_scope(catalog_key), crawler_name)
        if crawler is None:
            store.delete_queued(queued.key)
            continue
        from chalicelib.service.crawlers import render
        claim.crawler = render(crawler.doc)
        return claim
    return None


def heartbeat(claim: Claim, progress: Optional[dict[str, Any]] = None) -> bool:
    """Renew the claim (with the engine's latest progress); False if the run was taken over or
    ended meanwhile (the worker must then stop crawling it)."""
    doc = _copy(claim.run.doc)
    if doc["State"] != "RUNNING":
        return False
    doc["Worker"]["Heartbeat"] = now()
    if progress:
        doc["Worker"]["Progress"] = {**doc["Worker"].get("Progress", {}), **progress}
    runs = runs_scope(claim.catalog_key)
    if not store.replace(runs, claim.run, doc, "crawl"):
        return False
    fresh = store.get(runs, claim.run.key)
    if fresh is None:
        return False
    claim.run = fresh
    return True


def stop_requested(claim: Claim) -> bool:
    """Whether StopCrawler was called for the run (or its crawler is gone)."""
    entry = store.get(crawler_scope(claim.catalog_key), claim.crawler_name)
    return entry is None or entry.doc["Crawler"]["State"] == "STOPPING"


def _summary(result: dict[str, Any]) -> str:
    summary = result.get("Summary")
    if isinstance(summary, str):
        return summary[:2048]
    counts = {k: int(result.get(k) or 0) for k in ("TablesCreated", "TablesUpdated", "TablesDeleted",
                                                    "PartitionsCreated", "FilesSkipped")}
    return json.dumps(summary if summary is not None else counts, sort_keys=True)[:2048]


def finish(claim: Claim, outcome: str, result: Optional[dict[str, Any]] = None, error: Optional[str] = None) -> bool:
    """End the run: ``outcome`` SUCCEEDED, CANCELLED or FAILED (with ``error``). The run gets
    its end time, state (COMPLETED, STOPPED, FAILED) and summary; the crawler READY with its
    LastCrawl and metrics; the queue entry goes; all in one transaction. False if the run is no
    longer this claim's (taken over, or ended)."""
    result = result or {}
    runs = runs_scope(claim.catalog_key)
    scope = crawler_scope(claim.catalog_key)
    for _ in range(_FINISH_ATTEMPTS):
        run = store.get(runs, claim.run.key)
        if run is None or run.doc["State"] != "RUNNING" or run.raw != claim.run.raw:
            if run is not None and run.doc["State"] == "RUNNING" and \
                    run.doc["Worker"].get("Owner") == claim.run.doc["Worker"].get("Owner"):
                claim.run = run  # our own heartbeat landed in between
            else:
                return False
        crawler = store.get(scope, claim.crawler_name)
        if crawler is None:
            store.delete(runs, run.key, raw=run.raw)
            store.delete_queued(claim.queue_key)
            return True
        stamp = now()
        run_doc = _copy(run.doc)
        run_doc["State"] = {"SUCCEEDED": "COMPLETED", "CANCELLED": "STOPPED"}.get(outcome, "FAILED")
        run_doc["EndTime"] = stamp
        elapsed = max(0.0, stamp - float(run_doc["StartTime"]))
        run_doc["DPUHour"] = round(elapsed / 3600.0, 6)
        run_doc["Summary"] = _summary(result)
        if error:
            run_doc["ErrorMessage"] = error[:2048]
        doc = _copy(crawler.doc)
        doc["Crawler"]["State"] = "READY"
        doc["Crawler"]["CrawlElapsedTime"] = 0
        last: dict[str, Any] = {"Status": outcome, "StartTime": run_doc["StartTime"], "LogGroup": run_doc["LogGroup"],
                                "LogStream": run_doc["LogStream"], "MessagePrefix": run_doc["MessagePrefix"]}
        if error:
            last["ErrorMessage"] = error[:2048]
        doc["Crawler"]["LastCrawl"] = last
        kept = doc.get("Metrics") or {}
        counts = {**run_doc["Worker"].get("Progress", {}), **result}
        doc["Metrics"] = {**{k: int(counts.get(k) or 0) for k in ("TablesCreated", "TablesUpdated", "TablesDeleted")},
                          "Runtimes": (list(kept.get("Runtimes") or []) + [round(elapsed, 3)])[-_RUNTIMES_KEPT:]}
        doc.pop("Run", None)
        # When the last crawl ended, on the clock schedules are due on (a tick that came due
        # while it ran is skipped, even when a worker only sees it after the end).
        doc["LastEnd"] = clock.now()
        if store.finish(scope, crawler, doc, runs, run, run_doc, claim.queue_key):
            return True
    return False


def cancel_unclaimed(catalog_key: str, crawler_name: str) -> bool:
    """StopCrawler's second step: a run no worker has claimed yet ends CANCELLED at once (so a
    crawler is never left STOPPING where no worker runs). A claim racing this loses on its
    condition, or this does, never both. Whether the run was ended here."""
    entry = store.get(crawler_scope(catalog_key), crawler_name)
    current = (entry.doc.get("Run") or {}).get("Key") if entry else None
    if current is None:
        return False
    run = store.get(runs_scope(catalog_key), current)
    if run is None or run.doc["State"] != "RUNNING" or run.doc["Worker"].get("Owner") is not None:
        return False
    claim = Claim(catalog_key, crawler_name, store.queue_key(catalog_key, crawler_name), "", {}, run)
    return finish(claim, "CANCELLED", {"Summary": "stopped before any worker claimed it"})


def progress_metrics(claim: Claim) -> dict[str, Any]:
    """The crawler's metrics as GetCrawlerMetrics would show them now (for logs)."""
    entry = store.get(crawler_scope(claim.catalog_key), claim.crawler_name)
    return metrics_of(entry.doc, claim.run.doc["Worker"].get("Progress")) if entry else {}


def fire_due() -> int:
    """Queue a run for every crawler whose schedule is due (its entry's ``Next`` has passed), as
    StartCrawler does. Each due entry is first moved on to its next tick after now by a write
    conditional on the entry as read: of several workers exactly one wins the tick and queues
    the run (a tick missed while no worker ran fires once, late, not once per missed tick). A
    crawler still running is skipped for that tick, as on AWS. An entry the crawler no longer
    agrees with (its schedule stopped, changed or gone) is corrected instead of fired. The
    number of runs queued."""
    fired = 0
    stamp = clock.now()  # the service's clock (moved by tests)
    for entry in list(store.scheduled()):
        due = entry.doc.get("Next")
        if due is None or float(due) > stamp:
            continue
        catalog_key, name = store.split_queue_key(entry.key)
        crawler = store.get(crawler_scope(catalog_key), name)
        schedule = (crawler.doc["Crawler"].get("Schedule") or {}) if crawler else {}
        if schedule.get("State") != "SCHEDULED" or schedule.get("ScheduleExpression") != entry.doc["Expression"]:
            if store.delete_scheduled(entry.key, raw=entry.raw):
                crawlers.sync_schedule(catalog_key, name)
            continue
        last = (crawler.doc["Crawler"].get("LastCrawl") or {}) if crawler else {}
        ran_at_tick = float(last.get("StartTime") or 0) <= float(due) < float(crawler.doc.get("LastEnd") or 0) \
            if crawler else False
        following = cron.parse(entry.doc["Expression"]).next_after(stamp)
        won = (store.delete_scheduled(entry.key, raw=entry.raw) if following is None
               else store.replace_scheduled(entry, {**entry.doc, "Next": following, "Fired": due}))
        if not won:
            continue
        if ran_at_tick:
            log.info("crawler %s was running at its scheduled time %s: that run is skipped", name, due)
            continue
        try:
            crawlers.start_crawler(catalog_key, name, entry.doc["Account"])
            fired += 1
        except crawlers.CrawlerRunningException:
            log.info("crawler %s is still running: its scheduled run at %s is skipped", name, due)
        except ServiceError as exc:  # gone or changed meanwhile: the tick is spent either way
            log.warning("scheduled run of crawler %s not queued: %s", name, exc)
    return fired
