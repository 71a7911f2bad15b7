"""The crawler engine on 10,000 partition folders: wall time, partitions per second, and the share
of the run spent in the catalog's writes, in one run.

Writes a Hive-style lake (``dt=YYYY-MM-DD/hour=HH``, one small pyarrow Parquet file per folder,
plus a README.txt every 1,000 folders) to moto's S3 server on a local port, starts the catalog
stack (API server over DynamoDB Local), and runs ``pipelines.crawl.run_crawl`` as the crawler
worker would: a first crawl (everything new: CreateTable with its partition index, then
BatchCreatePartition 100 at a time), then a re-crawl with nothing changed (reads only), then a
CRAWL_NEW_FOLDERS_ONLY crawl after 1% more folders. The shares are of the same run's wall time.

``--spark`` adds a first crawl of the same lake (into another database) on Spark, as the worker
hands a large crawl there (``pipelines.crawl_worker.run_spark_driver``: spark-submit of
``pipelines/crawl/spark_driver.py``, ``--spark-master``, default ``local[*]``), and prints both.

Run: ``.venv/bin/python -m bench.bench_crawl [--folders 10000] [--quick] [--spark]`` (``--quick``: 500 folders).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from bench import common  # noqa: E402
from bench.common import log, make_client  # noqa: E402
from infra.local.dynamodb_local import PREEXEC, free_port  # noqa: E402
from infra.local.stack import CatalogStack, stop_process, wait_for_port  # noqa: E402
from pipelines.crawl import run_crawl  # noqa: E402

BUCKET = "bench-lake"


def folder(i: int) -> str:
    day, hour = divmod(i, 24)
    return f"events/dt=2020-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}y{day // 336}/hour={hour:02d}"


def put_lake(s3: Any, start: int, count: int) -> None:
    out = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array(range(10), pa.int64()), "name": [f"n{i}" for i in range(10)],
                             "value": [i * 0.5 for i in range(10)]}), out)
    body = out.getvalue()

    def put(i: int) -> None:
        s3.put_object(Bucket=BUCKET, Key=f"lake/{folder(i)}/part-00000.parquet", Body=body)
        if i % 1000 == 0:
            s3.put_object(Bucket=BUCKET, Key=f"lake/{folder(i)}/README.txt", Body=b"written by the bench\n")

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(put, range(start, start + count)))


def crawl(glue: Any, s3: Any, **extra: Any) -> tuple[dict[str, Any], float]:
    definition = {"Name": "bench-crawler", "DatabaseName": "bench",
                  "Targets": {"S3Targets": [{"Path": f"s3://{BUCKET}/lake"}]},
                  "SchemaChangePolicy": {"UpdateBehavior": "UPDATE_IN_DATABASE",
                                         "DeleteBehavior": "DEPRECATE_IN_DATABASE"}, **extra}
    started = time.perf_counter()
    result = run_crawl(definition, classifiers=[], glue=glue, s3=s3, should_stop=lambda: False,
                       progress=lambda _: None)
    return result, time.perf_counter() - started


def crawl_on_spark(endpoint: str, s3_endpoint: str, master: str) -> tuple[dict[str, Any], float]:
    """The first crawl again, into database ``bench_spark``, by the Spark driver the worker runs."""
    import os

    from pipelines import crawl_worker

    definition = {"Name": "bench-crawler-spark", "DatabaseName": "bench_spark",
                  "Targets": {"S3Targets": [{"Path": f"s3://{BUCKET}/lake"}]}}
    spec = {"Crawler": definition, "Classifiers": [], "Endpoint": endpoint, "Region": common.REGION,
            "KeyId": "testing", "Secret": "testing", "CrawlId": "bench"}
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                            "GLUE_CRAWL_SPARK_MASTER")}
    os.environ.update(AWS_ENDPOINT_URL_S3=s3_endpoint, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                      GLUE_CRAWL_SPARK_MASTER=master)
    try:
        started = time.perf_counter()
        result = crawl_worker.run_spark_driver(spec, lambda: False, lambda _: None,
                                               crawl_worker.spark_submit() or "spark-submit")
        return result, time.perf_counter() - started
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def report(label: str, result: dict[str, Any], wall: float) -> str:
    summary = json.loads(result["Summary"])
    seconds = summary["Seconds"]
    writes, reads = seconds.get("catalog_writes", 0.0), seconds.get("catalog_reads", 0.0)
    rate = result["PartitionsCreated"] / wall if result["PartitionsCreated"] else 0.0
    return (f"{label}: {wall:7.2f} s wall, {result['PartitionsCreated']:>6,} partitions created "
            f"({rate:,.0f}/s), files read {summary['FilesRead']:,}, skipped {result['FilesSkipped']}; "
            f"S3 listing {seconds.get('listing', 0):.2f} s ({seconds.get('listing', 0) / wall:.0%}), "
            f"classification {seconds.get('classify', 0):.2f} s ({seconds.get('classify', 0) / wall:.0%}), "
            f"catalog reads {reads:.2f} s ({reads / wall:.0%}), catalog writes {writes:.2f} s ({writes / wall:.0%})")


def start_stack(tmp: Path) -> CatalogStack:
    """The catalog stack, started before the lake is written; on a loaded machine DynamoDB Local
    may miss its start timeout, so up to three tries."""
    for attempt in range(3):
        stack = CatalogStack(log_dir=tmp / f"stack-{attempt}")
        try:
            stack.start()
            return stack
        except TimeoutError as error:
            log(f"stack did not start ({error}); again")
            stack.stop()
    raise RuntimeError("the catalog stack did not start three times")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folders", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="500 folders")
    parser.add_argument("--spark", action="store_true", help="also crawl the lake once on Spark (spark-submit)")
    parser.add_argument("--spark-master", default="local[*]", help="the Spark crawl's master (default local[*])")
    args = parser.parse_args(argv)
    folders = 500 if args.quick else args.folders
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="bench-crawl-"))
    moto = subprocess.Popen([str(REPO / ".venv" / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                            stdin=subprocess.DEVNULL, stdout=open(tmp / "moto.log", "ab"),
                            stderr=subprocess.STDOUT, preexec_fn=PREEXEC)
    try:
        wait_for_port(port, moto)
        s3 = make_client("s3", f"http://127.0.0.1:{port}", threads=32)
        s3.create_bucket(Bucket=BUCKET)
        stack = start_stack(tmp)
        log(f"writing {folders:,} partition folders to moto S3 ...")
        put_lake(s3, 0, folders)
        try:
            glue = make_client("glue", stack.endpoint, threads=8)
            first, wall1 = crawl(glue, s3)
            same, wall2 = crawl(glue, s3)
            extra = max(1, folders // 100)
            put_lake(s3, folders, extra)
            new, wall3 = crawl(glue, s3, RecrawlPolicy={"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"},
                               SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"})
            if args.spark:
                on_spark, wall4 = crawl_on_spark(stack.endpoint, f"http://127.0.0.1:{port}", args.spark_master)
        finally:
            stack.stop()
        print(f"# bench_crawl: {common.machine()}; moto S3 + DynamoDB Local on this machine")
        print(f"# {common.command_line('bench_crawl', argv)}")
        print(report(f"first crawl, {folders:,} folders", first, wall1))
        print(report("re-crawl, nothing changed", same, wall2))
        print(report(f"new folders only (+{extra:,})", new, wall3))
        if args.spark:
            print(report(f"first crawl on Spark ({args.spark_master}, JVM start included), {folders + extra:,} folders",
                         on_spark, wall4))
        assert first["PartitionsCreated"] == folders and new["PartitionsCreated"] == extra, (first, new)
    finally:
        stop_process(moto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
