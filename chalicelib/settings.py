"""The service's settings: every environment variable chalicelib reads, declared and read here.

``current()`` is the process's :class:`Settings`, one frozen object read from the environment on
first use (a few dozen dictionary lookups, no I/O: 0.1 ms of a cold start) and never re-read. Each field
declares its variable, default, category and description; the README's settings table is
rendered from them (``python -m infra.settings_table``, checked by tests/unit/test_settings.py).

Who reads when: modules that keep a setting in a constant (cleanup's chunk size, the digest's
thresholds, the DynamoDB driver's endpoint...) take it from ``current()`` at their import; the
rest (the auth mode, the warehouse, the key file, the work budget...) look it up at each use.
Tests change the settings of their own process with :func:`replace` (the ``configure`` fixture of
tests/conftest.py), which reaches the lookups made at use; a server is given other settings
through its environment when it starts.

Categories: **for users**, the few a newcomer sets (where the store and the warehouse are, who
may call, the account and region of unsigned requests, where tables may be placed); **for
tuning**, a deployment's further choices and the limits of background work; **for tests**, hooks
only the tests set; **set by the platform**, variables the service reads but does not own (Lambda's
own, the proxy a process is told to use).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

USERS = "for users"
TUNING = "for tuning"
TESTS = "for tests"
PLATFORM = "set by the platform"
CATEGORIES = (USERS, TUNING, TESTS, PLATFORM)


class Setting:
    """How one field of :class:`Settings` is read and documented.

    ``names``: the environment variables, the first one set wins. ``default``: the value used when
    none is set, as it would be written in the environment (None: unset). ``empty_is_unset``: an
    empty value counts as unset (the code read ``os.environ.get(X) or default``); otherwise an
    empty value is taken as it is. ``note``: what the README adds after the default. ``unset``:
    the value when none is set and there is no default.
    """

    __slots__ = ("names", "category", "description", "default", "parse", "empty_is_unset", "note", "unset")

    def __init__(self, names: tuple[str, ...], category: str, description: str, *, default: str | None,
                 parse: Callable[[str], Any], empty_is_unset: bool, note: str, unset: Any) -> None:
        self.names, self.category, self.description, self.default = names, category, description, default
        self.parse, self.empty_is_unset, self.note, self.unset = parse, empty_is_unset, note, unset

    def read(self, environ: Mapping[str, str]) -> Any:
        """This setting's value in ``environ``."""
        for name in self.names:
            value = environ.get(name)
            if value is None or (value == "" and self.empty_is_unset):
                continue
            return self._parse(name, value)
        return self.unset if self.default is None else self._parse(self.names[0], self.default)

    def _parse(self, name: str, value: str) -> Any:
        try:
            return self.parse(value)
        except ValueError:
            raise ValueError(f"{name}={value!r} is not a valid value: {self.description}") from None


def _setting(names: str | tuple[str, ...], category: str, description: str, *, default: str | None = None,
             parse: Callable[[str], Any] = str, empty_is_unset: bool = True, note: str = "",
             unset: Any = None) -> Any:
    return Setting(names if isinstance(names, tuple) else (names,), category, description, default=default,
                   parse=parse, empty_is_unset=empty_is_unset, note=note, unset=unset)


def _on(value: str) -> bool:
    return value == "1"


_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in _LOG_LEVELS:
        raise ValueError(value)
    return level


