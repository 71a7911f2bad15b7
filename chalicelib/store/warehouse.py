"""The Paimon warehouse: the files of table directories that pypaimon reads on its own. Its
``put``/``get``/``delete`` also write the metadata files of Iceberg tables (any ``file://`` or
``s3://`` location a CreateTable names, see ``service.iceberg_tables``).

pypaimon commits through the catalog but reads older snapshots, schemas and tags straight from
the table's directory (``schema/schema-N``, ``snapshot/snapshot-N``, ``snapshot/LATEST``,
``tag/tag-NAME``, ``branch/branch-NAME/...``), so every one of those the catalog decides is
also written here. Two backends, chosen by the URI's scheme:

- ``file://`` (local runs): a put writes a temporary file in the same directory and renames it
  over the target, so a reader never sees half a file;
- ``s3://bucket/prefix`` (deployed): a put is one PUT, which S3 makes visible whole. The key is
  the URI's text after the bucket as it is (no URI decoding: names may hold ``#``, ``?``, ``%``).
  tests/integration/test_paimon_s3_warehouse.py runs it against moto's S3 server.

The warehouse is ``PAIMON_WAREHOUSE``, by default ``file://<repo>/.data/paimon-warehouse``
(the data directory of ``make run``). botocore is imported on the first S3 call only, never at
import (Lambda cold start); it is botocore rather than boto3 because the Lambda package carries
botocore (pynamodb's dependency) and not boto3.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path
from itertools import groupby, islice
from operator import itemgetter
from typing import Any, Iterable, Iterator
from urllib.parse import quote, unquote, urlsplit

from chalicelib import clock

DB_SUFFIX = ".db"  # Paimon's Catalog.DB_SUFFIX: <warehouse>/<database>.db/<table>
MAIN_BRANCH = "main"

_REPO = Path(__file__).resolve().parents[2]
DEFAULT_WAREHOUSE = (_REPO / ".data" / "paimon-warehouse").as_uri()


def warehouse_root() -> str:
    """The configured warehouse URI (``PAIMON_WAREHOUSE``), without a trailing slash."""
    return (os.environ.get("PAIMON_WAREHOUSE") or DEFAULT_WAREHOUSE).rstrip("/")


# ------------------------------------------------------------------------------ layout
def table_path(database: str, table: str, root: str | None = None) -> str:
    """Where a new table's directory goes: ``<warehouse>/<database>.db/<table>``."""
    return f"{root or warehouse_root()}/{database}{DB_SUFFIX}/{table}"


def branch_root(table: str, branch: str | None = None) -> str:
    """A branch's directory inside the table's (the table's own for the main branch)."""
    if not branch or branch == MAIN_BRANCH:
        return table.rstrip("/")
    return f"{table.rstrip('/')}/branch/branch-{branch}"


def schema_file(table: str, schema_id: int, branch: str | None = None) -> str:
    """``schema/schema-N``."""
    return f"{branch_root(table, branch)}/schema/schema-{schema_id}"


def snapshot_file(table: str, snapshot_id: int, branch: str | None = None) -> str:
    """``snapshot/snapshot-N``."""
    return f"{branch_root(table, branch)}/snapshot/snapshot-{snapshot_id}"


def latest_file(table: str, branch: str | None = None) -> str:
    """``snapshot/LATEST``: the id of the latest snapshot, as text (a hint to readers)."""
    return f"{branch_root(table, branch)}/snapshot/LATEST"


def earliest_file(table: str, branch: str | None = None) -> str:
    """``snapshot/EARLIEST``: the id of the earliest snapshot kept."""
    return f"{branch_root(table, branch)}/snapshot/EARLIEST"


def tag_file(table: str, tag: str, branch: str | None = None) -> str:
    """``tag/tag-NAME``."""
    return f"{branch_root(table, branch)}/tag/tag-{tag}"


# ------------------------------------------------------------------------------ access
class WarehouseError(Exception):
    """A URI the warehouse cannot serve (unknown scheme, no bucket)."""


