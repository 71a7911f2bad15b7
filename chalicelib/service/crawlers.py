"""Glue crawlers of a catalog: definitions, state, schedules, runs and metrics
(docs/design.md, "Crawlers and crawl runs").

A crawler is one stored document: ``Crawler`` (the botocore ``Crawler`` structure as GetCrawler
returns it, State included), ``Metrics`` (of the last finished crawl, with the runtimes the
median is taken over) and ``Run`` (the range key of the current run, while one exists).
StartCrawler never crawls: in one transaction it marks the crawler RUNNING, writes the run
(ListCrawls' history) and a queue entry a worker claims (``service.crawl_runs``).
"""

from __future__ import annotations

import json
import statistics
import uuid
from typing import Any, Callable, Optional

from chalicelib import clock
from chalicelib.domain import cron
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError)
from chalicelib.service import tags
from chalicelib.service.databases import now
from chalicelib.service.paging import take_page
from chalicelib.store import catalog_documents as documents
from chalicelib.store import crawls as store

_RESOURCE = "Crawler"
_ATTEMPTS = 5
_DEFINITION = ("Role", "Targets", "DatabaseName", "Description", "Classifiers", "RecrawlPolicy",
               "SchemaChangePolicy", "LineageConfiguration", "TablePrefix", "Configuration",
               "CrawlerSecurityConfiguration", "LakeFormationConfiguration")
_TARGET_LISTS = ("S3Targets", "JdbcTargets", "MongoDBTargets", "DynamoDBTargets", "CatalogTargets", "DeltaTargets",
                 "IcebergTargets", "HudiTargets")
# CloudWatch Logs names AWS gives a crawler's logs (nothing is written there here).
LOG_GROUP = "/aws-glue/crawlers"


class CrawlerRunningException(ServiceError):
    code = "CrawlerRunningException"


class CrawlerNotRunningException(ServiceError):
    code = "CrawlerNotRunningException"


class CrawlerStoppingException(ServiceError):
    code = "CrawlerStoppingException"


class SchedulerRunningException(ServiceError):
    code = "SchedulerRunningException"


class SchedulerNotRunningException(ServiceError):
    code = "SchedulerNotRunningException"


class NoScheduleException(ServiceError):
    code = "NoScheduleException"


