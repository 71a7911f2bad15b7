"""Every pipeline subcommand with each kind of bad argument, run as ``python -m pipelines ...``
in a subprocess: one line on stderr naming the argument, exit code 2 for a wrong command line
and 1 for an unreachable catalog, no traceback, and Spark never started (the checks run before
it: no "starting Spark" line). No Spark starts here, so the module is not marked slow.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from infra.local.stack import REPO
from pipelines import sample
from tests.pipelines.conftest import CREDENTIALS

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused

# (id, argv with {placeholders}, exit code, text the one error line must contain)
CASES: list[tuple[str, list[str], int, str]] = [
    ("no-subcommand", [], 2, "required"),
    ("unknown-subcommand", ["crawl"], 2, "invalid choice"),
    ("sample-formats", ["sample", "{tmp}/s1", "--formats", "parquet,orc"], 2, "--formats"),
    ("sample-years", ["sample", "{tmp}/s2", "--years", "20x"], 2, "--years"),
    ("sample-months", ["sample", "{tmp}/s3", "--months", "13"], 2, "--months: 13 is out of range: 1..12"),
    ("sample-files-not-integer", ["sample", "{tmp}/s3", "--files-per-partition", "2x"], 2,
     "--files-per-partition: '2x' is not an integer"),
    ("sample-out-is-a-file", ["sample", "{file}"], 2, "OUT"),
    ("register-missing-path", ["register", "{tmp}/nowhere", "--database", "{db}", "--table", "t"], 2, "PATH"),
    ("register-path-is-a-file", ["register", "{file}", "--database", "{db}", "--table", "t"], 2, "PATH"),
    ("register-path-not-hive", ["register", "{lake}", "--database", "{db}", "--table", "t"], 2, "key=value"),
    ("register-no-database-arg", ["register", "{dataset}", "--table", "t"], 2, "--database"),
    ("register-index-syntax", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--index", "by_c"],
     2, "--index"),
    ("register-index-key", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--index", "i:colour"],
     2, "colour is not a partition key"),
    ("register-too-many-indexes", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--index", "a:country",
                                   "--index", "b:year", "--index", "c:month", "--index", "d:country,year"], 2, "at most 3"),
    ("register-unknown-database", ["register", "{dataset}", "--database", "{db}_missing", "--table", "t",
                                   "--no-create-database"], 2, "--database"),
    ("register-keys-differ", ["register", "{dataset}", "--database", "{db}", "--table", "flat"], 2, "partition keys"),
    ("register-segments", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--segments", "11"],
     2, "--segments"),
    ("register-batch-size", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--batch-size", "x"],
     2, "--batch-size"),
    ("register-format", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--format", "orc"],
     2, "--format"),
    ("register-conf", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--conf", "spark.x"], 2, "--conf"),
    ("register-endpoint-url", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--endpoint-url",
                               "localhost:8000"], 2, "--endpoint-url"),
    ("register-unreachable", ["register", "{dataset}", "--database", "{db}", "--table", "t", "--endpoint-url",
                              UNREACHABLE], 1, "cannot reach the catalog"),
    ("stats-unknown-database", ["stats", "--database", "{db}_missing", "--table", "sales"], 2, "--database"),
    ("stats-unknown-table", ["stats", "--database", "{db}", "--table", "nope"], 2, "--table"),
    ("stats-partition-key", ["stats", "--database", "{db}", "--table", "sales", "--partition", "colour=red"],
     2, "--partition"),
    ("stats-partition-type", ["stats", "--database", "{db}", "--table", "sales", "--partition", "year=20x"],
     2, "--partition"),
    ("stats-where-syntax", ["stats", "--database", "{db}", "--table", "sales", "--where", "year >"], 2, "--where"),
    ("stats-where-type", ["stats", "--database", "{db}", "--table", "sales", "--where", "year = 'abc'"], 2, "--where"),
    ("stats-columns", ["stats", "--database", "{db}", "--table", "sales", "--columns", "amount,colour"],
     2, "--columns"),
    ("stats-rsd", ["stats", "--database", "{db}", "--table", "sales", "--approx", "--rsd", "0.5"], 2, "--rsd"),
    ("stats-partitions-of-flat", ["stats", "--database", "{db}", "--table", "flat", "--all-partitions"],
     2, "no partition keys"),
    ("stats-unreachable", ["stats", "--database", "{db}", "--table", "sales", "--endpoint-url", UNREACHABLE],
     1, "cannot reach the catalog"),
    ("read-unknown-table", ["read", "--database", "{db}", "--table", "nope"], 2, "--table"),
    ("read-filter-syntax", ["read", "--database", "{db}", "--table", "sales", "--filter", "country = "], 2, "--filter"),
    ("read-filter-column", ["read", "--database", "{db}", "--table", "sales", "--filter", "colour = 'red'"],
     2, "not a partition key"),
    ("read-filter-type", ["read", "--database", "{db}", "--table", "sales", "--filter", "month = 'May'"],
     2, "--filter"),
    ("read-filter-flat", ["read", "--database", "{db}", "--table", "flat", "--filter", "x = 1"], 2, "--filter"),
    ("read-as-of-syntax", ["read", "--database", "{db}", "--table", "sales", "--as-of", "yesterday"], 2, "--as-of"),
    ("read-as-of-not-governed", ["read", "--database", "{db}", "--table", "sales", "--as-of", "2024-05-01T12:00:00Z"],
     2, "not governed"),
    ("read-output-exists", ["read", "--database", "{db}", "--table", "sales", "--output", "{tmp}"], 2, "--output"),
    ("read-show", ["read", "--database", "{db}", "--table", "sales", "--show", "-1"], 2, "--show"),
    ("read-count-and-output", ["read", "--database", "{db}", "--table", "sales", "--count", "--output", "{tmp}/o"],
     2, "not allowed with"),
    ("read-unreachable", ["read", "--database", "{db}", "--table", "sales", "--endpoint-url", UNREACHABLE],
     1, "cannot reach the catalog"),
]


@pytest.fixture(scope="module")
def world(glue, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A database with a partitioned table ``sales`` and an unpartitioned ``flat`` (made with
    boto3, no Spark), a tiny Hive-style dataset, a plain file and an existing folder."""
    tmp = tmp_path_factory.mktemp("cli-errors")
    lake = tmp / "lake"
    result = sample.generate(str(lake), formats=("parquet",), countries=("US",), years=(2024,), months=range(1, 3))
    plain = tmp / "plain.txt"
    plain.write_text("not a dataset\n")
    database = f"cli_{os.getpid()}"
    glue.create_database(DatabaseInput={"Name": database})
    sd = {"Columns": [{"Name": "amount", "Type": "decimal(10,2)"}], "Location": "file:///nowhere/",
          "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}
    glue.create_table(DatabaseName=database, TableInput={
        "Name": "sales", "StorageDescriptor": sd, "PartitionKeys": [
            {"Name": "country", "Type": "string"}, {"Name": "year", "Type": "int"}, {"Name": "month", "Type": "int"}]})
    glue.create_table(DatabaseName=database, TableInput={"Name": "flat", "StorageDescriptor": sd})
    return {"tmp": str(tmp), "lake": str(lake), "dataset": result.roots["parquet"], "file": str(plain),
            "db": database}


@pytest.fixture(scope="module")
def outcomes(world: dict[str, str], endpoint: str) -> dict[str, subprocess.CompletedProcess]:
    """Every case run once, four at a time (each is a Python start and a catalog call or two)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYSPARK", "SPARK_"))}
    env.update(CREDENTIALS, AWS_ENDPOINT_URL_GLUE=endpoint, AWS_ENDPOINT_URL_LAKEFORMATION=endpoint)

    def run(case: tuple[str, list[str], int, str]) -> tuple[str, subprocess.CompletedProcess]:
        argv = [arg.format(**world) for arg in case[1]]
        # The timeout only keeps a regression (a Spark start, a hang) from stalling the suite.
        return case[0], subprocess.run([sys.executable, "-m", "pipelines", *argv], cwd=REPO, env=env,
                                       capture_output=True, text=True, timeout=300)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(run, CASES))


@pytest.mark.parametrize("name, argv, code, needle", CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_is_one_line_before_spark(outcomes, name, argv, code, needle):
    done = outcomes[name]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr + done.stdout
    assert not any("starting Spark" in line for line in lines), done.stderr
    assert len(lines) == 1, done.stderr
    assert done.returncode == code, done.stderr
    assert lines[0].startswith("python -m pipelines") and needle in lines[0], lines[0]
    assert done.stdout == ""


def test_exit_code_rule_is_in_the_help():
    from pipelines import cli
    assert "Exit codes: 0 done, 1" in cli.EPILOG and "2 the command line is wrong" in cli.EPILOG


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("command", ["sample", "register", "stats", "read"])
def test_every_option_has_help_and_its_default(command):
    from pipelines import cli
    sub = _subparsers(cli.build_parser())[command]
    formatter = cli.DefaultsFormatter(prog="x")
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.option_strings or action.dest}: no help text"
        shown: Any = formatter._get_help_string(action)
        if action.option_strings and action.default not in (None, False, [], ""):
            assert "default" in shown, f"{command} {action.option_strings}: default {action.default!r} not shown"


@pytest.mark.parametrize("command", ["stats", "read"])
def test_stats_and_read_say_what_they_do_by_default(command):
    from pipelines import cli
    assert "By default" in _subparsers(cli.build_parser())[command].description


def test_the_shipped_package_folder_is_removed():
    from pipelines import runtime

    class FakeContext:
        added: list[str] = []

        def addPyFile(self, path: str) -> None:
            self.added.append(path)

    class FakeSpark:
        sparkContext = FakeContext()

    runtime.ship_package(FakeSpark())  # type: ignore[arg-type]
    folder = Path(FakeContext.added[0]).parent
    assert folder.name.startswith("pipelines-") and folder.is_dir()
    runtime.remove_temp_dirs()  # what the CLI does when Spark stops (and atexit otherwise)
    assert not folder.exists()
