"""Fuzz every implemented operation with requests generated from botocore's models.

A few thousand requests (fixed seed; FUZZ_REQUESTS and FUZZ_SEED run more or others) go to the
running service, most over one raw keep-alive HTTP connection (so a dropped connection shows as
one) and a sample through boto3. Whatever the input, valid or not, every request must get an
answer, never a 5xx, and every error body must be AWS-shaped: JSON with ``__type`` and
``Message``, and for Lake Formation the ``x-amzn-ErrorType`` header. Afterwards every listing of
the fuzzed catalog must still work, since one badly stored value can poison a listing.

Failures are collected, not raised at the first: the assertion lists every failure class
(operation, status, error, the server's exception) with its smallest request, minimised.
FUZZ_DEBUG=1 prints why valid requests were refused. Run with ``-s`` for a summary (time,
statuses, 200s per operation).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional
from urllib.parse import urlparse

import boto3
import pytest
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

from chalicelib.protocol.served import implemented
from infra.local.stack import CLIENT_CONFIG, REGION, CatalogStack
from tests.integration.fuzz_gen import (PARTITION_KEYS, FuzzRequest, Generator, Pool, delete_at,
                                        plain, service_model, to_boto)

REQUESTS = int(os.environ.get("FUZZ_REQUESTS", "3000"))
# FUZZ_DEBUG=1 prints why valid requests were refused, to tune the generator's hints.
DEBUG = os.environ.get("FUZZ_DEBUG") == "1"
SEED = int(os.environ.get("FUZZ_SEED", "11"))
BOTO_SHARE = 0.1  # of requests sent through boto3 instead of raw HTTP
MINIMISE_BUDGET = 60  # extra requests spent shrinking one failure class's sample
REPLENISH_EVERY = 500  # requests between re-creating pool entities the fuzz deleted


pytestmark = pytest.mark.slow


@dataclass
class Failure:
    """One failing request, and how it failed."""

    signature: str  # what groups failures into a class: status and the server's exception
    detail: str
    request: FuzzRequest


@dataclass
class Report:
    """Every failure, grouped by class, each class with its smallest request."""

    failures: dict[str, list[Failure]] = field(default_factory=lambda: defaultdict(list))
    sent: int = 0
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, failure: Failure) -> None:
        self.failures[failure.signature].append(failure)

    def render(self) -> str:
        lines = [f"{len(self.failures)} failure classes in {self.sent} requests (seed {SEED}):"]
        for signature, items in sorted(self.failures.items()):
            sample = min(items, key=lambda f: len(f.request.body))
            if sample.request.kind == "invariant":
                lines.append(f"\n* {signature}\n  {sample.detail}")
                continue
            operations = sorted({f"{f.request.service}:{f.request.operation}" for f in items})
            kinds = sorted({f.request.kind.split(" ")[0] for f in items})
            lines.append(f"\n* {signature}\n  x{len(items)} in {', '.join(operations)}; mutations {', '.join(kinds)}"
                         f"\n  smallest: {sample.request.service}:{sample.request.operation} ({sample.request.kind})"
                         f" -> {sample.detail}"
                         f"\n  POST {sample.request.path} {_headers_shown(sample.request)}"
                         f"\n  body: {_shown(sample.request.body)}")
        return "\n".join(lines)


def _shown(body: bytes, limit: int = 600) -> str:
    text = repr(body)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(body)} bytes)"


def _headers_shown(request: FuzzRequest) -> str:
    return " ".join(f"{k}: {v[:120]!r}" for k, v in request.headers.items() if k != "X-Amz-Date")


class ServerLog:
    """The API server's log, read from where the last read stopped: the exception behind a 5xx."""

    def __init__(self, path: Optional[Path]):
        self.path = path
        self.offset = path.stat().st_size if path and path.exists() else 0

    def new_exception(self) -> str:
        """``Type: message @ innermost project frame`` of the last traceback since the last read."""
        if not self.path or not self.path.exists():
            return "no server log"
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            text = log.read().decode("utf-8", "replace")
            self.offset = log.tell()
        if "Traceback" not in text:
            return "no traceback logged"
        tb = text[text.rindex("Traceback"):].splitlines()
        frames = [line.strip() for line in tb if line.strip().startswith("File ") and "/.venv/" not in line
                  and "/lib/python" not in line]
        error = next((line for line in reversed(tb) if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line)),
                     tb[-1] if tb else "?")
        where = re.sub(r'File ".*?([^/]+/[^/]+\.py)", line (\d+), in (\S+)', r"\1:\2 \3", frames[-1]) if frames else "?"
        # Positions and sizes vary from request to request; the class does not.
        return f"{_generic(error[:160])} @ {where}"


