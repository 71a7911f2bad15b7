"""Pieces the benchmarks share: boto3 clients and a fixed pool of worker threads."""

from __future__ import annotations

import os
import platform
import queue
import shlex
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

import boto3
from botocore.config import Config

from infra.local.stack import REGION


def command_line(module: str, argv: Optional[Sequence[str]] = None) -> str:
    """How to run this benchmark again, for its report: ``.venv/bin/python -m bench.<module>``
    and the arguments it was given (``argv``, else the process's own)."""
    return " ".join([f".venv/bin/python -m bench.{module}", *map(shlex.quote, sys.argv[1:] if argv is None else argv)])


def machine() -> str:
    """CPUs, system and Python version: how every report's environment line begins."""
    return f"{os.cpu_count()} CPUs, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def make_client(service: str, endpoint: str, threads: int = 4, access_key: Optional[str] = None) -> Any:
    """A boto3 client on 127.0.0.1; one attempt, so a failure shows instead of being retried.
    ``access_key``: e.g. the stack's ddb_access_key_id, for DynamoDB Local's catalog database."""
    return boto3.client(
        service, endpoint_url=endpoint, region_name=REGION,
        aws_access_key_id=access_key or "testing", aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=5,
                      read_timeout=900, max_pool_connections=max(10, threads + 2)),
    )


def run_parallel(clients: Sequence[Any], chunks: Sequence[Any], work: Callable[[Any, Any], None]) -> float:
    """Run ``work(client, chunk)`` for every chunk on one thread per client; returns seconds."""
    pending: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    for chunk in chunks:
        pending.put(chunk)
    errors: list[BaseException] = []

    def lane(client: Any) -> None:
        while not errors:
            try:
                chunk = pending.get_nowait()
            except queue.Empty:
                return
            try:
                work(client, chunk)
            except BaseException as error:  # reported by the caller's thread
                errors.append(error)

    threads = [threading.Thread(target=lane, args=(client,), daemon=True) for client in clients]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return elapsed


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a Markdown table (ready to paste into the README or a closing note)."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


class Report:
    """A benchmark's findings as Markdown, printed at the end so they paste as they are: the
    checked measures, then each detail table (``tables``: header -> rows), then the notes."""

    def __init__(self, *detail_headers: Sequence[str]) -> None:
        self.summary: list[tuple[str, str, str, str]] = []
        self.tables: list[tuple[Sequence[str], list[tuple[str, ...]]]] = [(h, []) for h in detail_headers]
        self.notes: list[str] = []

    def check(self, measure: str, result: str, target: str, ok: Optional[bool]) -> None:
        """A measure against its target (``ok`` None: reported, no target)."""
        self.summary.append((measure, result, target, "-" if ok is None else ("yes" if ok else "**NO**")))

    def print(self, command: str, env: str) -> None:
        print()
        print(f"Command: `{command}`  ")
        print(f"Machine: {env}")
        print()
        print_table(["Measure", "Result", "Target", "Met"], self.summary)
        for header, rows in self.tables:
            print()
            print_table(header, rows)
        print()
        for note in self.notes:
            print(f"- {note}")


def log(message: str) -> None:
    """A timestamped progress line on stderr (stdout carries the report)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
