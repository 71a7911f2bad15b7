"""Listing a Hive-style partitioned dataset (``root/k1=v1/k2=v2/part-0001.parquet``).

Local paths are walked with ``os.scandir``: the driver lists the top levels, and once there are
enough directories the subtrees are walked on the executors in parallel. Any other filesystem
Spark knows (``s3a://``, ``hdfs://``, ``gs://``) is listed by Spark itself (its parallel
partition discovery) through the ``binaryFile`` source. The result is one record per leaf
directory: its partition values, file count, bytes and one file to sample the schema from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Optional
from urllib.parse import unquote, urlparse

from pipelines.formats import maybe_data

if TYPE_CHECKING:  # the CLI's checks use this module before (and without) importing pyspark
    from pyspark.sql import SparkSession

    from pipelines.runtime import SparkLike


@dataclass(frozen=True)
class PartitionDir:
    """One leaf directory holding data files."""

    keys: tuple[str, ...]
    values: tuple[str, ...]
    location: str      # URI with a trailing slash
    files: int
    bytes: int
    sample_file: str   # URI of one of its files


@dataclass
class Listing:
    """What the scan found."""

    root: str
    partitions: list[PartitionDir]
    ignored: list[str]  # paths that are not part of a consistent Hive layout
    parallel: bool      # whether executors did the walking


def is_local(path: str) -> bool:
    """Whether ``path`` is on the local filesystem (no scheme, or ``file:``)."""
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def local_path(path: str) -> str:
    """The absolute filesystem path of a local path or ``file:`` URI."""
    if path.startswith("file:"):
        path = unquote(urlparse(path).path)
    return os.path.abspath(path)


def uri(path: str) -> str:
    """A local path as a ``file://`` URI; other URIs unchanged. No trailing slash."""
    if is_local(path):
        return "file://" + local_path(path).rstrip("/")
    return path.rstrip("/")


def hidden(name: str) -> bool:
    """Hadoop's rule: names starting with ``_`` or ``.`` are not data (``_SUCCESS``, ``.crc``)."""
    return name.startswith(("_", "."))


def parse_segment(segment: str) -> Optional[tuple[str, str]]:
    """``k=v`` -> (k, unescaped v); anything else -> None."""
    key, sep, value = segment.partition("=")
    if not sep or not key:
        return None
    return key, unquote(value)


def _scan(path: str) -> tuple[list[str], list[tuple[str, int]]]:
    dirs, files = [], []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if hidden(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=True):
                    dirs.append(entry.name)
                elif entry.is_file(follow_symlinks=True) and maybe_data(entry.name):
                    # A README.txt beside the data is not a file of the dataset.
                    files.append((entry.name, entry.stat(follow_symlinks=True).st_size))
    except FileNotFoundError:
        pass
    return sorted(dirs), sorted(files)


# A record: (relative segments, file count, bytes, first file name) or (relative path, None...) for junk.
Record = tuple[tuple[str, ...], int, int, str]


def walk_local(root: str, start: tuple[str, ...]) -> Iterator[Record]:
    """Every directory under ``root/start`` that holds files, depth first (runs on executors)."""
    stack = [start]
    while stack:
        rel = stack.pop()
        dirs, files = _scan(os.path.join(root, *rel))
        if files:
            yield rel, len(files), sum(size for _, size in files), files[0][0]
        stack.extend(rel + (d,) for d in reversed(dirs))


def list_local(spark: Optional["SparkLike"], root: str, parallel_threshold: int = 64) -> tuple[list[Record], bool]:
    """Walk a local tree: top levels on the driver, subtrees on the executors once the
    frontier holds ``parallel_threshold`` directories (and a Spark session is given)."""
    base = local_path(root)
    if not os.path.isdir(base):
        raise FileNotFoundError(f"no such directory: {root}")
    records: list[Record] = []
    frontier: list[tuple[str, ...]] = [()]
    while frontier and (spark is None or len(frontier) < parallel_threshold):
        next_frontier = []
        for rel in frontier:
            dirs, files = _scan(os.path.join(base, *rel))
            if files:
                records.append((rel, len(files), sum(size for _, size in files), files[0][0]))
            next_frontier.extend(rel + (d,) for d in dirs)
        frontier = next_frontier
    if not frontier:
        return records, False
    from pipelines.runtime import resolve, ship_package
    session = resolve(spark)  # type: ignore[arg-type]
    ship_package(session)
    sc = session.sparkContext
    slices = min(len(frontier), max(1, sc.defaultParallelism) * 4)
    walked = sc.parallelize(frontier, slices).flatMap(lambda rel: walk_local(base, rel)).collect()
    return records + walked, True


