"""Spark session, timing and progress for the pipelines."""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO, Union

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession


# A session, or a function that starts one when a step first needs Spark (the CLI's: a
# register of a small local dataset never does).
SparkLike = Union[SparkSession, Callable[[], SparkSession]]


def resolve(spark: SparkLike) -> SparkSession:
    """The session itself, started now if ``spark`` is a function that starts one."""
    return spark if isinstance(spark, SparkSession) else spark()


QUIET_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-quiet.properties")


def spark_session(master: Optional[str] = None, app_name: str = "glue-catalog-pipelines",
                  conf: Optional[dict[str, str]] = None, verbose: bool = False,
                  jvm_log: Optional[str] = None) -> SparkSession:
    """The active session, or a new one. ``master`` applies only when spark-submit did not set
    one (so the same job runs unchanged on a cluster); local runs default to ``local[*]``.

    Unless ``verbose``, Spark logs errors only (from the JVM's start, through a log4j2 file,
    so its startup warnings do not show either) and draws no console progress bar.
    ``jvm_log``: when this call starts the JVM, its stdout and stderr (Java's own start-up
    warnings, Spark's log, the Python workers' stderr) are appended to this file instead of
    this process's terminal."""
    builder = SparkSession.builder.appName(app_name)
    has_master = SparkConf().contains("spark.master")
    if master or not has_master:
        builder = builder.master(master or "local[*]")
    chosen = dict(conf or {})
    launching = SparkContext._active_spark_context is None and not has_master  # a JVM of our own
    local = (master or "local").startswith("local") and not has_master
    java_options = []
    if not verbose:
        chosen.setdefault("spark.ui.showConsoleProgress", "false")
        if launching:  # under spark-submit the cluster's logging stays
            java_options.append(f"-Dlog4j2.configurationFile=file:{QUIET_LOG4J}")
    if local:
        # spark-submit resolves the hostname before any conf applies (and warns about it).
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # One machine: no UI (its server costs start time and a port to fight over), a loopback
        # driver address (hostname lookups stall on some sandboxes), and few shuffle partitions
        # (the default 200 are 200 tiny tasks for the sample's aggregations).
        chosen.setdefault("spark.ui.enabled", "false")
        chosen.setdefault("spark.driver.host", os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"))
        chosen.setdefault("spark.sql.shuffle.partitions", "8")
        # Listing a few hundred partition folders is milliseconds on the driver; Spark's default
        # (32 paths) runs a parallel listing job for it instead.
        chosen.setdefault("spark.sql.sources.parallelPartitionDiscovery.threshold", "1024")
        if launching:
            # A short local job is mostly JVM warm-up: the C1 compiler alone and the serial GC
            # cut Spark's start and first job by ~40% on 2 cores (measured: start 34 -> 21 s,
            # first job 25 -> 10 s under load). Long local jobs can set their own options.
            java_options += ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    if java_options:
        chosen.setdefault("spark.driver.extraJavaOptions", " ".join(java_options))
    for key, value in chosen.items():
        builder = builder.config(key, value)
    if jvm_log and SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        launch = {**chosen, "spark.app.name": app_name}
        if master or not has_master:
            launch["spark.master"] = master or "local[*]"
        _launch_gateway(launch, jvm_log)
    session = builder.getOrCreate()
    level = os.environ.get("PIPELINES_SPARK_LOG_LEVEL") or ("WARN" if verbose else "ERROR")
    session.sparkContext.setLogLevel(level)
    return session


def _launch_gateway(conf: dict[str, str], log_path: str) -> None:
    """Start Spark's JVM (spark-submit, as PySpark does) with its output in ``log_path``, and
    make it the gateway the next SparkContext uses. Java prints `WARNING: Using incubator
    modules` itself as it starts, before any logging is configured (Spark adds the module on
    the JVM's command line), so only its stderr can keep that line off a terminal."""
    from pyspark.java_gateway import launch_gateway
    with open(log_path, "ab") as log:
        gateway = launch_gateway(SparkConf().setAll(list(conf.items())),
                                 popen_kwargs={"stdout": log, "stderr": log})
    SparkContext._ensure_initialized(gateway=gateway)


class Timer:
    """Named wall-clock phases: ``with timer.phase("listing"): ...``; ``timer.seconds``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.started = time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def total(self) -> float:
        """Seconds since the timer was made."""
        return time.perf_counter() - self.started


def per_second(rate: float) -> str:
    """A rate for people: whole numbers from 10 up, two significant digits below (14 partitions
    in 33 s is 0.42/s, not 0/s)."""
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


class Progress:
    """Prints ``label: done/total`` to stderr every ``interval`` seconds while a long step runs;
    ``current`` is polled (e.g. a Spark accumulator's value)."""

    def __init__(self, label: str, total: int, current: Callable[[], int], enabled: bool = True,
                 interval: float = 2.0, stream: TextIO = sys.stderr) -> None:
        self.label, self.total, self.current = label, total, current
        self.enabled, self.interval, self.stream = enabled, interval, stream
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._start = 0.0

    def __enter__(self) -> "Progress":
        self._start = time.perf_counter()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.report()

    def report(self) -> None:
        done = self.current()
        elapsed = time.perf_counter() - self._start
        rate = done / elapsed if elapsed > 0 else 0.0
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        print(f"  {self.label}: {done:,}/{self.total:,}{share}, {per_second(rate)}/s", file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
            self.report()


def say(message: str, quiet: bool = False) -> None:
    """A progress line on stderr (summaries go to stdout)."""
    if not quiet:
        # One write: print() writes the text and its newline apart, and Spark starts on a
        # thread of its own, so two lines could interleave.
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


_shipped: set[int] = set()
_temp_dirs: list[str] = []


def remove_temp_dirs() -> None:
    """Delete the folders :func:`ship_package` made (called when Spark stops, and at exit)."""
    import shutil
    while _temp_dirs:
        shutil.rmtree(_temp_dirs.pop(), ignore_errors=True)


def ship_package(spark: SparkSession) -> None:
    """Send this package (its subpackages too: the crawl engine) to the executors once per
    SparkContext (``addPyFile`` of a zip), so tasks can import it on a cluster without --py-files."""
    import tempfile
    import zipfile
    sc = spark.sparkContext
    if id(sc) in _shipped:
        return
    package = os.path.dirname(os.path.abspath(__file__))
    folder = tempfile.mkdtemp(prefix="pipelines-")
    if not _temp_dirs:
        import atexit
        atexit.register(remove_temp_dirs)
    _temp_dirs.append(folder)
    target = os.path.join(folder, "pipelines.zip")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder_path, folders, names in os.walk(package):
            folders[:] = sorted(f for f in folders if os.path.isfile(os.path.join(folder_path, f, "__init__.py")))
            relative = os.path.relpath(folder_path, package)
            inside = "pipelines" if relative == "." else f"pipelines/{relative.replace(os.sep, '/')}"
            for name in sorted(names):
                if name.endswith(".py"):
                    archive.write(os.path.join(folder_path, name), f"{inside}/{name}")
    sc.addPyFile(target)
    _shipped.add(id(sc))