def _not_found(name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Crawler entry with name {name} does not exist", _RESOURCE, name)


def crawler_scope(catalog_key: str) -> str:
    """The store scope of a catalog's crawlers."""
    return store.scope(catalog_key, store.CRAWLER)


def runs_scope(catalog_key: str) -> str:
    """The store scope of a catalog's crawl runs."""
    return store.scope(catalog_key, store.CRAWL)


# ------------------------------------------------------------------------------ validation

def validate_schedule(expression: str) -> None:
    """A Glue schedule: ``cron(minutes hours day-of-month month day-of-week year)``, one of the
    two day fields ``?`` (as AWS validates it, domain/cron.py), running at most every 5 minutes
    (AWS's "Time-based schedules for jobs and crawlers": "Cron expressions that lead to rates
    faster than 5 minutes are not supported"); InvalidInputException otherwise."""
    try:
        parsed = cron.parse(expression)
    except ValueError:
        raise InvalidInputException(f"Invalid schedule expression: {expression[:300]}") from None
    if parsed.shortest_gap_minutes() < cron.MIN_GAP_MINUTES:
        raise InvalidInputException(f"Invalid schedule expression: {expression[:300]}: a schedule cannot run more "
                                    f"often than every {cron.MIN_GAP_MINUTES} minutes")


def _validate(definition: dict[str, Any], catalog_key: str) -> None:
    targets = definition.get("Targets") or {}
    if not any(targets.get(kind) for kind in _TARGET_LISTS):
        raise InvalidInputException("Crawler must have at least one target")
    for target in targets.get("S3Targets") or ():
        path = target.get("Path") or ""
        if not path.startswith("s3://") or len(path) <= len("s3://"):
            raise InvalidInputException(f"S3 target path must be of the form s3://bucket/prefix: {path[:300]}")
        sample = target.get("SampleSize")
        # botocore's S3Target: "A valid value is an integer between 1 and 249."
        if sample is not None and not 1 <= sample <= 249:
            raise InvalidInputException(f"SampleSize must be an integer between 1 and 249: {sample}")
    recrawl = (definition.get("RecrawlPolicy") or {}).get("RecrawlBehavior")
    policy = definition.get("SchemaChangePolicy") or {}
    if recrawl == "CRAWL_NEW_FOLDERS_ONLY" and (policy.get("UpdateBehavior", "UPDATE_IN_DATABASE") != "LOG"
                                                 or policy.get("DeleteBehavior", "DEPRECATE_IN_DATABASE") != "LOG"):
        raise InvalidInputException("The SchemaChangePolicy for \"Crawl new folders only\" Amazon S3 target "
                                    "crawlers can only be LOG.")
    configuration = definition.get("Configuration")
    if configuration:
        try:
            parsed = json.loads(configuration)
        except ValueError:
            raise InvalidInputException("Crawler configuration not valid: it is not a JSON object") from None
        if not isinstance(parsed, dict) or parsed.get("Version") != 1.0:
            raise InvalidInputException("Crawler configuration not valid: Version must be 1.0")
        tables = (parsed.get("CrawlerOutput") or {}).get("Tables") if isinstance(parsed.get("CrawlerOutput"), dict) \
            else None
        threshold = tables.get("TableThreshold") if isinstance(tables, dict) else None
        # AWS: "You specify the TableThreshold as an integer value greater than 0."
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1):
            raise InvalidInputException("Crawler configuration not valid: TableThreshold must be an integer "
                                        "greater than 0")
    from chalicelib.service import classifiers
    _found, missing = classifiers.find_classifiers(catalog_key, list(definition.get("Classifiers") or ()))
    if missing:
        raise InvalidInputException(f"Classifier {missing[0]} does not exist")


# ------------------------------------------------------------------------------ definitions

def crawler_identity(crawler: dict[str, Any]) -> str:
    """One incarnation of a crawler for its tags' key: its name and creation time."""
    return documents.connection_identity(crawler["Name"], crawler["CreationTime"])


def create_crawler(catalog_key: str, request: dict[str, Any]) -> None:
    """Create a crawler (READY; its Schedule SCHEDULED when it has one) with its Tags.
    AlreadyExistsException if the name is taken."""
    definition = {k: request[k] for k in _DEFINITION if request.get(k) is not None}
    _validate(definition, catalog_key)
    stamp = now()
    crawler: dict[str, Any] = {"Name": request["Name"], **definition, "State": "READY", "CrawlElapsedTime": 0,
                               "CreationTime": stamp, "LastUpdated": stamp, "Version": 1,
                               "CatalogId": catalog_key.split("\x01", 1)[-1]}
    if request.get("Schedule"):
        validate_schedule(request["Schedule"])
        crawler["Schedule"] = {"ScheduleExpression": request["Schedule"], "State": "SCHEDULED"}
    crawler.setdefault("SchemaChangePolicy", {"UpdateBehavior": "UPDATE_IN_DATABASE",
                                              "DeleteBehavior": "DEPRECATE_IN_DATABASE"})
    crawler.setdefault("RecrawlPolicy", {"RecrawlBehavior": "CRAWL_EVERYTHING"})
    crawler.setdefault("LineageConfiguration", {"CrawlerLineageSettings": "DISABLE"})
    crawler.setdefault("LakeFormationConfiguration", {"UseLakeFormationCredentials": False})
    name = crawler["Name"]
    identity = crawler_identity(crawler)
    tags.tag_new_resource(catalog_key, "crawler", identity, request.get("Tags"))
    if not store.create(crawler_scope(catalog_key), name, {"Crawler": crawler, "Metrics": {}}, "crawler"):
        tags.forget_resource(catalog_key, "crawler", identity)
        raise AlreadyExistsException(f"{name} already exists", _RESOURCE, name)
    sync_schedule(catalog_key, name)


