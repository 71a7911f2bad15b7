"""The catalog as seen from a pipeline: boto3 clients (on the driver and on executors),
retries of throttled or failed batch entries, and parallel segmented partition listing.

Only the public Glue / Lake Formation API is used, so everything here works against AWS Glue
as well as against this service.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

T = TypeVar("T")

# Whole-call failures worth another try (botocore's own retries cover the first few).
RETRYABLE_CALL_ERRORS = {"ThrottlingException", "InternalServiceException", "OperationTimeoutException",
                         "ServiceUnavailableException", "ConcurrentModificationException",
                         "ResourceNumberLimitExceededException", "RequestTimeout"}
# Per-entry error codes in BatchCreatePartition / BatchDeletePartition answers worth a retry.
RETRYABLE_ENTRY_ERRORS = RETRYABLE_CALL_ERRORS
GLUE_BATCH_CREATE = 100
GLUE_BATCH_DELETE = 25
GLUE_STATS_BATCH = 25
MAX_SEGMENTS = 10


def _env_endpoint(service: str) -> Optional[str]:
    return os.environ.get(f"AWS_ENDPOINT_URL_{service.upper()}") or os.environ.get("AWS_ENDPOINT_URL")


@dataclass(frozen=True)
class CatalogConfig:
    """Where the catalog is; small and picklable, so executors build their own clients from it.

    Credentials are never shipped: drivers and executors take them from their own environment
    (instance profiles on a cluster, ``AWS_ACCESS_KEY_ID``... locally).
    """

    glue_endpoint: Optional[str] = None
    lakeformation_endpoint: Optional[str] = None
    region: str = "us-east-1"
    catalog_id: Optional[str] = None
    max_attempts: int = 8

    @classmethod
    def from_env(cls, endpoint_url: Optional[str] = None, region: Optional[str] = None,
                 lakeformation_endpoint: Optional[str] = None, catalog_id: Optional[str] = None) -> "CatalogConfig":
        """Explicit arguments first, then AWS_ENDPOINT_URL_GLUE / _LAKEFORMATION / AWS_ENDPOINT_URL
        and AWS_REGION / AWS_DEFAULT_REGION."""
        glue = endpoint_url or _env_endpoint("glue")
        return cls(
            glue_endpoint=glue,
            lakeformation_endpoint=lakeformation_endpoint or _env_endpoint("lakeformation") or endpoint_url or glue,
            region=region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
            catalog_id=catalog_id,
        )

    def ids(self) -> dict[str, str]:
        """``CatalogId`` for requests, when one was chosen."""
        return {"CatalogId": self.catalog_id} if self.catalog_id else {}


_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()
# API calls made by this process's clients, by operation name (before botocore's retries).
calls_made: Counter[str] = Counter()


def count_calls(found: Any) -> Any:
    """Count every API call ``found`` (a boto3 client) makes into :data:`calls_made`."""
    def hook(model: Any, **_: Any) -> None:
        with _clients_lock:  # segment threads call at once
            calls_made[model.name] += 1
    found.meta.events.register("before-call", hook)
    return found


def is_read(operation: str) -> bool:
    """Whether a Glue / Lake Formation operation only reads."""
    return operation.startswith(("Get", "BatchGet", "Search", "List"))


def client(config: CatalogConfig, service: str = "glue") -> Any:
    """A cached boto3 client: one per process (Python workers are reused across tasks)."""
    key = (config, service, os.getpid())
    with _clients_lock:
        found = _clients.get(key)
        if found is None:
            endpoint = config.glue_endpoint if service == "glue" else config.lakeformation_endpoint
            found = boto3.session.Session().client(
                service, endpoint_url=endpoint, region_name=config.region,
                config=Config(retries={"max_attempts": 3, "mode": "standard"}, max_pool_connections=32,
                              connect_timeout=10, read_timeout=120))
            _clients[key] = count_calls(found)
    return found


def error_code(error: BaseException) -> str:
    """The AWS error code of a failed call (or the exception class for transport errors)."""
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code", "ClientError")
    return type(error).__name__


def backoff(attempt: int, base: float = 0.05, cap: float = 5.0) -> float:
    """Full-jitter exponential backoff."""
    return random.uniform(0, min(cap, base * (2 ** attempt)))


def call_with_retry(fn: Callable[[], T], attempts: int = 8, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run one catalog call, retrying throttling, server faults and transport errors."""
    for attempt in range(attempts):
        try:
            return fn()
        except ClientError as error:
            if error_code(error) not in RETRYABLE_CALL_ERRORS or attempt == attempts - 1:
                raise
        except BotoCoreError as error:
            if isinstance(error, ParamValidationError) or attempt == attempts - 1:
                raise
        sleep(backoff(attempt))
    raise AssertionError("unreachable")


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


