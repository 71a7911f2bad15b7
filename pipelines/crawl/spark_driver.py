"""The Spark side of a crawl too large for one function: ``spark-submit pipelines/crawl/spark_driver.py
--spec FILE`` runs THE crawl engine (``pipelines.crawl.run_crawl``) on the driver, with the
classification of files (one or two ranged GETs per file) spread over Spark tasks
(``mapPartitions``: each task its own boto3 S3 client, from the same endpoint settings, and a few
threads); listing, grouping and the catalog writes stay on the driver, as in a crawl function.

The crawl worker starts it (``pipelines.crawl_worker``) and keeps owning the run: its state, its
heartbeat, StopCrawler (it kills the driver). The spec (a JSON file, mode 0600, which the driver
deletes once read; or an ``s3://`` object on EMR Serverless) holds what the worker would pass
``run_crawl``: the crawler (GetCrawler's shape), its classifiers, the Glue endpoint, region, the
CA bundle, and the credentials the crawl signs with (``SecretCiphertext``, KMS-sealed, on EMR), so
no secret is ever on a command line. On stdout, one line each: ``CRAWL-PROGRESS {json}`` as the
engine reports, then ``CRAWL-RESULT {json}`` (run_crawl's result), or ``CRAWL-FAILED message``
and exit status 1. With ``ResultUri`` in the spec the result is also written there (EMR).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional, Sequence

PROGRESS, RESULT, FAILED = "CRAWL-PROGRESS", "CRAWL-RESULT", "CRAWL-FAILED"
# Ranged readers per Spark task (the reads are latency-bound, as the function's 16 threads are).
TASK_THREADS = 8
# Files per Spark job: between two of them the driver reports progress.
SPARK_BATCH = 4096


def spark_classifier(sc: Any, region: str, partitions: Optional[int] = None) -> Any:
    """A ``classify_files`` for run_crawl whose work runs in Spark tasks of ``sc``."""
    slots = partitions or max(2, sc.defaultParallelism * 2)

    def classify_files(bucket: str, files: list[tuple[str, int]], custom: list[dict[str, Any]]) -> list[Any]:
        def task(items: Any) -> Any:
            from concurrent.futures import ThreadPoolExecutor

            import boto3
            from botocore.exceptions import ClientError

            from pipelines.crawl import classify as cls

            # The endpoint comes from the task's environment (AWS_ENDPOINT_URL_S3), as the worker's.
            s3 = boto3.session.Session(region_name=region).client("s3")

            def one(item: tuple[int, tuple[str, int]]) -> tuple[int, Any]:
                index, (key, size) = item
                try:
                    return index, cls.classify(s3, bucket, key, size, custom)
                except ClientError as error:
                    detail = error.response.get("Error", {})
                    return index, ("error", f"{detail.get('Code', '')}: {detail.get('Message', error)}")
            with ThreadPoolExecutor(max_workers=TASK_THREADS) as pool:
                yield from pool.map(one, list(items))

        rdd = sc.parallelize(list(enumerate(files)), max(1, min(len(files), slots)))
        found = dict(rdd.mapPartitions(task).collect())
        out = [found[i] for i in range(len(files))]
        for item in out:
            if isinstance(item, tuple):
                from pipelines.crawl import CrawlFailed
                raise CrawlFailed(item[1])
        return out
    return classify_files


def _emit(kind: str, payload: Any) -> None:
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    print(f"{kind} {text}", flush=True)


def _read_spec(where: str) -> dict[str, Any]:
    if where.startswith("s3://"):
        import boto3

        from pipelines.crawl import s3files

        bucket, key = s3files.split_uri(where)
        spec: dict[str, Any] = json.loads(boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())
        return spec
    with open(where) as handle:
        spec = json.load(handle)
    os.unlink(where)  # the secret stays on disk only until the driver has read it
    return spec


def _credentials(spec: dict[str, Any]) -> tuple[str, str]:
    secret = spec.get("Secret")
    if secret is None and spec.get("SecretCiphertext"):
        import base64

        import boto3

        secret = boto3.client("kms", region_name=spec["Region"]).decrypt(
            CiphertextBlob=base64.b64decode(spec["SecretCiphertext"]),
            EncryptionContext={"crawl": spec.get("CrawlId", "")})["Plaintext"].decode()
    return spec["KeyId"], secret or "crawler"


def _write_result(uri: str, payload: dict[str, Any]) -> None:
    import boto3

    from pipelines.crawl import s3files

    bucket, key = s3files.split_uri(uri)
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=json.dumps(payload).encode())


def _exit_with_parent() -> None:
    """Exit when the process that started this one (spark-submit's JVM) is gone: a worker killed
    mid-crawl takes its JVM with it (PR_SET_PDEATHSIG), and this driver must not go on writing
    the catalog while another worker crawls the run again."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)
    threading.Thread(target=watch, name="crawl-driver-watchdog", daemon=True).start()


def main(argv: Optional[Sequence[str]] = None) -> int:
    _exit_with_parent()
    parser = argparse.ArgumentParser(prog="spark_driver.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True, help="the crawl's spec: a JSON file, or an s3:// URI")
    args = parser.parse_args(argv)
    spec: dict[str, Any] = {}
    try:
        spec = _read_spec(args.spec)
        import boto3

        from pipelines.crawl import run_crawl
        from pipelines.runtime import ship_package, spark_session

        key_id, secret = _credentials(spec)
        session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret,
                                        region_name=spec["Region"])
        glue = session.client("glue", endpoint_url=spec["Endpoint"], verify=spec.get("Verify"))
        s3 = boto3.session.Session(region_name=spec["Region"]).client("s3")
        spark = spark_session(app_name=f"crawl-{spec['Crawler'].get('Name', '')}")
        try:
            ship_package(spark)  # the engine to the executors (a cluster has no copy of it)
            result = run_crawl(spec["Crawler"], classifiers=spec.get("Classifiers") or [], glue=glue, s3=s3,
                               should_stop=lambda: False, progress=lambda update: _emit(PROGRESS, update),
                               classify_files=spark_classifier(spark.sparkContext, spec["Region"]),
                               classify_batch=SPARK_BATCH)
        finally:
            spark.stop()
    except Exception as error:  # noqa: BLE001 - one line, what LastCrawl.ErrorMessage shows
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        if type(error).__name__ != "CrawlFailed":
            message = f"{type(error).__name__}: {message}"
        _emit(FAILED, message)
        if spec.get("ResultUri"):
            try:
                _write_result(spec["ResultUri"], {"Error": message})
            except Exception:  # noqa: BLE001 - the job's own state still says FAILED
                pass
        return 1
    _emit(RESULT, result)
    if spec.get("ResultUri"):
        _write_result(spec["ResultUri"], {"Result": result})
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):
        # Run as a file (spark-submit): the repository (or the shipped zip) is on sys.path;
        # this file's folder must not shadow anything.
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
    sys.exit(main())
