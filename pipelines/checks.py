"""Checks of a pipeline command line before Spark starts (no pyspark import here).

A mistake in the command line is a :class:`UsageError` (exit 2, like argparse's own errors);
a catalog that cannot be reached or refuses a call is a :class:`CatalogUnavailable` (exit 1).
Each message is one line naming the argument and the rule, so a typo costs a second, not a
JVM start: paths are looked at, expressions parsed with the service's own parser and bound to
the table's partition-key types, and the database and table looked up with boto3.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from typing import Any, Optional, Sequence
from urllib.parse import urlparse

import boto3
from botocore.config import Config
from botocore.exceptions import (BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError,
                                 NoRegionError, PartialCredentialsError)

from pipelines import layout
from pipelines.catalog import CatalogConfig, count_calls, error_code

FORMATS = ("parquet", "csv", "json")
MAX_INDEXES = 3  # partition indexes per table (Glue's quota)
# The pre-flight calls answer fast or not at all: two attempts, short timeouts.
_PROBE_CONFIG = Config(retries={"total_max_attempts": 2, "mode": "standard"}, connect_timeout=5, read_timeout=30)


class UsageError(ValueError):
    """The command line is wrong: fix the argument the message names (exit code 2)."""


class CatalogUnavailable(Exception):
    """The catalog could not be reached or refused the call (exit code 1)."""


def int_range(low: int, high: Optional[int] = None):
    """An argparse ``type`` for an integer in [low, high] (high None: no upper bound).

    Its errors are ArgumentTypeError, whose message argparse prints after the argument's name
    (a ValueError would print only "invalid integer value", hiding the range)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range: {low}..{high}" if high is not None else
                                             f"{value} is out of range: at least {low}")
        return value
    parse.__name__ = "integer"
    return parse


def parse_formats(text: str) -> list[str]:
    """``--formats parquet,csv`` -> ["parquet", "csv"]: known formats, at least one, no repeats."""
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"--formats {text!r}: expected a comma list of {', '.join(FORMATS)}"
                         + (f" ({', '.join(unknown)} unknown)" if unknown else ""))
    if len(set(formats)) != len(formats):
        raise UsageError(f"--formats {text!r}: a format is listed twice")
    return formats


def parse_list(text: str, arg: str, kind: type = str) -> list[Any]:
    """A non-empty comma list (``--countries``, ``--years``), each item converted by ``kind``."""
    items = [i.strip() for i in text.split(",") if i.strip()]
    if not items:
        raise UsageError(f"{arg} {text!r}: expected a non-empty comma list")
    try:
        return [kind(i) for i in items]
    except ValueError:
        raise UsageError(f"{arg} {text!r}: expected a comma list of {kind.__name__} values") from None


