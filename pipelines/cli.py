"""``python -m pipelines {sample,register,stats,read}``: one CLI, ``--help`` on each subcommand.

Progress goes to stderr, the summary to stdout (``--json`` for a machine-readable one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any, Optional, Sequence

EPILOG = ("Catalog endpoint and region default to AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL and "
          "AWS_REGION / AWS_DEFAULT_REGION; credentials come from the usual AWS environment. "
          "Under spark-submit the cluster's master is kept unless --master is given.")


def _common(parser: argparse.ArgumentParser, spark: bool = True) -> None:
    group = parser.add_argument_group("catalog and Spark")
    group.add_argument("--endpoint-url", help="Glue endpoint (default: $AWS_ENDPOINT_URL_GLUE or $AWS_ENDPOINT_URL; "
                                              "none = AWS)")
    group.add_argument("--lakeformation-endpoint-url",
                       help="Lake Formation endpoint (default: $AWS_ENDPOINT_URL_LAKEFORMATION, else --endpoint-url)")
    group.add_argument("--region", help="region (default: $AWS_REGION / $AWS_DEFAULT_REGION, else us-east-1)")
    group.add_argument("--catalog-id", help="CatalogId (default: the caller's account)")
    if spark:
        group.add_argument("--master", help="Spark master (default local[*], or what spark-submit set)")
        group.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                           help="extra Spark configuration, repeatable")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipelines", description="Spark data pipelines for the Glue Data Catalog: sample data, register, column statistics, pruned reads.", epilog=EPILOG)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{sample,register,stats,read}")

    sample = commands.add_parser("sample", help="write a sample Hive-style dataset (Parquet, CSV, JSON)",
                                 description="Write OUT/sales (Parquet), OUT/sales_csv and OUT/sales_json: "
                                             "country=../year=../month=MM/part-0001.<ext>, the same rows in each.")
    sample.add_argument("out", help="directory to write into")
    sample.add_argument("--name", default="sales", help="dataset folder name (default sales)")
    sample.add_argument("--formats", default="parquet,csv,json", help="comma list (default parquet,csv,json)")
    sample.add_argument("--countries", default="US,FR,DE,JP")
    sample.add_argument("--years", default="2023,2024")
    sample.add_argument("--months", type=int, default=12, help="months 1..N per year (default 12)")
    sample.add_argument("--files-per-partition", type=int, default=1)
    sample.add_argument("--seed", type=int, default=7)
    sample.add_argument("--json", action="store_true", help="print the summary as JSON")

    register = commands.add_parser(
        "register", help="register a partitioned dataset: table, schema, partitions",
        description="List a Hive-style dataset, infer schema and partition-key types, create or update the "
                    "table (a schema change archives a version), and add the partitions not yet registered "
                    "with BatchCreatePartition from the Spark executors.", epilog=EPILOG)
    register.add_argument("path", help="dataset root: a local path or file:// URI (s3a:// etc. where the cluster has it)")
    register.add_argument("--database", required=True)
    register.add_argument("--table", required=True)
    register.add_argument("--format", choices=["parquet", "csv", "json"], help="default: from the file extensions")
    register.add_argument("--csv-sep", default=",", help="CSV separator (default ,)")
    register.add_argument("--csv-no-header", action="store_true", help="CSV files have no header line")
    register.add_argument("--no-create-database", action="store_true", help="fail if the database is missing")
    register.add_argument("--prune", action="store_true", help="delete partitions whose folders are gone")
    register.add_argument("--index", action="append", default=[], metavar="NAME:KEY1,KEY2",
                          help="partition index to create (repeatable, at most 3)")
    register.add_argument("--schema-change", choices=["merge", "replace", "fail"], default="merge",
                          help="merge: keep known columns, add new ones (default); replace: the scanned schema; "
                               "fail: refuse a change")
    register.add_argument("--schema-sample", type=int, default=16,
                          help="files (spread over the partitions) to infer the schema from; 0 = all (default 16)")
    register.add_argument("--segments", type=int, default=4,
                          help="GetPartitions Segments read in parallel to find registered partitions (1-10, default 4)")
    register.add_argument("--batch-size", type=int, default=100, help="partitions per BatchCreatePartition (max 100)")
    register.add_argument("--requests-per-task", type=int, default=4, help="concurrent catalog calls per Spark task")
    register.add_argument("--partitions-per-task", type=int, default=2000, help="partitions per Spark task (at most)")
    _common(register)

    stats = commands.add_parser(
        "stats", help="compute and write Glue column statistics",
        description="Profile a catalog table with Spark aggregations (nulls, distinct values, min/max, average "
                    "and maximum length, true/false counts) and write UpdateColumnStatisticsForTable, or "
                    "ForPartition for each chosen partition.", epilog=EPILOG)
    stats.add_argument("--database", required=True)
    stats.add_argument("--table", required=True)
    stats.add_argument("--partition", action="append", default=[], metavar="KEY=VALUE[,KEY=VALUE]",
                       help="profile these partitions, each on its own (a subset of keys selects every match; repeatable)")
    stats.add_argument("--where", default="", help="a GetPartitions expression choosing the partitions to profile")
    stats.add_argument("--all-partitions", action="store_true", help="statistics for every partition")
    stats.add_argument("--columns", default="", help="comma list of columns (default: all with a statistics type)")
    stats.add_argument("--approx", action="store_true",
                       help="approximate distinct counts (HyperLogLog++ approx_count_distinct) instead of exact")
    stats.add_argument("--rsd", type=float, default=0.05, help="relative standard deviation for --approx (default 0.05)")
    stats.add_argument("--segments", type=int, default=4, help="GetPartitions Segments in parallel (1-10)")
    stats.add_argument("--dry-run", action="store_true", help="compute and print, write nothing")
    _common(stats)

    read = commands.add_parser(
        "read", help="read a catalog table with partition pruning by the catalog",
        description="Load a table: the filter becomes a GetPartitions Expression (Segments fetched in parallel) "
                    "and only the matching partitions are read. Governed tables: the objects of "
                    "GetTableObjects at --transaction-id or --as-of (the filter is the PartitionPredicate).",
        epilog=EPILOG)
    read.add_argument("--database", required=True)
    read.add_argument("--table", required=True)
    read.add_argument("--filter", default="", help="partition filter, e.g. \"country = 'US' AND year >= 2024\"")
    read.add_argument("--segments", type=int, default=4, help="TotalSegments for GetPartitions (1-10, default 4)")
    read.add_argument("--transaction-id", help="governed tables: read at this transaction")
    read.add_argument("--as-of", help="governed tables: read as of this ISO time (e.g. 2024-05-01T12:00:00Z)")
    action = read.add_mutually_exclusive_group()
    action.add_argument("--show", type=int, default=20, metavar="N", help="print N rows (default 20)")
    action.add_argument("--count", action="store_true", help="count the rows")
    action.add_argument("--output", metavar="PATH", help="write the rows to PATH")
    read.add_argument("--output-format", default="parquet", choices=["parquet", "csv", "json"])
    read.add_argument("--mode", default="errorifexists", choices=["errorifexists", "overwrite", "append", "ignore"])
    _common(read)
    return parser


def _config(args: argparse.Namespace):
    from pipelines.catalog import CatalogConfig
    return CatalogConfig.from_env(args.endpoint_url, args.region, args.lakeformation_endpoint_url, args.catalog_id)


def _spark(args: argparse.Namespace):
    from pipelines.runtime import spark_session
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--conf {item!r}: expected KEY=VALUE")
        conf[key] = value
    return spark_session(args.master, app_name=f"pipelines-{args.command}", conf=conf)


def _print(args: argparse.Namespace, text: str, data: dict[str, Any]) -> None:
    print(json.dumps(data, default=str, indent=2) if args.json else text)


def run_sample(args: argparse.Namespace) -> int:
    from pipelines import sample
    result = sample.generate(args.out, name=args.name, formats=[f for f in args.formats.split(",") if f],
                             countries=args.countries.split(","), years=[int(y) for y in args.years.split(",")],
                             months=range(1, args.months + 1), files_per_partition=args.files_per_partition,
                             seed=args.seed)
    text = "\n".join([f"sample: {result.partitions} partitions, {result.files} files, {result.rows:,} rows per format"]
                     + [f"  {fmt:8} {root}" for fmt, root in result.roots.items()])
    _print(args, text, vars(result))
    return 0


def run_register(args: argparse.Namespace) -> int:
    from pipelines.register import RegisterError, RegisterOptions, parse_index, register
    options = RegisterOptions(
        root=args.path, database=args.database, table=args.table, fmt=args.format,
        csv_options={"header": "false" if args.csv_no_header else "true", "sep": args.csv_sep},
        create_database=not args.no_create_database, prune=args.prune,
        indexes=[parse_index(i) for i in args.index], segments=args.segments, batch_size=args.batch_size,
        requests_per_task=args.requests_per_task, partitions_per_task=args.partitions_per_task,
        schema_sample=args.schema_sample, schema_change=args.schema_change, quiet=args.quiet)
    try:
        summary = register(_spark(args), _config(args), options)
    except RegisterError as error:
        print(f"register: {error}", file=sys.stderr)
        return 2
    _print(args, summary.text(), summary.as_dict())
    return 1 if summary.failed else 0


def run_stats(args: argparse.Namespace) -> int:
    from pipelines.stats import compute_statistics
    summary = compute_statistics(
        _spark(args), _config(args), args.database, args.table, partitions=args.partition, where=args.where,
        per_partition=args.all_partitions, columns=[c for c in args.columns.split(",") if c],
        approx=args.approx, rsd=args.rsd, segments=args.segments, write=not args.dry_run)
    data = {k: v for k, v in vars(summary).items() if k != "statistics"}
    data["statistics"] = {",".join(values) or "(table)": entries for values, entries in summary.statistics.items()}
    _print(args, summary.text(), data)
    return 1 if summary.errors else 0


def run_read(args: argparse.Namespace) -> int:
    import time
    from pipelines.read import load_table
    as_of = dt.datetime.fromisoformat(args.as_of.replace("Z", "+00:00")) if args.as_of else None
    spark = _spark(args)
    started = time.perf_counter()
    loaded = load_table(spark, _config(args), args.database, args.table, filter=args.filter,
                        segments=args.segments, transaction_id=args.transaction_id, as_of=as_of)
    result: dict[str, Any] = {"partitions": len(loaded.partitions), "files_opened": len(loaded.files),
                              "governed": loaded.governed}
    if args.count:
        result["rows"] = loaded.df.count()
    elif args.output:
        loaded.df.write.mode(args.mode).format(args.output_format).save(args.output)
        result["output"] = args.output
    else:
        loaded.df.show(args.show, truncate=False)
    result["seconds"] = {**loaded.seconds, "total": time.perf_counter() - started}
    what = "governed objects" if loaded.governed else "partitions"
    text = (f"read {args.database}.{args.table}" + (f" where {args.filter}" if args.filter else "")
            + f": {len(loaded.partitions):,} {what}, {len(loaded.files):,} files opened"
            + (f", {result['rows']:,} rows" if "rows" in result else "")
            + (f", written to {args.output}" if args.output else "")
            + f"; catalog {loaded.seconds['catalog']:.2f} s, total {result['seconds']['total']:.2f} s")
    _print(args, text, result)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    return {"sample": run_sample, "register": run_register, "stats": run_stats, "read": run_read}[args.command](args)