def _generic(text: str) -> str:
    """An error message without what varies between requests of one failure class (numbers,
    the escaped character, DynamoDB's request id)."""
    text = re.sub(r"on request \([0-9a-fA-F-]+\)", "on request (id)", text)
    return re.sub(r"[0-9]+", "N", re.sub(r"\\u[0-9a-fA-F]{4}", r"\\uXXXX", text))


@dataclass
class Outcome:
    """What came back for one request: a response, or why none did."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    dropped: str = ""
    unparsed: str = ""  # boto3 got an answer but could not read it


class RawSender:
    """One keep-alive HTTP/1.1 connection: a reset or close without an answer is a failure."""

    def __init__(self, endpoint: str):
        url = urlparse(endpoint)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def send(self, request: FuzzRequest) -> Outcome:
        try:
            # Header values as UTF-8 bytes: http.client would refuse a non-Latin-1 str.
            headers = {k: v.encode("utf-8") for k, v in request.headers.items()}
            self.conn.request("POST", request.path, body=request.body, headers=headers)
            response = self.conn.getresponse()
            body = response.read()
        except (http.client.HTTPException, OSError) as error:
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            return Outcome(dropped=f"{type(error).__name__}: {error}")
        return Outcome(response.status, {k.lower(): v for k, v in response.getheaders()}, body)

    def close(self) -> None:
        self.conn.close()


def check(request: FuzzRequest, outcome: Outcome, log: ServerLog) -> Optional[Failure]:
    """The failure this outcome is, if any."""
    if outcome.dropped:
        cause = log.new_exception()
        return Failure(f"no response ({outcome.dropped.split(':')[0]}); server: {cause}", outcome.dropped, request)
    if outcome.unparsed:
        return Failure(f"boto3 cannot read the answer: {_generic(outcome.unparsed[:160])}",
                       outcome.unparsed, request)
    if outcome.status >= 500:
        cause = log.new_exception()
        return Failure(f"{outcome.status}; server: {cause}", f"{outcome.status} {outcome.body[:300]!r}", request)
    try:
        payload = json.loads(outcome.body) if outcome.body else None
    except ValueError:
        payload = None
    if outcome.status >= 400:
        problems = []
        if not isinstance(payload, dict) or not isinstance(payload.get("__type"), str) or not payload["__type"]:
            problems.append("no __type")
        elif not isinstance(payload.get("Message", payload.get("message")), str):
            problems.append("no Message")
        if request.service == "lakeformation" and isinstance(payload, dict) and \
                outcome.headers.get("x-amzn-errortype", "").split(":")[0] != payload.get("__type"):
            problems.append("x-amzn-ErrorType header missing or unlike __type")
        if problems:
            return Failure(f"{outcome.status} error body not AWS-shaped ({', '.join(problems)})",
                           f"{outcome.status} {outcome.body[:300]!r} {outcome.headers}", request)
    elif not isinstance(payload, dict):
        return Failure(f"{outcome.status} success body is not a JSON object",
                       f"{outcome.status} {outcome.body[:300]!r}", request)
    return None


class BotoSender:
    """boto3 clients of the fuzz account: strict ones for valid requests, unvalidated for the rest."""

    def __init__(self, endpoint: str, account: str):
        def make(service: str, validate: bool) -> Any:
            config = CLIENT_CONFIG.merge(Config(parameter_validation=validate))
            return boto3.client(service, endpoint_url=endpoint, region_name=REGION, aws_access_key_id=account,
                                aws_secret_access_key="testing", config=config)
        self.clients = {(s, v): make(s, v) for s in ("glue", "lakeformation") for v in (True, False)}

    def send(self, request: FuzzRequest) -> Optional[Outcome]:
        """The outcome, or None when botocore refused to send the request at all."""
        client = self.clients[(request.service, request.kind == "valid")]
        shape = service_model(request.service).operation_model(request.operation).input_shape
        sent: list[bool] = []
        client.meta.events.register("before-send", lambda **_: sent.append(True), unique_id="fuzz-sent")
        try:
            getattr(client, xform_name(request.operation))(**to_boto(shape, request.params))
            return Outcome(200, {}, b"{}")
        except ClientError as error:
            meta = error.response.get("ResponseMetadata", {})
            code = error.response.get("Error", {}).get("Code", "")
            body = {"__type": code, "Message": error.response.get("Error", {}).get("Message")}
            headers = {k.lower(): v for k, v in meta.get("HTTPHeaders", {}).items()}
            return Outcome(meta.get("HTTPStatusCode", 0), headers, json.dumps(body).encode())
        except (ConnectionError, HTTPClientError) as error:
            return Outcome(dropped=f"{type(error).__name__}: {error}") if sent else None
        except Exception as error:  # noqa: BLE001 - botocore raises many kinds client-side
            if not sent:
                return None  # refused client-side (validation, serialisation): nothing reached the service
            return Outcome(200, unparsed=f"{type(error).__name__}: {error}")


def minimise(sender: RawSender, failure: Failure, log: ServerLog) -> Failure:
    """Drop members and list items while the request still fails the same way."""
    if failure.request.params is None or not isinstance(failure.request.params, (dict, list)):
        return failure
    best, budget = failure, MINIMISE_BUDGET
    progress = True
    while progress and budget > 0:
        progress = False
        for path in _paths(best.request.params):
            if budget <= 0:
                break
            params = _copy(best.request.params)
            try:
                delete_at(params, path)
            except (KeyError, IndexError, TypeError):
                continue
            candidate = best.request.with_params(params)
            budget -= 1
            found = check(candidate, sender.send(candidate), log)
            if found is not None and found.signature == failure.signature:
                best, progress = Failure(found.signature, found.detail, candidate), True
                break
    return best


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every member and list item, outermost first, last items first (so indexes stay valid)."""
    children = list(tree.items()) if isinstance(tree, dict) else list(enumerate(tree)) if isinstance(tree, list) else []
    for key, _ in reversed(children):
        yield prefix + (key,)
    for key, child in children:
        yield from _paths(child, prefix + (key,))