def parse_conf(items: Sequence[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` (repeatable) -> a dict."""
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {item!r}: expected KEY=VALUE, e.g. spark.sql.shuffle.partitions=4")
        conf[key.strip()] = value
    return conf


def parse_as_of(text: Optional[str]) -> Optional[dt.datetime]:
    """``--as-of`` ISO 8601 time (``Z`` or an offset; no offset means UTC)."""
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(f"--as-of {text!r}: expected an ISO 8601 time such as 2024-05-01T12:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def parse_index(text: str) -> tuple[str, list[str]]:
    """``--index name:key1,key2`` -> (name, [key1, key2])."""
    name, sep, keys = text.partition(":")
    names = [k.strip() for k in keys.split(",") if k.strip()]
    if not sep or not name.strip() or not names:
        raise UsageError(f"--index {text!r}: expected NAME:KEY1[,KEY2...], e.g. by_cy:country,year")
    if len(name.strip()) > 255:
        raise UsageError(f"--index {text!r}: the index name is longer than 255 characters")
    if len({k.lower() for k in names}) != len(names):
        raise UsageError(f"--index {text!r}: a key is listed twice")
    return name.strip(), names


def check_indexes(indexes: Sequence[tuple[str, list[str]]], keys: Sequence[str]) -> None:
    """Index keys must be partition keys; at most 3 indexes, distinct names."""
    if len(indexes) > MAX_INDEXES:
        raise UsageError(f"--index: at most {MAX_INDEXES} partition indexes per table ({len(indexes)} given)")
    if len({n for n, _ in indexes}) != len(indexes):
        raise UsageError("--index: two indexes have the same name")
    known = {k.lower() for k in keys}
    for name, index_keys in indexes:
        missing = [k for k in index_keys if k.lower() not in known]
        if missing:
            raise UsageError(f"--index {name}:{','.join(index_keys)}: {', '.join(missing)} is not a partition key "
                             f"(partition keys: {', '.join(keys) or 'none'})")


def dataset_keys(path: str) -> Optional[tuple[str, ...]]:
    """Check a ``register`` PATH and return the partition key names of its first data folder
    (None for a non-local path: only Spark can list it). A missing path, a file, or a folder
    with no ``key=value`` folder directly under it is a UsageError."""
    if not layout.is_local(path):
        return None
    base = layout.local_path(path)
    if not os.path.exists(base):
        raise UsageError(f"PATH {path}: no such directory")
    if not os.path.isdir(base):
        raise UsageError(f"PATH {path}: a file, expected the dataset's root directory")
    try:
        names = sorted(e.name for e in os.scandir(base) if e.is_dir() and not layout.hidden(e.name))
    except PermissionError:
        raise UsageError(f"PATH {path}: not readable") from None
    partitioned = [n for n in names if layout.parse_segment(n)]
    if not partitioned:
        hint = f"; datasets below it: {', '.join(names[:5])}" if names else ""
        raise UsageError(f"PATH {path}: no key=value partition folders directly under it "
                         f"(expected e.g. {path.rstrip('/')}/country=US/){hint}")
    # Follow the first branch down to its first data file: its folders are the keys.
    keys: list[str] = []
    folder = os.path.join(base, partitioned[0])
    keys.append(layout.parse_segment(partitioned[0])[0])  # type: ignore[index]
    while True:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
        if any(e.is_file() and not layout.hidden(e.name) for e in entries):
            return tuple(keys)
        below = [e.name for e in entries if e.is_dir() and not layout.hidden(e.name) and layout.parse_segment(e.name)]
        if not below:
            return tuple(keys)
        keys.append(layout.parse_segment(below[0])[0])  # type: ignore[index]
        folder = os.path.join(folder, below[0])


def check_output(path: Optional[str], mode: str) -> None:
    """``read --output``: with the default mode errorifexists the path must not exist yet."""
    if path and mode == "errorifexists" and layout.is_local(path) and os.path.exists(layout.local_path(path)):
        raise UsageError(f"--output {path}: already exists (remove it, or give --mode overwrite or append)")


def endpoint_source(config: CatalogConfig, given: Optional[str]) -> str:
    """Where the Glue endpoint came from, for messages."""
    if given:
        return f"--endpoint-url {given}"
    if os.environ.get("AWS_ENDPOINT_URL_GLUE"):
        return f"AWS_ENDPOINT_URL_GLUE={config.glue_endpoint}"
    if os.environ.get("AWS_ENDPOINT_URL"):
        return f"AWS_ENDPOINT_URL={config.glue_endpoint}"
    return f"AWS Glue in {config.region}"


def check_endpoints(config: CatalogConfig, given: Optional[str], given_lf: Optional[str]) -> None:
    """Endpoint URLs must be http(s)://host[:port]."""
    for arg, url in (("--endpoint-url", config.glue_endpoint), ("--lakeformation-endpoint-url",
                                                                config.lakeformation_endpoint)):
        if url is None:
            continue
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            source = arg if (given if arg == "--endpoint-url" else given_lf) else "the environment's endpoint"
            raise UsageError(f"{source} {url!r}: expected a URL such as http://127.0.0.1:8000")


class Probe:
    """boto3 calls made before Spark starts, with their failures turned into one-line errors."""

    def __init__(self, config: CatalogConfig, given_endpoint: Optional[str] = None) -> None:
        self.config = config
        self.source = endpoint_source(config, given_endpoint)
        try:
            self.glue = count_calls(boto3.session.Session().client(
                "glue", endpoint_url=config.glue_endpoint, region_name=config.region, config=_PROBE_CONFIG))
        except (ValueError, BotoCoreError) as error:
            raise UsageError(f"--region {config.region!r} / {self.source}: {error}") from None

    def call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """One Glue call; EntityNotFoundException is left to the caller (as ClientError)."""
        try:
            return getattr(self.glue, operation)(**kwargs, **self.config.ids())
        except EndpointConnectionError as error:
            raise CatalogUnavailable(f"cannot reach the catalog at {self.source}: {error} "
                                     "(is the service running? see --endpoint-url)") from None
        except (NoCredentialsError, PartialCredentialsError) as error:
            raise CatalogUnavailable(f"{error}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                                     "(any values for a local service)") from None
        except NoRegionError:
            raise UsageError("--region: no region given (or set AWS_REGION / AWS_DEFAULT_REGION)") from None
        except ClientError as error:
            if error_code(error) == "EntityNotFoundException":
                raise
            raise CatalogUnavailable(f"the catalog at {self.source} refused {operation}: "
                                     f"{error_code(error)}: {error.response.get('Error', {}).get('Message', '')}"
                                     ) from None
        except BotoCoreError as error:
            raise CatalogUnavailable(f"catalog call {operation} to {self.source} failed: {error}") from None

    def database_exists(self, database: str) -> bool:
        """Whether the database exists."""
        try:
            self.call("get_database", Name=database)
            return True
        except ClientError:
            return False

    def table(self, database: str, table: str, must_exist: bool = True) -> Optional[dict[str, Any]]:
        """The table (GetTable); a missing database or table is a UsageError naming which."""
        try:
            return self.call("get_table", DatabaseName=database, Name=table)["Table"]
        except ClientError:
            pass
        if not self.database_exists(database):
            raise UsageError(f"--database {database}: no such database in the catalog at {self.source}")
        if must_exist:
            raise UsageError(f"--table {table}: no such table in database {database}")
        return None


def check_expression(text: str, keys: Sequence[dict[str, Any]], arg: str, predicate: bool = False,
                     shown: Optional[str] = None) -> None:
    """Parse a GetPartitions Expression (or a Lake Formation PartitionPredicate) with the
    service's own parser and bind it to the table's partition keys, so a syntax error, a column
    that is not a partition key, or a literal of the wrong type is refused here. Where the
    service's code is not importable (a cluster with only ``pipelines/``), the catalog refuses
    it later instead. ``shown``: how the argument is quoted in the message (default: ``text``)."""
    if not text.strip():
        return
    if not keys:
        raise UsageError(f"{arg} {text!r}: the table has no partition keys to filter on")
    try:
        from chalicelib.domain import expressions
        from chalicelib.errors import InvalidInputException
    except ImportError:
        return
    try:
        node = (expressions.parse_partition_predicate(text) if predicate else expressions.parse_expression(text))
        expressions.bind(node, [(k["Name"], k.get("Type") or "string") for k in keys])
    except InvalidInputException as error:
        message = str(getattr(error, "message", "") or error).replace("\n", " ")
        raise UsageError(f"{arg} {shown if shown is not None else repr(text)}: {message}") from None


def partition_expression(spec: str, keys: Sequence[dict[str, str]]) -> str:
    """``country=US,year=2024`` -> ``country = 'US' AND year = '2024'`` (a prefix or any
    subset of the keys; literals are quoted, Glue compares them as the key's type)."""
    names = {k["Name"].lower(): k["Name"] for k in keys}
    terms = []
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        if not sep or key.strip().lower() not in names:
            raise UsageError(f"--partition {spec!r}: {part!r} is not KEY=VALUE for a partition key "
                             f"({', '.join(names.values()) or 'the table has none'})")
        literal = value.strip().replace("'", "''")
        terms.append(f"{names[key.strip().lower()]} = '{literal}'")
    return " AND ".join(terms)