def put(uri: str, data: bytes | str) -> None:
    """Write a whole file, replacing any: readers see the old content or the new, never a part."""
    body = data.encode("utf-8") if isinstance(data, str) else data
    scheme, where = _split(uri)
    if scheme == "file":
        _local_put(Path(where), body)
    else:
        bucket, key = where
        _s3().put_object(Bucket=bucket, Key=key, Body=body)


def get(uri: str) -> bytes | None:
    """A file's content, or None if there is none."""
    scheme, where = _split(uri)
    if scheme == "file":
        try:
            return Path(where).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
    bucket, key = where
    client = _s3()
    try:
        return client.get_object(Bucket=bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]
    except client.exceptions.NoSuchKey:
        return None


def exists(uri: str) -> bool:
    """Whether the file exists."""
    scheme, where = _split(uri)
    if scheme == "file":
        return Path(where).is_file()
    bucket, key = where
    from botocore.exceptions import ClientError  # lazily, as _s3()

    try:
        _s3().head_object(Bucket=bucket, Key=key)
        return True
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise


def list_prefix(uri: str) -> list[str]:
    """URIs of every file under the directory ``uri`` (recursively), sorted."""
    scheme, where = _split(uri)
    if scheme == "file":
        base = Path(where)
        if not base.is_dir():
            return []
        return sorted(p.as_uri() for p in base.rglob("*") if p.is_file())
    bucket, key = where
    prefix = key.rstrip("/") + "/"
    return sorted(f"{scheme}://{bucket}/{k}" for k in _s3_keys(bucket, prefix))


def delete(uri: str) -> None:
    """Remove one file (nothing if it is absent)."""
    scheme, where = _split(uri)
    if scheme == "file":
        Path(where).unlink(missing_ok=True)
    else:
        bucket, key = where
        _s3().delete_object(Bucket=bucket, Key=key)


def delete_many(uris: list[str]) -> None:
    """Remove these files (absent ones: nothing), in the order given: on S3 a DeleteObjects per
    1,000 of a bucket's keys in a row instead of a DeleteObject each (a rollback over 10,000
    snapshots: 10 calls, not 10,000)."""
    located = [_split(uri) for uri in uris]
    for scheme, where in located:
        if scheme == "file":
            Path(where).unlink(missing_ok=True)
    in_buckets = [where for scheme, where in located if scheme != "file"]
    for bucket, entries in groupby(in_buckets, key=itemgetter(0)):
        for batch in _key_batches(key for _, key in entries):
            _s3_delete(_s3(), bucket, batch, f"s3://{bucket}")


def delete_tree(uri: str, deadline: float | None = None, last: str | None = None) -> bool:
    """Remove the directory ``uri`` and everything under it (nothing if it is absent); True when
    it is gone. With ``deadline`` (``clock.monotonic``), stop once it has passed and answer False:
    what is left is still there, to remove by calling again. ``last``: a file under ``uri`` removed
    only after every other one (Paimon's schema-0, whose presence keeps a path taken: a table
    created meanwhile never moves into a directory that is still being removed)."""
    scheme, where = _split(uri)
    if scheme == "file":
        return _local_delete_tree(Path(where), deadline, Path(_split(last)[1]) if last else None)
    bucket, key = where
    last_key = _split(last)[1][1] if last else None
    client = _s3()
    # Deleting while listing: a listing page's continuation starts after its last key.
    for batch in _key_batches(found for found in _s3_keys(bucket, key.rstrip("/") + "/") if found != last_key):
        _s3_delete(client, bucket, batch, uri)
        if _past(deadline):
            return False
    if last_key is not None:
        _s3_delete(client, bucket, [last_key], uri)
    return True


_DELETE_BATCH = 1000  # DeleteObjects takes at most 1,000 keys
# A local removal looks at the clock after this many files.
_LOCAL_CHECK_EVERY = 200


def _key_batches(keys: Iterable[str]) -> Iterator[list[str]]:
    """``keys`` in lists of at most _DELETE_BATCH, in order."""
    remaining = iter(keys)
    while batch := list(islice(remaining, _DELETE_BATCH)):
        yield batch


