"""``python -m pipelines {sample,register,stats,read}``: one CLI, ``--help`` on each subcommand.

Progress goes to stderr, the summary to stdout (``--json`` for a machine-readable one).

Exit codes: 0 done; 1 the run failed (catalog unreachable or refusing calls, partitions that
could not be added, statistics not written, Spark errors); 2 the command line is wrong (as
argparse's own errors): a malformed value, or a path, database, table, column or partition key
that does not exist. Every error is one line on stderr, and the command line is checked before
Spark starts (``pipelines.checks``).
"""

from __future__ import annotations

import time



def _process_age() -> float:
    """Seconds since this process started (Linux: /proc), so the wall time includes Python's
    own start; elsewhere 0 (the clock then starts at this import)."""
    try:
        with open("/proc/self/stat") as stat:
            started_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        import os
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


# Wall time counts from the process start: imports, Spark start and stop included.
STARTED = time.perf_counter() - _process_age()

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from typing import Any, NoReturn, Optional, Sequence  # noqa: E402

from pipelines import checks  # noqa: E402
from pipelines.checks import CatalogUnavailable, UsageError  # noqa: E402

EPILOG = ("Catalog endpoint and region default to AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL and "
          "AWS_REGION / AWS_DEFAULT_REGION; credentials come from the usual AWS environment. "
          "Under spark-submit the cluster's master is kept unless --master is given. "
          "Exit codes: 0 done, 1 the run failed (catalog unreachable, calls refused, partitions "
          "not added), 2 the command line is wrong (checked before Spark starts).")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and every default in the help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (--help lists the options)\n")


class DefaultsFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help unless it names its default already or has
    none worth showing (None, False, an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("default" in text or not action.option_strings or default in (None, False, "", [])
                or default is argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


def _common(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("catalog and Spark")
    group.add_argument("--endpoint-url", help="Glue endpoint URL (default: $AWS_ENDPOINT_URL_GLUE, else "
                                              "$AWS_ENDPOINT_URL; neither set: AWS Glue)")
    group.add_argument("--lakeformation-endpoint-url",
                       help="Lake Formation endpoint URL (default: $AWS_ENDPOINT_URL_LAKEFORMATION, else the Glue one)")
    group.add_argument("--region", help="region (default: $AWS_REGION, else $AWS_DEFAULT_REGION, else us-east-1)")
    group.add_argument("--catalog-id", help="CatalogId (default: the caller's account)")
    group.add_argument("--master", help="Spark master (default: local[*], or what spark-submit set)")
    group.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                       help="extra Spark configuration, repeatable (default: none)")
    output = parser.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print the summary as JSON (default: text)")
    output.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    output.add_argument("--verbose", "-v", action="store_true",
                        help="Spark's own log (WARN and up) and console progress bar, and a traceback "
                             "on an unexpected error (default: Spark logs errors only)")


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m pipelines`` parser with its four subcommands."""
    parser = Parser(prog="python -m pipelines", epilog=EPILOG,
                    description="Spark data pipelines for the Glue Data Catalog: sample data, register, "
                                "column statistics, pruned reads.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{sample,register,stats,read}",
                                     parser_class=Parser)

    sample = commands.add_parser("sample", help="write a sample Hive-style dataset (Parquet, CSV, JSON)",
                                 description="Write OUT/sales (Parquet), OUT/sales_csv and OUT/sales_json: "
                                             "country=../year=../month=MM/part-0001.<ext>, the same rows in "
                                             "each (pyarrow, no Spark).", epilog=EPILOG)
    sample.add_argument("out", metavar="OUT", help="directory to write into (created if missing)")
    sample.add_argument("--name", default="sales", help="dataset folder name")
    sample.add_argument("--formats", default="parquet,csv,json", help="comma list of parquet, csv, json")
    sample.add_argument("--countries", default="US,FR,DE,JP", help="comma list: values of the country key")
    sample.add_argument("--years", default="2023,2024", help="comma list: values of the year key")
    sample.add_argument("--months", type=checks.int_range(1, 12), default=12, help="months 1..N per year (1-12)")
    sample.add_argument("--files-per-partition", type=checks.int_range(1, 1000), default=1,
                        help="data files in each partition folder")
    sample.add_argument("--seed", type=int, default=7, help="random seed (the same seed writes the same rows)")
    sample.add_argument("--json", action="store_true", help="print the summary as JSON (default: text)")

    register = commands.add_parser(
        "register", help="register a partitioned dataset: table, schema, partitions",
        description="List a Hive-style dataset, infer schema and partition-key types, create or update the "
                    "table (a schema change archives a version), and add the partitions not yet registered "
                    "with BatchCreatePartition from the Spark executors.", epilog=EPILOG)
    register.add_argument("path", metavar="PATH", help="dataset root holding key=value folders: a local path or "
                                                       "file:// URI (s3a:// etc. where the cluster has it)")
    register.add_argument("--database", required=True, help="database (created if missing, unless "
                                                             "--no-create-database)")
    register.add_argument("--table", required=True, help="table to create or update")
    register.add_argument("--format", choices=["parquet", "csv", "json"],
                          help="file format (default: the most common file extension)")
    register.add_argument("--csv-sep", default=",", help="CSV separator")
    register.add_argument("--csv-no-header", action="store_true", help="CSV files have no header line")
    register.add_argument("--no-create-database", action="store_true", help="fail if the database is missing")
    register.add_argument("--prune", action="store_true", help="delete partitions whose folders are gone")
    register.add_argument("--index", action="append", default=[], metavar="NAME:KEY1,KEY2",
                          help="partition index to create, keys among the partition keys (repeatable, at most "
                               "3; default: none)")
    register.add_argument("--schema-change", choices=["merge", "replace", "fail"], default="merge",
                          help="merge: keep known columns, add new ones; replace: the scanned schema; "
                               "fail: refuse a change")
    register.add_argument("--schema-sample", type=checks.int_range(0), default=16,
                          help="files (spread over the partitions) to infer the schema from; 0 = all")
    register.add_argument("--segments", type=checks.int_range(1, 10), default=4,
                          help="GetPartitions Segments read in parallel to find registered partitions (1-10)")
    register.add_argument("--batch-size", type=checks.int_range(1, 100), default=100,
                          help="partitions per BatchCreatePartition (1-100)")
    register.add_argument("--requests-per-task", type=checks.int_range(1, 64), default=4,
                          help="concurrent catalog calls per Spark task (1-64)")
    register.add_argument("--partitions-per-task", type=checks.int_range(1), default=2000,
                          help="partitions per Spark task (at most)")
    register.add_argument("--driver-max", type=checks.int_range(0), default=500,
                          help="this many new partitions or fewer are sent from the driver, more from the Spark "
                               "executors (0: always the executors)")
    _common(register)

    stats = commands.add_parser(
        "stats", help="compute and write Glue column statistics",
        description="Profile a catalog table with Spark aggregations (nulls, distinct values, min/max, average "
                    "and maximum length, true/false counts) and write them with UpdateColumnStatisticsForTable, "
                    "or ForPartition for each chosen partition. By default: table-level statistics of every "
                    "column with a Glue statistics type (partition keys included), exact distinct counts, "
                    "written to the catalog.", epilog=EPILOG)
    stats.add_argument("--database", required=True, help="database of the table")
    stats.add_argument("--table", required=True, help="table to profile")
    stats.add_argument("--partition", action="append", default=[], metavar="KEY=VALUE[,KEY=VALUE]",
                       help="profile these partitions, each on its own (a subset of keys selects every match; "
                            "repeatable; default: the whole table)")
    stats.add_argument("--where", default="", metavar="EXPRESSION",
                       help="a GetPartitions expression choosing the partitions to profile, each on its own "
                            "(default: the whole table)")
    stats.add_argument("--all-partitions", action="store_true", help="statistics for every partition")
    stats.add_argument("--columns", default="", help="comma list of columns (default: all with a statistics type)")
    stats.add_argument("--approx", action="store_true",
                       help="approximate distinct counts (HyperLogLog++ approx_count_distinct; default: exact)")
    stats.add_argument("--rsd", type=_rsd, default=0.05,
                       help="relative standard deviation for --approx (above 0, at most 0.39)")
    stats.add_argument("--segments", type=checks.int_range(1, 10), default=4,
                       help="GetPartitions Segments in parallel (1-10)")
    stats.add_argument("--dry-run", action="store_true", help="compute and print, write nothing")
    _common(stats)

    read = commands.add_parser(
        "read", help="read a catalog table with partition pruning by the catalog",
        description="Load a table: the filter becomes a GetPartitions Expression (Segments fetched in parallel) "
                    "and only the matching partitions are read. Governed tables: the objects of "
                    "GetTableObjects at --transaction-id or --as-of (the filter is the PartitionPredicate). "
                    "By default: every partition, the first 20 rows printed.", epilog=EPILOG)
    read.add_argument("--database", required=True, help="database of the table")
    read.add_argument("--table", required=True, help="table to read")
    read.add_argument("--filter", default="", metavar="EXPRESSION",
                      help="partition filter on the partition keys, e.g. \"country = 'US' AND year >= 2024\" "
                           "(default: every partition)")
    read.add_argument("--segments", type=checks.int_range(1, 10), default=4, help="TotalSegments for GetPartitions (1-10)")
    read.add_argument("--transaction-id", help="governed tables: read at this transaction (default: latest commit)")
    read.add_argument("--as-of", metavar="TIME",
                      help="governed tables: read as of this ISO time, e.g. 2024-05-01T12:00:00Z (default: now)")
    action = read.add_mutually_exclusive_group()
    action.add_argument("--show", type=checks.int_range(0), default=20, metavar="N", help="print N rows")
    action.add_argument("--count", action="store_true", help="count the rows instead of printing them")
    action.add_argument("--output", metavar="PATH", help="write the rows to PATH instead of printing them")
    read.add_argument("--output-format", default="parquet", choices=["parquet", "csv", "json"],
                      help="format for --output")
    read.add_argument("--mode", default="errorifexists", choices=["errorifexists", "overwrite", "append", "ignore"],
                      help="what --output does when PATH exists")
    _common(read)
    return parser


def _rsd(text: str) -> float:
    # Spark's HyperLogLog++ needs at least 4 index bits: rsd at most 0.39.
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not 0 < value <= 0.39:
        raise ValueError(f"{value} is out of range: above 0, at most 0.39")
    return value


_rsd.__name__ = "rsd"


def _config(args: argparse.Namespace) -> Any:
    from pipelines.catalog import CatalogConfig
    config = CatalogConfig.from_env(args.endpoint_url, args.region, args.lakeformation_endpoint_url, args.catalog_id)
    checks.check_endpoints(config, args.endpoint_url, args.lakeformation_endpoint_url)
    return config


def _say(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        # One write: print() writes the text and its newline apart, and Spark starts on a
        # thread of its own, so two lines could interleave.
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


class SparkRun:
    """Spark for one command: started on first use (``get``) or in the background while the
    catalog is asked (``start_in_background``), stopped when this run started it; both timed
    and announced on stderr."""

    def __init__(self, args: argparse.Namespace, conf: dict[str, str]) -> None:
        self.args, self.conf = args, conf
        self.session: Any = None
        self.owned = False
        self.seconds: dict[str, float] = {"spark_start": 0.0, "spark_stop": 0.0}
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None

    def __enter__(self) -> "SparkRun":
        return self

    def _start(self) -> None:
        with self._lock:
            if self.session is not None:
                return
            start = time.perf_counter()
            from pyspark import SparkContext
            # Not "the active session": that is per thread, and this may run on a helper thread.
            self.owned = SparkContext._active_spark_context is None
            if self.owned:
                _say(self.args, f"starting Spark ({self.args.master or 'local[*]'}) ...")
            from pipelines.runtime import spark_session
            self.session = spark_session(self.args.master, app_name=f"pipelines-{self.args.command}",
                                         conf=self.conf, verbose=self.args.verbose,
                                         jvm_log=None if self.args.verbose else getattr(self.args, "spark_log", None))
            self.seconds["spark_start"] = time.perf_counter() - start
            if self.owned:
                _say(self.args, f"  Spark ready in {self.seconds['spark_start']:.1f} s")

    def _start_capturing(self) -> None:
        try:
            self._start()
        except BaseException as error:  # noqa: BLE001  re-raised by get() on the main thread
            self._error = error

    def start_in_background(self) -> None:
        """Start Spark on a thread; ``get`` waits for it."""
        self._thread = threading.Thread(target=self._start_capturing, name="spark-start", daemon=True)
        self._thread.start()

    def get(self) -> Any:
        """The SparkSession, started now if it is not yet."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error
        self._start()
        return self.session

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._thread.join()
        start = time.perf_counter()
        from pipelines.runtime import remove_temp_dirs
        if self.session is not None and self.owned:
            _say(self.args, "stopping Spark ...")
            self.session.stop()
        remove_temp_dirs()
        self.seconds["spark_stop"] = time.perf_counter() - start

    def times(self) -> dict[str, float]:
        """Spark start and stop, and the wall time since the CLI was imported."""
        return {**self.seconds, "total": time.perf_counter() - STARTED}


def _times_line(seconds: dict[str, float]) -> str:
    return (f"total {seconds['total']:.2f} s (Spark start {seconds.get('spark_start', 0):.2f} s, Spark stop "
            f"{seconds.get('spark_stop', 0):.2f} s)")


def _print(args: argparse.Namespace, text: str, data: dict[str, Any]) -> None:
    print(json.dumps(data, default=str, indent=2) if args.json else text)


def run_sample(args: argparse.Namespace) -> int:
    """``sample``: write the sample datasets (no Spark)."""
    import os
    formats = checks.parse_formats(args.formats)
    countries = checks.parse_list(args.countries, "--countries")
    years = checks.parse_list(args.years, "--years", int)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"OUT {args.out}: a file, expected a directory")
    from pipelines import sample
    try:
        result = sample.generate(args.out, name=args.name, formats=formats, countries=countries, years=years,
                                 months=range(1, args.months + 1), files_per_partition=args.files_per_partition,
                                 seed=args.seed)
    except OSError as error:
        raise UsageError(f"OUT {args.out}: cannot write there: {error.strerror or error}") from None
    text = "\n".join([f"sample: {result.partitions} partitions, {result.files} files, {result.rows:,} rows per format"]
                     + [f"  {fmt:8} {root}" for fmt, root in result.roots.items()])
    _print(args, text, vars(result))
    return 0


def run_register(args: argparse.Namespace) -> int:
    """``register``: check the path, the index specs and the catalog, then run on Spark."""
    from collections import Counter
    indexes = [checks.parse_index(i) for i in args.index]
    conf = checks.parse_conf(args.conf)
    folder_keys = checks.dataset_keys(args.path)
    config = _config(args)
    from pipelines import catalog
    before = Counter(catalog.calls_made)
    probe = checks.Probe(config, args.endpoint_url)
    existing = None
    if probe.database_exists(args.database):
        existing = probe.table(args.database, args.table, must_exist=False)
    elif args.no_create_database:
        raise UsageError(f"--database {args.database}: no such database (and --no-create-database was given)")
    keys = folder_keys
    if existing is not None:
        table_keys = tuple(k["Name"] for k in existing.get("PartitionKeys") or [])
        if folder_keys is not None and [k.lower() for k in folder_keys] != [k.lower() for k in table_keys]:
            raise UsageError(f"PATH {args.path}: its folders have partition keys {', '.join(folder_keys)} but table "
                             f"{args.database}.{args.table} has {', '.join(table_keys) or 'none'}")
        keys = table_keys
    if keys is not None:
        checks.check_indexes(indexes, keys)
    preflight = catalog.calls_made - before

    from pipelines.register import RegisterError, RegisterOptions, register
    options = RegisterOptions(
        root=args.path, database=args.database, table=args.table, fmt=args.format,
        csv_options={"header": "false" if args.csv_no_header else "true", "sep": args.csv_sep},
        create_database=not args.no_create_database, prune=args.prune,
        indexes=indexes, segments=args.segments, batch_size=args.batch_size,
        requests_per_task=args.requests_per_task, partitions_per_task=args.partitions_per_task,
        schema_sample=args.schema_sample, schema_change=args.schema_change, driver_max=args.driver_max,
        quiet=args.quiet)
    with SparkRun(args, conf) as run:
        try:
            summary = register(run.get, config, options)
        except RegisterError as error:
            raise UsageError(str(error)) from None
    summary.count_calls(preflight)
    summary.seconds.update(run.times())
    _print(args, summary.text(), summary.as_dict())
    return 1 if summary.failed else 0


def _table_for(args: argparse.Namespace, config: Any) -> dict[str, Any]:
    table = checks.Probe(config, args.endpoint_url).table(args.database, args.table)
    assert table is not None
    return table


def run_stats(args: argparse.Namespace) -> int:
    """``stats``: check the table, the partition specs, --where and --columns, then run on Spark."""
    conf = checks.parse_conf(args.conf)
    config = _config(args)
    table = _table_for(args, config)
    keys = table.get("PartitionKeys") or []
    if (args.partition or args.where or args.all_partitions) and not keys:
        raise UsageError(f"--partition/--where/--all-partitions: table {args.database}.{args.table} has no "
                         "partition keys")
    for spec in args.partition:
        checks.check_expression(checks.partition_expression(spec, keys), keys, "--partition", shown=repr(spec))
    checks.check_expression(args.where, keys, "--where")
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    known = [c["Name"] for c in (table.get("StorageDescriptor") or {}).get("Columns") or []] + [k["Name"] for k in keys]
    missing = [c for c in columns if c.lower() not in {k.lower() for k in known}]
    if missing:
        raise UsageError(f"--columns: no column {', '.join(missing)} in {args.database}.{args.table} "
                         f"(columns: {', '.join(known)})")

    from pipelines.stats import compute_statistics
    with SparkRun(args, conf) as run:
        run.start_in_background()
        summary = compute_statistics(
            run.get, config, args.database, args.table, partitions=args.partition, where=args.where,
            per_partition=args.all_partitions, columns=columns, approx=args.approx, rsd=args.rsd,
            segments=args.segments, write=not args.dry_run, quiet=args.quiet)
    summary.seconds.update(run.times())
    data = {k: v for k, v in vars(summary).items() if k != "statistics"}
    data["statistics"] = {",".join(values) or "(table)": entries for values, entries in summary.statistics.items()}
    _print(args, summary.text(), data)
    return 1 if summary.errors else 0


def run_read(args: argparse.Namespace) -> int:
    """``read``: check the table, the filter, --as-of and --output, then read on Spark."""
    conf = checks.parse_conf(args.conf)
    as_of = checks.parse_as_of(args.as_of)
    checks.check_output(args.output, args.mode)
    config = _config(args)
    table = _table_for(args, config)
    governed = (table.get("TableType") or "").upper() == "GOVERNED"
    if (args.transaction_id or as_of) and not governed:
        raise UsageError(f"--transaction-id/--as-of: table {args.database}.{args.table} is not governed "
                         "(TableType GOVERNED); they apply to governed tables only")
    if args.transaction_id and as_of:
        raise UsageError("--transaction-id and --as-of: give one of them")
    checks.check_expression(args.filter, table.get("PartitionKeys") or [], "--filter", predicate=governed)

    from pipelines.read import load_table
    with SparkRun(args, conf) as run:
        run.start_in_background()
        _say(args, f"finding the {'governed objects' if governed else 'partitions'} of {args.database}.{args.table}"
                   + (f" where {args.filter}" if args.filter else "") + " ...")
        loaded = load_table(run.get, config, args.database, args.table, filter=args.filter,
                            segments=args.segments, transaction_id=args.transaction_id, as_of=as_of)
        what = "governed objects" if loaded.governed else "partitions"
        _say(args, f"  {len(loaded.partitions):,} {what} (catalog {loaded.seconds['catalog']:.2f} s), "
                   f"{len(loaded.files):,} files")
        result: dict[str, Any] = {"partitions": len(loaded.partitions), "files_opened": len(loaded.files),
                                  "governed": loaded.governed}
        if args.count:
            _say(args, "counting rows ...")
            result["rows"] = loaded.df.count()
        elif args.output:
            _say(args, f"writing {args.output_format} to {args.output} ...")
            loaded.df.write.mode(args.mode).format(args.output_format).save(args.output)
            result["output"] = args.output
        else:
            _say(args, f"reading the first {args.show} rows ...")
            loaded.df.show(args.show, truncate=False)
    result["seconds"] = {**loaded.seconds, **run.times()}
    text = (f"read {args.database}.{args.table}" + (f" where {args.filter}" if args.filter else "")
            + f": {len(loaded.partitions):,} {what}, {len(loaded.files):,} files opened"
            + (f", {result['rows']:,} rows" if "rows" in result else "")
            + (f", written to {args.output}" if args.output else "")
            + f"; catalog {loaded.seconds['catalog']:.2f} s, {_times_line(result['seconds'])}")
    _print(args, text, result)
    return 0


# pipelines/requirements.txt: not installed by `make run`, only by `make pipelines-install`.
REQUIREMENTS = {"pyspark", "py4j", "pyarrow", "boto3", "botocore"}
INSTALL_HINT = ("the pipeline requirements are not installed; run `make pipelines-install` "
                "(or `make pipelines ARGS=...`, which installs them on first use)")

COMMANDS = {"sample": run_sample, "register": run_register, "stats": run_stats, "read": run_read}


def _one_line(error: BaseException) -> str:
    """The first line of an error (Java exceptions carry their stack trace in the text)."""
    whole = str(error)
    text = whole.strip().splitlines()
    first = text[0] if text else type(error).__name__
    # A Spark job that failed on a file: name the file (and why), not "error calling o312.count".
    failed = re.search(r"\[(FAILED_READ_FILE[.\w]*)\] Encountered error while reading file (\S+?)\.?(?:\s|$)", whole)
    if failed:
        cause = re.search(r"Caused by: [\w.$]+: ([^\n]+)", whole[failed.end():])
        first = f"Spark could not read {failed.group(2)} ({failed.group(1)}" + (f": {cause.group(1).strip()})" if cause else ")")
    return first if len(first) <= 400 else first[:400] + " ..."


def spark_log_path() -> tuple[str, bool]:
    """Where the JVM's output goes without --verbose, and whether the user chose it
    (``PIPELINES_SPARK_LOG``: kept; else a file of this run in the temp directory, removed
    unless the run failed)."""
    import os
    import tempfile
    chosen = os.environ.get("PIPELINES_SPARK_LOG")
    if chosen:
        return os.path.abspath(chosen), True
    return os.path.join(tempfile.gettempdir(), f"pipelines-spark-{os.getpid()}.log"), False


def _discard(path: str, chosen: bool) -> None:
    """Remove this run's JVM log, unless the user chose its path."""
    import os
    if not chosen:
        try:
            os.remove(path)
        except OSError:
            pass


def _spark_log_note(path: str, chosen: bool) -> str:
    """``Spark's log: PATH; `` when the JVM wrote something there (the file is kept for it);
    an empty log is removed."""
    import os
    try:
        written = os.path.getsize(path) > 0
    except OSError:
        return ""
    if not written:
        _discard(path, chosen)
        return ""
    return f"Spark's log: {path}; "


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one subcommand; returns the exit code (0 done, 1 failed, 2 wrong command line).

    Without --verbose the JVM's own output (Java's start-up warning, Spark's error log) goes to
    a log file, named in the one-line error of a failed run, so a terminal shows only the CLI's
    lines."""
    args = build_parser().parse_args(argv)
    prog = f"python -m pipelines {args.command}"
    args.spark_log, chosen = spark_log_path()
    failed = False
    try:
        return COMMANDS[args.command](args)
    except UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    except CatalogUnavailable as error:
        print(f"{prog}: failed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in REQUIREMENTS:
            raise
        print(f"{prog}: failed: {error}: {INSTALL_HINT}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001  one line, not a traceback; --verbose shows it
        if getattr(args, "verbose", False):
            raise
        from pipelines.catalog import error_code
        failed = True
        note = _spark_log_note(args.spark_log, chosen)
        print(f"{prog}: failed: {error_code(error)}: {_one_line(error)} ({note}--verbose shows the traceback)",
              file=sys.stderr)
        return 1
    finally:
        if not failed:
            _discard(args.spark_log, chosen)