def _copy(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _copy(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_copy(v) for v in tree]
    return tree


# -- the pool: entities the generated requests refer to ------------------------------------------

def make_pool(rng: random.Random) -> Pool:
    """Names of a catalog of its own (the account follows from the seed)."""
    account = "8" + "".join(rng.choice("0123456789") for _ in range(11))
    dbs = ["fuzz_db_a", "fuzz_db_b", "数据库"]
    return Pool(account=account, databases=dbs, tables={db: ["tbl_one", "tbl_two"] for db in dbs},
                governed={db: ["gov_one"] for db in dbs},
                values=[["2020", "01"], ["2021", "02"], ["2022", "12"]], indexes=["by_year", "by_year_month"])


def replenish(pool: Pool, glue: Any, lf: Any) -> None:
    """(Re)create the pool's entities the fuzz may have deleted or changed; start transactions."""
    def attempt(call: Any, **kwargs: Any) -> None:
        try:
            call(**kwargs)
        except ClientError as error:
            if error.response["ResponseMetadata"]["HTTPStatusCode"] >= 500:
                raise

    keys = [{"Name": k, "Type": "int" if k == "year" else "string"} for k in PARTITION_KEYS]
    for db in pool.databases:
        attempt(glue.create_database, DatabaseInput={"Name": db})
        for table in pool.tables[db] + pool.governed[db]:
            kind = "GOVERNED" if table in pool.governed[db] else "EXTERNAL_TABLE"
            attempt(glue.create_table, DatabaseName=db, TableInput={
                "Name": table, "TableType": kind, "PartitionKeys": keys,
                "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}, {"Name": "value", "Type": "string"}],
                                      "Location": f"s3://fuzz-bucket/{db}/{table}/"}})
        for table in pool.tables[db]:
            attempt(glue.batch_create_partition, DatabaseName=db, TableName=table, PartitionInputList=[
                {"Values": values, "StorageDescriptor": {"Location": f"s3://fuzz-bucket/{db}/{table}/{'/'.join(values)}/"}}
                for values in pool.values])
            for index, index_keys in zip(pool.indexes, (["year"], ["year", "month"])):
                attempt(glue.create_partition_index, DatabaseName=db, TableName=table,
                        PartitionIndex={"IndexName": index, "Keys": index_keys})
    for _ in range(3):
        try:
            pool.transactions.append(lf.start_transaction(TransactionType="READ_AND_WRITE")["TransactionId"])
        except ClientError:
            pass
    del pool.transactions[:-8]  # a few live ones and a few the fuzz has committed or cancelled


def listings_fail(glue: Any, lf: Any) -> list[tuple[str, dict, str]]:
    """Every listing of the catalog, read to the end through boto3: (operation, arguments,
    what it raised) for each that failed."""
    problems: list[tuple[str, dict, str]] = []

    def read_all(what: str, call: Any, **kwargs: Any) -> list[dict]:
        pages = []
        try:
            for page in glue.get_paginator(call).paginate(**kwargs) if isinstance(call, str) else [call(**kwargs)]:
                pages.append(page)
        except Exception as error:  # noqa: BLE001 - any failure is the finding
            problems.append((what, kwargs, f"{type(error).__name__}: {error}"))
        return pages

    for page in read_all("GetDatabases", "get_databases"):
        for database in page["DatabaseList"]:
            db = database["Name"]
            for tables in read_all("GetTables", "get_tables", DatabaseName=db):
                for table in tables["TableList"]:
                    name = table["Name"]
                    read_all("GetPartitions", "get_partitions", DatabaseName=db, TableName=name)
                    read_all("GetTableVersions", "get_table_versions", DatabaseName=db, TableName=name)
                    read_all("GetPartitionIndexes", "get_partition_indexes",
                             DatabaseName=db, TableName=name)
    token: Optional[str] = None
    for _ in range(1000):  # SearchTables has no paginator in botocore
        pages = read_all("SearchTables", glue.search_tables, **({"NextToken": token} if token else {}))
        token = pages[0].get("NextToken") if pages else None
        if not token:
            break
    read_all("ListTransactions", lf.list_transactions)
    return problems


