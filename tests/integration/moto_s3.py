"""moto's S3 server on a free local port, for the tests whose data lives in S3 (the crawler's lake,
the Paimon warehouse on S3): moto stands in for S3, never for the catalog's store."""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import boto3

from infra.local.dynamodb_local import PREEXEC, free_port, stop_process
from infra.local.stack import REGION, wait_for_port

VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


def s3_client(url: str) -> Any:
    """A boto3 S3 client on moto (any credentials do)."""
    return boto3.client("s3", endpoint_url=url, region_name=REGION, aws_access_key_id="local",
                        aws_secret_access_key="local")


@contextmanager
def moto_s3(log_dir: Path, bucket: str) -> Iterator[str]:
    """Run moto's S3 server (its log in ``log_dir``) holding ``bucket``; yields its URL."""
    port = free_port()
    log = open(log_dir / "moto.log", "ab")
    process = subprocess.Popen([str(VENV_BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=PREEXEC)
    log.close()  # the child holds its own descriptor
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}"
        s3_client(url).create_bucket(Bucket=bucket)
        yield url
    finally:
        stop_process(process)