@dataclass
class BatchOutcome:
    """What happened to the entries of batch calls: counts and per-entry errors."""

    done: int = 0
    already: int = 0
    calls: int = 0
    retries: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: "BatchOutcome") -> "BatchOutcome":
        self.done += other.done
        self.already += other.already
        self.calls += other.calls
        self.retries += other.retries
        self.failed.extend(other.failed)
        return self


def batch_create_partitions(config: CatalogConfig, database: str, table: str,
                            inputs: Sequence[dict[str, Any]], attempts: int = 8,
                            sleep: Callable[[float], None] = time.sleep) -> BatchOutcome:
    """BatchCreatePartition of up to 100 inputs; entries that fail with a retryable code are
    re-sent (alone) with backoff, AlreadyExists counts as already there, the rest are failures.
    A call refused as a whole is split in halves until the offending entries are isolated."""
    glue = client(config)
    outcome = BatchOutcome()
    pending = list(inputs)
    for attempt in range(attempts):
        outcome.calls += 1
        try:
            answer = glue.batch_create_partition(DatabaseName=database, TableName=table,
                                                 PartitionInputList=pending, **config.ids())
        except (ClientError, BotoCoreError) as error:
            code = error_code(error)
            refused = isinstance(error, ParamValidationError) or (
                isinstance(error, ClientError) and code not in RETRYABLE_CALL_ERRORS)
            if refused and len(pending) > 1:
                # The request as a whole was refused (one malformed entry fails the call):
                # halve it until the bad entries stand alone, so the good ones still land.
                half = len(pending) // 2
                for part in (pending[:half], pending[half:]):
                    outcome.merge(batch_create_partitions(config, database, table, part, attempts, sleep))
                return outcome
            if refused or attempt == attempts - 1:
                outcome.failed.extend({"Values": p["Values"], "ErrorCode": code, "ErrorMessage": str(error)}
                                      for p in pending)
                return outcome
            outcome.retries += 1
            sleep(backoff(attempt))
            continue
        by_values = {tuple(p["Values"]): p for p in pending}
        retry = []
        errors = answer.get("Errors") or []
        for entry in errors:
            values = tuple(entry.get("PartitionValues") or ())
            detail = entry.get("ErrorDetail") or {}
            code = detail.get("ErrorCode", "")
            if code == "AlreadyExistsException":
                outcome.already += 1
            elif code in RETRYABLE_ENTRY_ERRORS and attempt < attempts - 1 and values in by_values:
                retry.append(by_values[values])
            else:
                outcome.failed.append({"Values": list(values), "ErrorCode": code,
                                       "ErrorMessage": detail.get("ErrorMessage", "")})
        outcome.done += len(pending) - len(errors)
        if not retry:
            return outcome
        outcome.retries += 1
        pending = retry
        sleep(backoff(attempt))
    return outcome