def _past(deadline: float | None) -> bool:
    return deadline is not None and clock.monotonic() >= deadline


def _s3_delete(client: Any, bucket: str, keys: list[str], uri: str) -> None:
    answer = client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
    # DeleteObjects answers 200 even when keys failed (AccessDenied...): they are listed in
    # Errors, and a removal that left files behind must not pass for done.
    if answer.get("Errors"):
        failed = answer["Errors"]
        raise WarehouseError(f"could not delete {len(failed)} objects under {uri!r}, e.g. "
                             f"{failed[0].get('Key')!r}: {failed[0].get('Code')} {failed[0].get('Message')}")


def _local_delete_tree(root: Path, deadline: float | None, last: Path | None) -> bool:
    if deadline is None and last is None:
        shutil.rmtree(root, ignore_errors=True)
        return True
    removed = 0
    # Bottom-up, so each directory is empty (but for ``last``'s) when it is reached.
    for walked, _subdirectories, files in os.walk(root, topdown=False):
        for name in files:
            path = Path(walked, name)
            if path == last:
                continue
            path.unlink(missing_ok=True)
            removed += 1
            if removed % _LOCAL_CHECK_EVERY == 0 and _past(deadline):
                return False
        _remove_if_empty(Path(walked))
    if last is not None:
        last.unlink(missing_ok=True)
        # Its directories, up to the root: only while empty (a table created at this path the
        # moment ``last`` went may already be writing there).
        for directory in [last.parent, *last.parent.parents]:
            _remove_if_empty(directory)
            if directory == root:
                break
    return True


def _remove_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:  # not empty, or gone already
        pass


# ------------------------------------------------------------------------------ backends
def _split(uri: str) -> tuple[str, Any]:
    """("file", local path) or ("s3", (bucket, key)); WarehouseError for any other URI."""
    parts = urlsplit(uri)
    if not uri[len(parts.scheme):].startswith("://"):
        # `file:/x` or `s3:bucket` parse with a scheme but have no authority part: refused as
        # unsupported rather than read differently by each backend.
        raise WarehouseError(f"unsupported warehouse URI {uri!r}: use file:// or s3://bucket/prefix")
    if parts.scheme == "file":
        return "file", unquote(parts.path)
    if parts.scheme in ("s3", "s3a"):
        # The key is the literal rest after the bucket, not urlsplit's path: table paths carry Glue
        # names as they are, and a `#` or `?` in one (Glue allows both) would otherwise start a
        # fragment or query, cutting the key short so that two tables' files shared one key.
        bucket, _, key = uri.split("://", 1)[1].partition("/")
        if not bucket:
            raise WarehouseError(f"no bucket in warehouse URI {uri!r}")
        return parts.scheme, (bucket, key.lstrip("/"))
    raise WarehouseError(f"unsupported warehouse URI {uri!r}: use file:// or s3://bucket/prefix")


def serves(uri: str) -> bool:
    """Whether ``uri`` is one the warehouse can read and write (file://, s3://bucket/...)."""
    try:
        _split(uri)
        return True
    except WarehouseError:
        return False


def local_uri(path: Path | str) -> str:
    """``file://`` URI of a local path (what pypaimon's FileIO takes)."""
    return "file://" + quote(str(Path(path).resolve()))


def _local_put(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Same directory, so the rename stays on one file system and is atomic.
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


_client: Any = None
_client_lock = threading.Lock()


def _s3() -> Any:
    """One S3 client per process; botocore honours AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL."""
    global _client
    if _client is None:
        with _client_lock:
            if _client is None:
                import botocore.session  # lazily: only S3 warehouses pay for it

                _client = botocore.session.get_session().create_client("s3")
    return _client


def _s3_keys(bucket: str, prefix: str) -> Iterator[str]:
    client = _s3()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for entry in page.get("Contents") or []:
            yield entry["Key"]


def reset_client() -> None:
    """Forget the S3 client (tests that change the endpoint)."""
    global _client
    _client = None