class Settings:
    """Every setting the service reads, typed, with its default (see the module's docstring).

    Frozen: an instance holds one value per field, the class attribute of a field is its
    :class:`Setting`. A plain class rather than a dataclass: generating the methods of a dataclass
    this wide took 2 ms of every cold start.
    """

    # ------------------------------------------------------------------------------ for users
    ddb_endpoint: str | None = _setting(
        "GLUE_DDB_ENDPOINT", USERS, "the DynamoDB endpoint of the store (`make run` sets it to DynamoDB Local's)",
        note=": the DynamoDB of `AWS_REGION`")
    region: str = _setting(
        ("AWS_REGION", "AWS_DEFAULT_REGION"), USERS,
        "the store's DynamoDB region; the catalog region of requests that name none (an unsigned request, a "
        "Paimon token without `/region`)", default="us-east-1")
    paimon_warehouse: str | None = _setting(
        "PAIMON_WAREHOUSE", USERS,
        "where Paimon table directories go (`s3://bucket/prefix` when deployed, where it is required: without it "
        "Paimon table creation is refused with `AccessDeniedException` / 403)",
        note=": then `file://<repo>/.data/paimon-warehouse`; none on Lambda")
    allowed_locations: str = _setting(
        "GLUE_ALLOWED_LOCATIONS", USERS,
        "comma-separated `s3://bucket/prefix` or `file:///dir` prefixes where, besides the warehouse, callers may "
        "place Iceberg tables (their metadata files) and external Paimon tables (`options.path`); see \"Files the "
        "server touches\"", default="", note=": the warehouse only")
    auth: str = _setting(
        "GLUE_AUTH", USERS,
        "`sigv4`: every request must carry a valid SigV4 signature of an issued key; `open`: the access key id "
        "names the account, nothing is verified (any other value means `sigv4`)",
        default="open", note=" locally; always `sigv4` on Lambda")
    default_account_id: str = _setting(
        "GLUE_DEFAULT_ACCOUNT_ID", USERS,
        "open mode: the account of an access key id that is not 12 digits, and of unsigned requests",
        default="123456789012", empty_is_unset=False)

    # ------------------------------------------------------------------------------ for tuning
    log_level: str = _setting(
        "GLUE_LOG_LEVEL", TUNING,
        "the service's log level (`DEBUG`, `INFO`, `WARNING`, `ERROR`): at `INFO` one line per request (protocol, "
        "operation or path, status, milliseconds, DynamoDB items read; `make run`'s terminal, CloudWatch when "
        "deployed); `WARNING` leaves only errors (a 5xx with its traceback)", default="INFO", parse=_log_level)
    table_prefix: str = _setting(
        "GLUE_TABLE_PREFIX", TUNING, "prefix of the DynamoDB table names (the deployed template always uses the "
        "default)", default="glue_catalog_", empty_is_unset=False)
    ddb_access_key_id: str | None = _setting(
        "GLUE_DDB_ACCESS_KEY_ID", TUNING,
        "the access key id the store uses with DynamoDB Local (`make run` sets it to the catalog database's key; "
        "see above)", note=": the process's AWS credentials")
    allow_cross_account: bool = _setting(
        "GLUE_ALLOW_CROSS_ACCOUNT", TUNING,
        "`1`: a `CatalogId` other than the caller's account is allowed (else `AccessDeniedException`)",
        parse=_on, empty_is_unset=False, note=" (off)", unset=False)
    token_secret: str | None = _setting(
        "GLUE_TOKEN_SECRET", TUNING,
        "the HMAC key that signs NextTokens (set it to share one across deployments, or to rotate)",
        note=": generated once, kept in the settings table")
    auth_key_file: str = _setting(
        "GLUE_AUTH_KEY_FILE", TUNING,
        "local key file that encrypts the stored secret access keys (created 0600 on first use)",
        default=os.path.join(".data", "auth.key"), note=" (`make run`: `$GLUE_LOCAL_DATA_DIR/auth.key`)")
    auth_kms_key_id: str | None = _setting(
        "GLUE_AUTH_KMS_KEY_ID", TUNING,
        "the KMS key that encrypts the stored secret access keys when deployed (required on Lambda)",
        note="; the `prod` stage sets `alias/glue-catalog-identities`")
    work_budget_seconds: float = _setting(
        "GLUE_WORK_BUDGET_SECONDS", TUNING,
        "how long one paged read (GetPartitions and the other listings) may work before it answers a partial page "
        "with a NextToken (see \"Deploy to AWS\")", default="5", parse=float, empty_is_unset=False)
    partition_digest: bool = _setting(
        "GLUE_PARTITION_DIGEST", TUNING,
        "`0` turns off reading the per-table partition digest (unindexed GetPartitions and Segment listings then "
        "read every partition; writes keep the digest up to date either way)",
        default="1", parse=lambda value: value != "0", empty_is_unset=False)
    ddb_direct_transport: bool = _setting(
        "GLUE_DDB_TRANSPORT", TUNING,
        "`botocore` sends every DynamoDB call through botocore; by default the data-plane calls (GetItem, Query, "
        "TransactWriteItems...) are signed and sent directly, and only what a retry may cure goes through botocore "
        "(see docs/design.md)", default="direct", parse=lambda value: value != "botocore", empty_is_unset=False)
    digest_compact_deltas: int = _setting(
        "GLUE_DIGEST_COMPACT_DELTAS", TUNING,
        "a table's digest is compacted in the background (a cleanup job) once a reader finds more delta items "
        "than this, or a writer has written more", default="64", parse=int, empty_is_unset=False)
    digest_step_pieces: int = _setting(
        "GLUE_DIGEST_STEP_PIECES", TUNING,
        "one step of that compaction replaces at most this many digest items (a larger backlog is merged a slice "
        "at a time)", default="2000", parse=int, empty_is_unset=False)
    digest_prune_misses: int = _setting(
        "GLUE_DIGEST_PRUNE_MISSES", TUNING,
        "a reader rebuilds a table's digest from its partitions once this many (and over half) of its candidates "
        "turned out deleted", default="256", parse=int, empty_is_unset=False)
    partition_cache_bytes: int = _setting(
        "GLUE_PARTITION_CACHE_BYTES", TUNING,
        "bytes of rendered partitions an unindexed GetPartitions keeps per process for warm listings, checked "
        "against the table's partition digest on every request (0: off)", default="33554432", parse=int,
        empty_is_unset=False)
    lf_idle_seconds: float = _setting(
        "GLUE_LF_IDLE_SECONDS", TUNING, "an ACTIVE Lake Formation transaction idle this long is aborted (as AWS does)",
        default="900", parse=float, empty_is_unset=False)
    lf_commit_lease_seconds: float = _setting(
        "GLUE_LF_COMMIT_LEASE_SECONDS", TUNING, "a commit whose committer went quiet this long is settled by the "
        "next reader", default="60", parse=float, empty_is_unset=False)
    backfill_lease_seconds: float = _setting(
        "GLUE_BACKFILL_LEASE_SECONDS", TUNING, "a partition-index backfill's lease",
        default="60", parse=float, empty_is_unset=False)
    backfill_resume_chunks: int = _setting(
        "GLUE_BACKFILL_RESUME_CHUNKS", TUNING, "how many chunks of an abandoned backfill a request taking it over "
        "does", default="4", parse=int, empty_is_unset=False)
    cleanup_poll_seconds: float = _setting(
        "GLUE_CLEANUP_POLL_SECONDS", TUNING, "the background cleaner of deleted databases and tables: how often it "
        "looks for jobs", default="5", parse=float, empty_is_unset=False)
    cleanup_chunk_items: int = _setting(
        "GLUE_CLEANUP_CHUNK_ITEMS", TUNING, "the cleaner: deletions per chunk",
        default="1000", parse=int, empty_is_unset=False)
    cleanup_lease_seconds: float = _setting(
        "GLUE_CLEANUP_LEASE_SECONDS", TUNING, "the cleaner: a job's lease",
        default="60", parse=float, empty_is_unset=False)
    cleanup_grace_seconds: float = _setting(
        "GLUE_CLEANUP_GRACE_SECONDS", TUNING, "the cleaner: how long a new job is left to the cleaners (before a "
        "request may help with it)", default="10", parse=float, empty_is_unset=False)
    cleanup_help_interval: float = _setting(
        "GLUE_CLEANUP_HELP_INTERVAL", TUNING, "the cleaner: how often (seconds) a request helps with expired jobs",
        default="30", parse=float, empty_is_unset=False)

    # ------------------------------------------------------------------------------ for tests
    clock_offset_file: str | None = _setting(
        "GLUE_CLOCK_OFFSET_FILE", TESTS, "a file holding seconds added to the server's clock (read at each "
        "`clock.now()`): tests expire leases without sleeping")
    fault_crash_at: str = _setting(
        "GLUE_FAULT_CRASH_AT", TESTS, "the server exits (status 137, as if killed) at this named fault point",
        default="", empty_is_unset=False)
    fault_stop_at: str = _setting(
        "GLUE_FAULT_STOP_AT", TESTS, "the server stops itself (SIGSTOP) once at this named fault point",
        default="", empty_is_unset=False)
    crawl_queue: str = _setting(
        "GLUE_CRAWL_QUEUE", TESTS, "the queue StartCrawler puts crawl runs on and the crawl workers poll: "
        "a test's own server and worker use one of their own", default="crawl-queue")

    # ------------------------------------------------------------------------------ set by the platform
    lambda_function_name: str | None = _setting(
        "AWS_LAMBDA_FUNCTION_NAME", PLATFORM, "set by AWS Lambda: deployed, so authentication is always on, "
        "there is no default warehouse and secrets are unwrapped with KMS only")
    proxy: str | None = _setting(
        ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"), PLATFORM,
        "a proxy botocore is to use: then the store sends every DynamoDB call through botocore")

    def __init__(self, **values: Any) -> None:
        """Each field from ``values``, else its default; a name that is no field is a TypeError."""
        unknown = values.keys() - _SPECS.keys()
        if unknown:
            raise TypeError(f"no such setting: {', '.join(sorted(unknown))}")
        for name, spec in _SPECS.items():
            object.__setattr__(self, name, values[name] if name in values else spec.read({}))

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"settings are frozen: use settings.replace({name}=...) in tests")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("settings are frozen")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Settings(" + ", ".join(f"{name}={value!r}" for name, value in vars(self).items()) + ")"

    @property
    def on_lambda(self) -> bool:
        """Whether the process runs as a Lambda function (the deployed service)."""
        return bool(self.lambda_function_name)


_SPECS: dict[str, Setting] = {name: value for name, value in vars(Settings).items() if isinstance(value, Setting)}


def specs() -> dict[str, Setting]:
    """Each field of :class:`Settings` with how it is read and documented, in declaration order."""
    return dict(_SPECS)


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The settings ``environ`` gives (pure: ``current()`` is ``from_environ(os.environ)``)."""
    return Settings(**{name: spec.read(environ) for name, spec in _SPECS.items()})


_current: Settings | None = None


def current() -> Settings:
    """The process's settings, read from the environment on first use and kept."""
    return _current if _current is not None else _load()


def _load() -> Settings:
    global _current
    _current = from_environ(os.environ)
    return _current


@contextmanager
def replace(**changes: Any) -> Iterator[Settings]:
    """For tests: ``current()`` with ``changes`` (field names, typed values) inside the block.

    Reaches what is looked up at use; a module constant taken at import keeps its value."""
    global _current
    before = current()
    _current = Settings(**{**vars(before), **changes})
    try:
        yield _current
    finally:
        _current = before