def _read(catalog_key: str, name: str) -> store.Entry:
    entry = store.get(crawler_scope(catalog_key), name)
    if entry is None:
        raise _not_found(name)
    return entry


def render(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored crawler as GetCrawler returns it (CrawlElapsedTime counted while it runs)."""
    crawler = dict(doc["Crawler"])
    started = (doc.get("Run") or {}).get("StartTime")
    if crawler["State"] != "READY" and started is not None:
        crawler["CrawlElapsedTime"] = max(0, int((now() - started) * 1000))
    return crawler


def get_crawler(catalog_key: str, name: str) -> dict[str, Any]:
    """The ``Crawler``; EntityNotFoundException if there is none."""
    return render(_read(catalog_key, name).doc)


def batch_get_crawlers(catalog_key: str, names: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The crawlers named that exist, and the names that do not."""
    found, missing = [], []
    for name in dict.fromkeys(names):
        entry = store.get(crawler_scope(catalog_key), name)
        if entry is None:
            missing.append(name)
        else:
            found.append(render(entry.doc))
    return found, missing


def list_crawlers(catalog_key: str, after: Optional[str], limit: int, wanted_tags: Optional[dict[str, str]] = None,
                  as_name: bool = False) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` crawlers in name order after ``after`` (their names with ``as_name``),
    with ``wanted_tags`` only those carrying every one of them (one tags read per crawler)."""
    def rendered(entry: store.Entry) -> Any:
        if wanted_tags:
            stored = documents.get(catalog_key, documents.tags_key("crawler", crawler_identity(entry.doc["Crawler"])))
            have = dict(stored.data) if stored else {}
            if any(have.get(k) != v for k, v in wanted_tags.items()):
                return None
        return entry.key if as_name else render(entry.doc)

    entries = store.query(crawler_scope(catalog_key), "", after, min(limit + 1, 1000))
    return take_page(entries, limit, rendered, lambda entry: entry.key)


def _change(catalog_key: str, name: str, change: Callable[[dict[str, Any]], Optional[dict[str, Any]]]) -> None:
    """Apply ``change`` to the stored crawler document, compare-and-set (re-read when another
    change landed in between). ``change`` raises to refuse, returns None for no change."""
    scope = crawler_scope(catalog_key)
    for _ in range(_ATTEMPTS):
        entry = _read(catalog_key, name)
        doc = change(json.loads(json.dumps(entry.doc)))
        if doc is None:
            return
        if store.replace(scope, entry, doc, "crawler"):
            if doc["Crawler"].get("Schedule") != entry.doc["Crawler"].get("Schedule"):
                sync_schedule(catalog_key, name)
            return
    raise ConcurrentModificationException(f"Crawler {name} was changed concurrently; retry.", _RESOURCE, name)


def _not_running(crawler: dict[str, Any]) -> None:
    if crawler["State"] != "READY":
        raise CrawlerRunningException(f"Crawler with name {crawler['Name']} has already started", _RESOURCE,
                                      crawler["Name"])


def update_crawler(catalog_key: str, request: dict[str, Any]) -> None:
    """Change the members given (Description "" removes it); CrawlerRunningException while it
    runs; Version incremented."""
    given = {k: request[k] for k in _DEFINITION if k in request}

    def change(doc: dict[str, Any]) -> dict[str, Any]:
        crawler = doc["Crawler"]
        _not_running(crawler)
        merged = {**crawler, **given}
        if merged.get("Description") == "":
            merged.pop("Description")
        _validate(merged, catalog_key)
        if request.get("Schedule") is not None:
            _set_schedule(merged, request["Schedule"])
        merged["LastUpdated"] = now()
        merged["Version"] = int(crawler.get("Version", 1)) + 1
        doc["Crawler"] = merged
        return doc
    _change(catalog_key, request["Name"], change)


def _set_schedule(crawler: dict[str, Any], expression: str) -> None:
    if not expression:
        crawler.pop("Schedule", None)
        return
    validate_schedule(expression)
    state = (crawler.get("Schedule") or {}).get("State", "SCHEDULED")
    crawler["Schedule"] = {"ScheduleExpression": expression, "State": state}


def delete_crawler(catalog_key: str, name: str) -> None:
    """Delete a crawler with its run history and tags; CrawlerRunningException while it runs."""
    scope = crawler_scope(catalog_key)
    for _ in range(_ATTEMPTS):
        entry = _read(catalog_key, name)
        _not_running(entry.doc["Crawler"])
        if store.delete(scope, name, raw=entry.raw):
            sync_schedule(catalog_key, name)
            tags.forget_resource(catalog_key, "crawler", crawler_identity(entry.doc["Crawler"]))
            for run in list(store.query(runs_scope(catalog_key), store.run_prefix(name))):
                store.delete(runs_scope(catalog_key), run.key)
            return
    raise ConcurrentModificationException(f"Crawler {name} was changed concurrently; retry.", _RESOURCE, name)


# ------------------------------------------------------------------------------ schedules

def sync_schedule(catalog_key: str, name: str) -> None:
    """Make the crawler's schedule index entry agree with the crawler as stored now: present
    with its expression and next due time while the schedule is SCHEDULED (an unchanged
    expression keeps its due time), absent otherwise. The workers fire schedules from the
    index (``crawl_runs.fire_due``) and check each against the crawler before firing it, so an
    entry left stale by a crash in between only ever fires what the crawler still says."""
    key = store.queue_key(catalog_key, name)
    for _ in range(_ATTEMPTS):
        entry = store.get(crawler_scope(catalog_key), name)
        schedule = (entry.doc["Crawler"].get("Schedule") or {}) if entry else {}
        old = store.get_scheduled(key)
        if schedule.get("State") != "SCHEDULED" or not schedule.get("ScheduleExpression"):
            if old is None or store.delete_scheduled(key, raw=old.raw):
                return
            continue
        expression = schedule["ScheduleExpression"]
        if old is not None and old.doc.get("Expression") == expression:
            return
        due = cron.parse(expression).next_after(clock.now())
        doc = {"Expression": expression, "Next": due, "Account": catalog_key.split("\x01", 1)[-1]}
        if store.put_scheduled(key, doc, old):
            return



def update_crawler_schedule(catalog_key: str, name: str, expression: Optional[str]) -> None:
    """Set (or with "" remove) a crawler's schedule, keeping its state."""
    def change(doc: dict[str, Any]) -> dict[str, Any]:
        _set_schedule(doc["Crawler"], expression or "")
        doc["Crawler"]["LastUpdated"] = now()
        return doc
    _change(catalog_key, name, change)


def start_crawler_schedule(catalog_key: str, name: str) -> None:
    """Schedule State SCHEDULED; NoScheduleException without a schedule,
    SchedulerRunningException if already scheduled."""
    def change(doc: dict[str, Any]) -> dict[str, Any]:
        schedule = doc["Crawler"].get("Schedule")
        if not schedule or not schedule.get("ScheduleExpression"):
            raise NoScheduleException(f"Crawler with name {name} does not have a schedule")
        if schedule["State"] == "SCHEDULED":
            raise SchedulerRunningException(f"Crawler schedule for crawler {name} is already scheduled")
        schedule["State"] = "SCHEDULED"
        return doc
    _change(catalog_key, name, change)


def stop_crawler_schedule(catalog_key: str, name: str) -> None:
    """Schedule State NOT_SCHEDULED; SchedulerNotRunningException if it is not scheduled."""
    def change(doc: dict[str, Any]) -> dict[str, Any]:
        schedule = doc["Crawler"].get("Schedule")
        if not schedule or schedule.get("State") != "SCHEDULED":
            raise SchedulerNotRunningException(f"Crawler schedule for crawler {name} is not scheduled")
        schedule["State"] = "NOT_SCHEDULED"
        return doc
    _change(catalog_key, name, change)


# ------------------------------------------------------------------------------ runs

def start_crawler(catalog_key: str, name: str, account_id: str) -> str:
    """Queue a crawl: the crawler RUNNING, a RUNNING run in its history, a queue entry, in one
    transaction (nothing is crawled here). CrawlerRunningException unless it is READY. The
    crawl id."""
    scope = crawler_scope(catalog_key)
    for _ in range(_ATTEMPTS):
        found = store.get(scope, name)
        if found is None:
            # StartCrawler's own wording on AWS (GetCrawler's is "Crawler entry with name ...").
            raise EntityNotFoundException(f"Crawler with name {name} does not exist", _RESOURCE, name)
        entry = found
        doc = json.loads(json.dumps(entry.doc))
        _not_running(doc["Crawler"])
        stamp = now()
        crawl_id = str(uuid.uuid4())
        key = store.run_key(name, int(stamp * 1000), crawl_id)
        run = {"CrawlId": crawl_id, "State": "RUNNING", "StartTime": stamp, "LogGroup": LOG_GROUP,
               "LogStream": name, "MessagePrefix": crawl_id, "DPUHour": 0.0,
               "Worker": {"Owner": None, "Heartbeat": None, "Attempts": 0, "Progress": {}}}
        doc["Crawler"]["State"] = "RUNNING"
        doc["Run"] = {"Key": key, "CrawlId": crawl_id, "StartTime": stamp}
        queue = {"Runs": runs_scope(catalog_key), "Run": key, "Account": account_id}
        if store.start(scope, entry, doc, runs_scope(catalog_key), key, run, store.queue_key(catalog_key, name),
                       queue):
            return crawl_id
    raise ConcurrentModificationException(f"Crawler {name} was changed concurrently; retry.", _RESOURCE, name)


def stop_crawler(catalog_key: str, name: str) -> None:
    """RUNNING -> STOPPING: the worker ends the run CANCELLED at its next safe point.
    CrawlerNotRunningException when READY, CrawlerStoppingException when already stopping."""
    def change(doc: dict[str, Any]) -> dict[str, Any]:
        state = doc["Crawler"]["State"]
        if state == "READY":
            raise CrawlerNotRunningException(f"Crawler with name {name} has not started", _RESOURCE, name)
        if state == "STOPPING":
            raise CrawlerStoppingException(f"Crawler with name {name} is stopping", _RESOURCE, name)
        doc["Crawler"]["State"] = "STOPPING"
        return doc
    _change(catalog_key, name, change)


def metrics_of(doc: dict[str, Any], progress: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """A crawler's ``CrawlerMetrics``: of the current crawl while it runs (its progress), else of
    the last one."""
    crawler = doc["Crawler"]
    kept = doc.get("Metrics") or {}
    runtimes = kept.get("Runtimes") or []
    running = crawler["State"] != "READY"
    counts = (progress or {}) if running else kept
    metrics: dict[str, Any] = {"CrawlerName": crawler["Name"],
                               "TimeLeftSeconds": float((progress or {}).get("TimeLeftSeconds") or 0) if running
                               else 0.0,
                               "StillEstimating": running and (progress or {}).get("TimeLeftSeconds") is None,
                               "LastRuntimeSeconds": float(runtimes[-1]) if runtimes else 0.0,
                               "MedianRuntimeSeconds": float(statistics.median(runtimes)) if runtimes else 0.0}
    for member in ("TablesCreated", "TablesUpdated", "TablesDeleted"):
        metrics[member] = int(counts.get(member) or 0)
    return metrics


def _progress(catalog_key: str, doc: dict[str, Any]) -> Optional[dict[str, Any]]:
    run = doc.get("Run")
    if not run:
        return None
    entry = store.get(runs_scope(catalog_key), run["Key"])
    return entry.doc["Worker"].get("Progress") if entry else None


def get_crawler_metrics(catalog_key: str, names: list[str], after: Optional[str],
                        limit: int) -> tuple[list[dict[str, Any]], Optional[str]]:
    """Metrics of the crawlers named (those that exist), or of every crawler, paged by name."""
    if names:
        docs = [entry.doc for entry in (store.get(crawler_scope(catalog_key), n) for n in dict.fromkeys(names))
                if entry is not None]
        return [metrics_of(doc, _progress(catalog_key, doc)) for doc in docs], None
    entries = store.query(crawler_scope(catalog_key), "", after, min(limit + 1, 1000))
    return take_page(entries, limit, lambda e: metrics_of(e.doc, _progress(catalog_key, e.doc)), lambda e: e.key)


def render_run(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored run as ListCrawls' ``CrawlerHistory``."""
    return {k: v for k, v in doc.items() if k != "Worker"}


_FILTER_FIELDS = {"CRAWL_ID": "CrawlId", "STATE": "State", "START_TIME": "StartTime", "END_TIME": "EndTime",
                  "DPU_HOUR": "DPUHour"}


def _filter(filters: list[dict[str, Any]]) -> Callable[[dict[str, Any]], bool]:
    checks: list[Callable[[dict[str, Any]], bool]] = []
    for given in filters:
        field = _FILTER_FIELDS.get(given.get("FieldName", ""))
        op = given.get("FilterOperator", "EQ")
        raw = given.get("FieldValue")
        if field is None or raw is None or given.get("FilterOperator") is None:
            shown = [given.get(member) for member in ("FieldName", "FilterOperator", "FieldValue")]
            raise InvalidInputException("Invalid Filter Provided: FieldName: {}, FilterOperator: {}, FieldValue: {}"
                                        .format(*("null" if v is None else str(v)[:100] for v in shown)))
        if field in ("CrawlId", "State") and op not in ("EQ", "NE"):
            raise InvalidInputException(f"Only EQ or NE operator is allowed for field : {given['FieldName']}")
        value: Any = raw
        if field in ("StartTime", "EndTime", "DPUHour"):
            try:
                # botocore's CrawlsFilter: START_TIME and END_TIME are "the epoch timestamp in
                # milliseconds" (the runs keep epoch seconds).
                value = float(raw) / (1000.0 if field != "DPUHour" else 1.0)
            except ValueError:
                if field == "DPUHour":
                    raise InvalidInputException(f"Filter value for {given['FieldName']} is not a number: "
                                                f"{raw[:100]}") from None
                from datetime import datetime
                try:
                    value = datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
                except ValueError:
                    raise InvalidInputException(f"Filter value for {given['FieldName']} is not a time: "
                                                f"{raw[:100]}") from None
        compare = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "GT": lambda a, b: a > b,
                   "GE": lambda a, b: a >= b, "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b}[op]

        def check(run: dict[str, Any], f: str = field, v: Any = value, c: Any = compare) -> bool:
            have = run.get(f)
            return have is not None and c(have, v)
        checks.append(check)
    return lambda run: all(check(run) for check in checks)


def list_crawls(catalog_key: str, name: str, filters: list[dict[str, Any]], after: Optional[str],
                limit: int) -> tuple[list[dict[str, Any]], Optional[str]]:
    """A crawler's runs, newest first, filtered; EntityNotFoundException without the crawler."""
    _read(catalog_key, name)
    keep = _filter(filters)
    entries = store.query(runs_scope(catalog_key), store.run_prefix(name), after, min(limit + 1, 1000))
    return take_page(entries, limit, lambda e: render_run(e.doc) if keep(e.doc) else None, lambda e: e.key)