def batch_delete_partitions(config: CatalogConfig, database: str, table: str,
                            values: Sequence[Sequence[str]], attempts: int = 8) -> BatchOutcome:
    """BatchDeletePartition of up to 25 partitions, retrying retryable entries; a partition
    already gone counts as ``already``."""
    glue = client(config)
    outcome = BatchOutcome()
    pending = [list(v) for v in values]
    for attempt in range(attempts):
        outcome.calls += 1
        answer = call_with_retry(lambda: glue.batch_delete_partition(
            DatabaseName=database, TableName=table,
            PartitionsToDelete=[{"Values": v} for v in pending], **config.ids()), attempts)
        retry = []
        errors = answer.get("Errors") or []
        for entry in errors:
            code = (entry.get("ErrorDetail") or {}).get("ErrorCode", "")
            if code == "EntityNotFoundException":
                outcome.already += 1
            elif code in RETRYABLE_ENTRY_ERRORS and attempt < attempts - 1:
                retry.append(entry["PartitionValues"])
            else:
                outcome.failed.append({"Values": entry.get("PartitionValues"), "ErrorCode": code,
                                       "ErrorMessage": (entry.get("ErrorDetail") or {}).get("ErrorMessage", "")})
        outcome.done += len(pending) - len(errors)
        if not retry:
            break
        outcome.retries += 1
        pending = retry
        time.sleep(backoff(attempt))
    return outcome


def get_partitions(config: CatalogConfig, database: str, table: str, expression: str = "",
                   segments: int = 4, exclude_column_schema: bool = True,
                   extra: Optional[dict[str, Any]] = None) -> list[dict[str, Any]]:
    """Every partition matching ``expression``: the table is split into ``segments`` Segments
    (at most 10) fetched in parallel threads, each paged with NextToken."""
    segments = max(1, min(MAX_SEGMENTS, segments))

    def one(segment: int) -> list[dict[str, Any]]:
        glue = client(config)
        kwargs: dict[str, Any] = {"DatabaseName": database, "TableName": table, "MaxResults": 1000,
                                  "ExcludeColumnSchema": exclude_column_schema, **config.ids(), **(extra or {})}
        if expression:
            kwargs["Expression"] = expression
        if segments > 1:
            kwargs["Segment"] = {"SegmentNumber": segment, "TotalSegments": segments}
        found: list[dict[str, Any]] = []
        while True:
            page = call_with_retry(lambda: glue.get_partitions(**kwargs))
            found.extend(page.get("Partitions") or [])
            token = page.get("NextToken")
            if not token:
                return found
            kwargs["NextToken"] = token

    with ThreadPoolExecutor(max_workers=segments) as pool:
        return [p for part in pool.map(one, range(segments)) for p in part]


def get_table(config: CatalogConfig, database: str, table: str) -> Optional[dict[str, Any]]:
    """The table, or None when it does not exist."""
    glue = client(config)
    try:
        return call_with_retry(lambda: glue.get_table(DatabaseName=database, Name=table, **config.ids()))["Table"]
    except ClientError as error:
        if error_code(error) == "EntityNotFoundException":
            return None
        raise


def ensure_database(config: CatalogConfig, database: str) -> bool:
    """Create the database if it is missing; True when it was created."""
    glue = client(config)
    try:
        glue.get_database(Name=database, **config.ids())
        return False
    except ClientError as error:
        if error_code(error) != "EntityNotFoundException":
            raise
    try:
        glue.create_database(DatabaseInput={"Name": database}, **config.ids())
        return True
    except ClientError as error:
        if error_code(error) == "AlreadyExistsException":
            return False
        raise


def table_input_from(table: dict[str, Any]) -> dict[str, Any]:
    """The TableInput that recreates ``table`` (GetTable output minus read-only members)."""
    allowed = {"Name", "Description", "Owner", "LastAccessTime", "LastAnalyzedTime", "Retention",
               "StorageDescriptor", "PartitionKeys", "ViewOriginalText", "ViewExpandedText",
               "TableType", "Parameters", "TargetTable"}
    return {k: v for k, v in table.items() if k in allowed}


def run_threads(fn: Callable[[T], Any], items: Iterable[T], workers: int) -> list[Any]:
    """``fn`` over ``items`` on a thread pool, results in order."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(fn, items))