class Fuzzer:
    """Sends the generated requests and collects what fails, with a few counters for tuning."""

    def __init__(self, endpoint: str, log_path: Optional[Path], seed: int):
        self.rng = random.Random(seed)
        self.pool = make_pool(self.rng)
        self.boto = BotoSender(endpoint, self.pool.account)
        self.glue, self.lf = self.boto.clients[("glue", True)], self.boto.clients[("lakeformation", True)]
        self.generator = Generator(self.rng, self.pool)
        self.raw = RawSender(endpoint)
        self.log = ServerLog(log_path)
        self.report = Report()
        self.spent: dict[str, float] = defaultdict(float)  # seconds per operation and mutation
        self.succeeded: dict[str, int] = defaultdict(int)  # 200s per operation: is the generator on target?

    def run(self, operations: list[tuple[str, str]], count: int) -> None:
        """``count`` requests, cycling through ``operations``, then the listings check."""
        replenish(self.pool, self.glue, self.lf)
        try:
            for i in range(count):
                if i and i % REPLENISH_EVERY == 0:
                    replenish(self.pool, self.glue, self.lf)
                service, operation = operations[i % len(operations)]
                self.one(self.generator.request(service, operation))
        finally:
            self.raw.close()
        for operation, arguments, error in listings_fail(self.glue, self.lf):
            self.report.add(Failure(f"{operation} fails after fuzzing: {_generic(error[:160])}",
                                    f"{operation}({arguments}): {error}",
                                    FuzzRequest("glue", operation, "invariant", None, b"", {})))

    def one(self, request: FuzzRequest) -> None:
        """Send one request (through boto3 for a sample of those it can send) and check it."""
        started = time.monotonic()
        outcome: Optional[Outcome] = None
        if self.rng.random() < BOTO_SHARE and isinstance(request.params, dict) and plain(request.params) \
                and not request.kind.startswith("odd_headers"):
            outcome = self.boto.send(request)
        if outcome is None:
            outcome = self.raw.send(request)
        self.spent[f"{request.operation} {request.kind.split(' ')[0]}"] += time.monotonic() - started
        self.report.sent += 1
        self.report.statuses[outcome.status] += 1
        if outcome.status == 200:
            self.succeeded[request.operation] += 1
        elif request.kind == "valid" and DEBUG:
            print("refused valid request:", request.operation, outcome.status, outcome.body[:300])
        failure = check(request, outcome, self.log)
        if failure is not None:
            fresh = failure.signature not in self.report.failures and not outcome.unparsed
            self.report.add(minimise(self.raw, failure, self.log) if fresh else failure)

    def summary(self, operations: list[tuple[str, str]]) -> str:
        """Where the time went and how often each operation got through, for tuning."""
        slowest = sorted(self.spent.items(), key=lambda kv: -kv[1])[:6]
        return (f"{self.report.sent} requests, {sum(self.spent.values()):.1f}s sending, statuses "
                f"{dict(sorted(self.report.statuses.items()))}; "
                f"slowest: {', '.join(f'{k} {v:.1f}s' for k, v in slowest)}; 200s per operation: "
                + ", ".join(f"{op} {self.succeeded[op]}" for _, op in operations))


def test_fuzz_every_operation(stack: CatalogStack) -> None:
    """No input, valid or not, gets a 5xx, a dropped connection or an error body AWS can't parse,
    and every listing works afterwards."""
    operations = implemented()
    assert len(operations) >= 40, operations
    # A server of its own on the session's store whose default account (that of unsigned and
    # garbled-credential requests, which the fuzz sends) is the fuzz's: fuzzed Lake Formation
    # settings must not land in the default account every other test shares.
    account = make_pool(random.Random(SEED)).account
    server = stack.extra_server({"GLUE_DEFAULT_ACCOUNT_ID": account}, name="fuzz").start()
    try:
        fuzzer = Fuzzer(server.endpoint, server.log_path, SEED)
        assert fuzzer.pool.account == account
        started = time.monotonic()
        fuzzer.run(operations, REQUESTS)
    finally:
        server.stop()
    print(f"fuzz (seed {SEED}): {time.monotonic() - started:.1f}s in all; {fuzzer.summary(operations)}")
    assert not fuzzer.report.failures, fuzzer.report.render()
