"""A stray README.txt (and _SUCCESS, a notes file) in a dataset's folders: register, stats and read
skip it instead of failing (Spark would try it as Parquet); a damaged data file still fails, in
one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines import cli
from pipelines.read import load_table
from pipelines.register import RegisterOptions, register
from pipelines.stats import compute_statistics
from tests.pipelines.conftest import copy_tree

pytestmark = pytest.mark.slow


@pytest.fixture
def stray(sales, tmp_path) -> str:
    root = copy_tree(sales.roots["parquet"], tmp_path / "sales")
    partition = Path(root) / "country=US" / "year=2024" / "month=02"
    (partition / "README.txt").write_text("Exported by the nightly job.\n")
    (Path(root) / "country=FR" / "year=2023" / "month=01" / "_SUCCESS").write_text("")
    (Path(root) / "NOTES.md").write_text("# notes\n")
    only_text = Path(root) / "country=US" / "year=2025" / "month=01"
    only_text.mkdir(parents=True)
    (only_text / "README.txt").write_text("no data yet\n")
    return root


def test_register_stats_and_read_skip_a_stray_text_file(spark, config, glue, database, sales, stray):
    summary = register(spark, config, RegisterOptions(root=stray, database=database, table="sales", quiet=True))
    assert (summary.listed, summary.added, summary.failed) == (12, 12, 0)  # the text-only folder is no partition
    loaded = load_table(spark, config, database, "sales")
    assert loaded.df.count() == spark.read.parquet(sales.roots["parquet"]).count()
    assert not any(f.endswith((".txt", "_SUCCESS")) for f in loaded.files)
    stats = compute_statistics(spark, config, database, "sales")
    assert stats.rows == loaded.df.count()


def test_a_damaged_data_file_still_fails_in_one_line_naming_it(spark, config, glue, database, stray, capsys):
    register(spark, config, RegisterOptions(root=stray, database=database, table="sales", quiet=True))
    bad = Path(stray) / "country=FR" / "year=2024" / "month=03" / "zz-damaged.parquet"
    bad.write_bytes(b"this is not parquet")
    common = ["--endpoint-url", config.glue_endpoint, "--region", config.region, "--quiet"]
    assert cli.main(["read", "--database", database, "--table", "sales", "--count", *common]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "zz-damaged.parquet" in err[0]


def test_the_command_prints_only_its_own_lines_the_jvm_writes_to_a_log(spark, config, glue, database, stray, endpoint,
                                                                        tmp_path):
    """As a user runs it: ``python -m pipelines read`` in a process of its own (its own JVM). A failed
    read's stderr is exactly the one-line error, which names the JVM's log (Java's start-up warning and
    Spark's errors are there, not on the terminal); a good read writes nothing to stderr and leaves no log."""
    import os
    import subprocess
    import sys

    from infra.local.stack import REPO
    from tests.pipelines.conftest import CREDENTIALS
    register(spark, config, RegisterOptions(root=stray, database=database, table="sales", quiet=True))
    bad = Path(stray) / "country=FR" / "year=2024" / "month=03" / "zz-damaged.parquet"
    bad.write_bytes(b"this is not parquet")
    logs = tmp_path / "tmp"
    logs.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYSPARK", "SPARK_", "PIPELINES_"))}
    env.update(CREDENTIALS, AWS_ENDPOINT_URL_GLUE=endpoint, AWS_ENDPOINT_URL_LAKEFORMATION=endpoint,
               TMPDIR=str(logs))
    command = [sys.executable, "-m", "pipelines", "read", "--database", database, "--table", "sales", "--count",
               "--quiet", "--master", "local[2]"]

    failed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert failed.returncode == 1, failed.stderr
    lines = failed.stderr.splitlines()
    assert len(lines) == 1, failed.stderr
    assert lines[0].startswith("python -m pipelines read: failed: ") and "zz-damaged.parquet" in lines[0], lines[0]
    kept = list(logs.glob("pipelines-spark-*.log"))
    assert len(kept) == 1 and f"Spark's log: {kept[0]}" in lines[0], (lines[0], kept)
    jvm_said = kept[0].read_text()
    assert "ERROR Executor" in jvm_said and "TaskContextImpl" not in jvm_said
    kept[0].unlink()

    bad.unlink()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"read {database}.sales: ")
    assert not list(logs.glob("pipelines-spark-*.log"))