def list_spark(spark: SparkSession, root: str) -> list[Record]:
    """List any Hadoop filesystem with Spark's own (parallel) file listing; sizes unknown (0)."""
    files = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(root).inputFiles()
    # Spark spells URIs its own way (file:/x vs file:///x): compare host and path only.
    base = urlparse(root)
    prefix = base.path.rstrip("/") + "/"
    grouped: dict[tuple[str, ...], list[str]] = {}
    for path in files:
        parsed = urlparse(path)
        if parsed.netloc != base.netloc or not parsed.path.startswith(prefix):
            continue
        *parts, name = parsed.path[len(prefix):].split("/")
        if not maybe_data(name):
            continue
        grouped.setdefault(tuple(parts), []).append(name)
    return [(rel, len(names), 0, sorted(names)[0]) for rel, names in sorted(grouped.items())]


def scan(spark: Optional["SparkLike"], root: str, parallel_threshold: int = 64) -> Listing:
    """List ``root`` and keep the leaf directories that form one consistent Hive layout (the
    same keys, in the same order, at every leaf). Files anywhere else are reported as ignored."""
    if is_local(root):
        records, parallel = list_local(spark, root, parallel_threshold)
    else:
        if spark is None:
            raise ValueError("listing a non-local path needs a Spark session")
        from pipelines.runtime import resolve
        records, parallel = list_spark(resolve(spark), root), True
    base = uri(root)
    candidates: list[tuple[tuple[str, ...], tuple[str, ...], Record]] = []
    ignored: list[str] = []
    for record in records:
        rel = record[0]
        parsed = [parse_segment(s) for s in rel]
        if not rel or any(p is None for p in parsed):
            ignored.append("/".join((base,) + rel) + "/")
            continue
        keys = tuple(p[0] for p in parsed)  # type: ignore[index]
        values = tuple(p[1] for p in parsed)  # type: ignore[index]
        candidates.append((keys, values, record))
    # The layout is the key sequence most leaves agree on; others are reported, not registered.
    counts: dict[tuple[str, ...], int] = {}
    for keys, _, _ in candidates:
        counts[keys] = counts.get(keys, 0) + 1
    layout = max(counts, key=lambda k: (counts[k], -len(k)), default=())
    partitions = []
    for keys, values, (rel, nfiles, nbytes, first) in candidates:
        location = "/".join((base,) + rel) + "/"
        if keys != layout:
            ignored.append(location)
            continue
        partitions.append(PartitionDir(keys, values, location, nfiles, nbytes, location + first))
    partitions.sort(key=lambda p: p.values)
    return Listing(root=base, partitions=partitions, ignored=sorted(ignored), parallel=parallel)


def sample_files(partitions: list[PartitionDir], count: int) -> list[str]:
    """Up to ``count`` files spread evenly over the partitions (first and last included), so
    schema inference sees old and new data without reading everything."""
    if count <= 0 or len(partitions) <= count:
        return [p.sample_file for p in partitions]
    step = (len(partitions) - 1) / (count - 1) if count > 1 else 0
    picked = sorted({round(i * step) for i in range(count)})
    return [partitions[i].sample_file for i in picked]


def check_keys(partitions: Iterable[PartitionDir]) -> tuple[str, ...]:
    """The partition key names of a listing (empty for an unpartitioned dataset)."""
    for partition in partitions:
        return partition.keys
    return ()


def data_files(spark: Optional["SparkSession"], location: str, fmt: str) -> list[str]:
    """The data files of format ``fmt`` directly in a partition folder (or the folder itself
    when it cannot be listed here): other files beside them (README.txt, _SUCCESS, a CSV next
    to Parquet) are left out, so Spark never tries to read them as ``fmt``. Local folders are
    scanned; others are listed through Hadoop's FileSystem on the driver."""
    from pipelines.formats import is_data_file
    if is_local(location):
        path = local_path(location)
        if not os.path.isdir(path):
            return [location]
        with os.scandir(path) as entries:
            names = sorted(e.name for e in entries if e.is_file(follow_symlinks=True))
        base = uri(location)
        return [f"{base}/{name}" for name in names if is_data_file(name, fmt)]
    if spark is None:
        return [location]
    jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
    hadoop_path = jvm.org.apache.hadoop.fs.Path(location)
    fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())  # type: ignore[attr-defined]
    if not fs.exists(hadoop_path) or not fs.getFileStatus(hadoop_path).isDirectory():
        return [location]
    out = []
    for status in fs.listStatus(hadoop_path):
        if status.isFile() and is_data_file(status.getPath().getName(), fmt):
            out.append(status.getPath().toString())
    return sorted(out)
