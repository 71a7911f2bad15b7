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
