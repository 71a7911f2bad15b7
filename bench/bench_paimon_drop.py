"""Paimon DropTable of a managed table with many files: the answer stays within the work budget.

Starts DynamoDB Local and two API servers on the same store and local warehouse: one with the
work budget (``--budget``, 5 s as deployed), one whose budget is 600 s, which removes the whole
directory in the request, as every drop did before. Each drops a table whose directory holds
``--files`` files (pypaimon creates the table; the files are written straight into its
directory). Printed side by side: the time to the answer, and to the directory being gone (the
bounded server's background cleaner removes what its drop left).

Run: ``.venv/bin/python -m bench.bench_paimon_drop [--files 300000] [--budget 5] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence
from urllib.parse import unquote, urlparse

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.common import command_line, log, machine, print_table  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

ACCOUNT = "123456789012"
WAREHOUSE = "bench"


def _catalog(endpoint: str) -> Any:
    from pypaimon.catalog.catalog_factory import CatalogFactory
    return CatalogFactory.create({"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE,
                                  "token.provider": "bear", "token": ACCOUNT})


def _big_table(catalog: Any, database: str, name: str, files: int) -> Path:
    from pypaimon.schema import data_types as pt
    from pypaimon.schema.schema import Schema
    schema = Schema(fields=[pt.DataField(0, "id", pt.AtomicType("INT"))], options={"bucket": "-1"})
    catalog.create_table(f"{database}.{name}", schema, False)
    directory = Path(unquote(urlparse(catalog.rest_api.get_table(_identifier(database, name)).path).path))
    for bucket in range(0, files, 10_000):
        folder = directory / f"bucket-{bucket // 10_000}"
        folder.mkdir()
        for n in range(bucket, min(bucket + 10_000, files)):
            (folder / f"data-{n}.parquet").write_bytes(b"x")
    return directory


def _identifier(database: str, name: str) -> Any:
    from pypaimon.common.identifier import Identifier
    return Identifier.create(database, name)


def _drop(catalog: Any, database: str, name: str, directory: Path, timeout: float) -> tuple[float, float]:
    """Seconds to the drop's answer, and to its directory being gone."""
    started = time.perf_counter()
    catalog.drop_table(_identifier(database, name))
    answered = time.perf_counter() - started
    while directory.exists():
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"{directory} still there after {timeout:.0f} s")
        time.sleep(0.05)
    return answered, time.perf_counter() - started


ENVIRONMENT = (f"{machine()}; "
               "local warehouse (file://), DynamoDB Local in memory")


def bounded_and_unbounded(budget: float, before: str) -> Iterator[tuple[str, str, CatalogStack]]:
    """(label, endpoint, the stack) of two API servers on one store and local warehouse: one with
    a work budget of ``budget`` s, then one of 600 s (``before``: what that server does in the
    request)."""
    with tempfile.TemporaryDirectory(prefix="bench-paimon-") as tmp:
        server_env = {"PAIMON_WAREHOUSE": Path(tmp, "warehouse").as_uri(), "GLUE_WORK_BUDGET_SECONDS": str(budget)}
        with CatalogStack(log_dir=Path(tmp) / "logs", server_env=server_env) as stack:
            yield f"work budget {budget:g} s", stack.endpoint, stack
            unbounded = stack.extra_server({"GLUE_WORK_BUDGET_SECONDS": "600"}, name="unbounded").start()
            try:
                yield f"budget 600 s: {before}", unbounded.endpoint, stack
            finally:
                unbounded.stop()


def side_by_side(budget: float, before: str, prefix: str,
                 measure: Callable[[Any, CatalogStack, str, str], tuple[float, str]]) -> tuple[list[list[str]], float]:
    """Run ``measure(catalog, stack, database, label)`` -> (seconds to the answer, what follows
    it, as text) on each server of ``bounded_and_unbounded``, each time in a new database
    ``prefix_N``; the rows (server, answer, what follows) and the ratio of the answers, bounded
    ÷ in one request."""
    rows: list[list[str]] = []
    answers: list[float] = []
    for label, endpoint, stack in bounded_and_unbounded(budget, before):
        catalog = _catalog(endpoint)
        database = f"{prefix}_{len(rows)}"
        catalog.create_database(database, False)
        answered, then = measure(catalog, stack, database, label)
        rows.append([label, f"{answered:.2f} s", then])
        answers.append(answered)
    return rows, answers[0] / answers[1]


def print_side_by_side(title: str, command: str, columns: Sequence[str], rows: list[list[str]], ratio: float) -> None:
    """The report of ``side_by_side``: a title, the command, the table, the ratio."""
    print(f"\n## {title}\n\n`{command}`: {ENVIRONMENT}.\n")
    print_table(list(columns), rows)
    print(f"\nRatio of the answers, bounded ÷ in one request: {ratio:.2f}")


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, help="files in each dropped table's directory (default 300,000; quick 20,000)")
    parser.add_argument("--budget", type=float, help="the bounded server's work budget, seconds (default 5; quick 0.2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    files = args.files or (20_000 if args.quick else 300_000)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 5.0)
    command = command_line("bench_paimon_drop", argv)

    def measure(catalog: Any, _: CatalogStack, database: str, label: str) -> tuple[float, str]:
        log(f"writing {files:,} files into a table's directory")
        directory = _big_table(catalog, database, "big", files)
        log(f"dropping it through the server with {label}")
        answered, gone = _drop(catalog, database, "big", directory, timeout=max(600.0, files / 100))
        return answered, f"{gone:.2f} s"
    rows, ratio = side_by_side(budget, "the whole removal in the request, as before", "drop", measure)
    print_side_by_side(f"Paimon DropTable of a managed table of {files:,} files", command,
                       ["server", "answer", "directory gone"], rows, ratio)


if __name__ == "__main__":
    main()
