"""The Paimon warehouse: the files of table directories that pypaimon reads on its own. Its
``put``/``get``/``delete`` also write the metadata files of Iceberg tables (at a location a
CreateTable names, inside the roots below; see ``service.iceberg_tables``).

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
(the data directory of ``make run``; on Lambda there is no default: the package is read-only).

**The sandbox.** Every read, write and delete goes through ``_place``, which refuses a URI that
does not lie inside a root the server owns: the warehouse, plus the prefixes of
``GLUE_ALLOWED_LOCATIONS`` (comma-separated ``s3://bucket/prefix`` or ``file:///dir``; empty: the
warehouse only). The check is made on the URI as the backend will use it: the scheme's case
folded, a ``file://`` path percent-decoded and its symlinks resolved (the resolved path is the one
opened), ``.`` / ``..`` / empty segments refused before anything else. A location a caller chose
(an Iceberg table's, an external Paimon table's) must also stay out of the managed Paimon
directories (``<warehouse>/<name>.db/...``): ``check_caller_location``. botocore is imported on the first S3 call only, never at
import (Lambda cold start); it is botocore rather than boto3 because the Lambda package carries
botocore (pynamodb's dependency) and not boto3.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from itertools import groupby, islice
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, TypeVar
from urllib.parse import quote, unquote, urlsplit

from chalicelib import clock, settings
from chalicelib.errors import AccessDeniedException, InvalidInputException

DB_SUFFIX = ".db"  # Paimon's Catalog.DB_SUFFIX: <warehouse>/<database>.db/<table>
MAIN_BRANCH = "main"

_REPO = Path(__file__).resolve().parents[2]
DEFAULT_WAREHOUSE = (_REPO / ".data" / "paimon-warehouse").as_uri()


WAREHOUSE_SETTING = "PAIMON_WAREHOUSE"
ALLOWED_SETTING = "GLUE_ALLOWED_LOCATIONS"


class WarehouseError(InvalidInputException):
    """A URI the warehouse cannot serve (unknown scheme, no bucket, ``..`` or empty segments)."""


class OutsideRoots(AccessDeniedException):
    """A URI outside every root the server owns (the warehouse, GLUE_ALLOWED_LOCATIONS)."""


class StorageRefused(AccessDeniedException):
    """The storage refused the server (S3 AccessDenied, NoSuchBucket, ...): the location is one the
    server may not reach, which is the caller's to fix, not a fault to retry."""


class NoWarehouse(AccessDeniedException):
    """No warehouse is configured where there is no default (on Lambda)."""


def _configured_warehouse() -> str | None:
    configured = settings.current()
    given = configured.paimon_warehouse
    if given:
        return given.rstrip("/")
    # The default lies inside the code's directory, which is read-only on Lambda: a deployment
    # without a warehouse refuses Paimon tables clearly instead of failing on the first write.
    return None if configured.on_lambda else DEFAULT_WAREHOUSE


def warehouse_root() -> str:
    """The configured warehouse URI (``PAIMON_WAREHOUSE``), without a trailing slash;
    NoWarehouse on Lambda when none is set."""
    root = _configured_warehouse()
    if root is None:
        raise NoWarehouse(f"This deployment has no warehouse: set {WAREHOUSE_SETTING} (s3://bucket/prefix) "
                          "before creating Paimon tables")
    return root


# ------------------------------------------------------------------------------ layout
# A name used as it is in a directory name: Glue names are folded to lowercase; anything else
# (``/``, ``..``, ``%``, ``#``, non-ASCII, ...) is replaced and made unique by the uid.
_PLAIN_NAME = re.compile(r"[a-z0-9_][a-z0-9_.-]{0,254}")
_UNSAFE = re.compile(r"[^a-z0-9_-]")


def path_segment(name: str, uid: str | None) -> str:
    """A directory name for a database or table name: the name itself when it is plain
    (``[a-z0-9_][a-z0-9_.-]*``), else its safe characters (others as ``_``) and ``-<uid>``, so no
    name reaches outside its parent or into another's directory."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    if not uid:
        raise ValueError(f"the name {name!r} needs a uid to become a directory name")
    return f"{_UNSAFE.sub('_', name)[:64]}-{uid}"


def table_path(database: str, table: str, root: str | None = None, *, database_uid: str | None = None,
               table_uid: str | None = None) -> str:
    """Where a new table's directory goes: ``<warehouse>/<database>.db/<table>``, each name as
    ``path_segment`` makes it safe."""
    return (f"{root or warehouse_root()}/{path_segment(database, database_uid)}{DB_SUFFIX}/"
            f"{path_segment(table, table_uid)}")


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
# What S3 answers when the server may not reach a location (HEAD requests carry only the
# status): the caller's location to fix, so a client error naming it, never a 500 to retry.
_DENIED = frozenset({"AccessDenied", "AllAccessDisabled", "AccountProblem", "403"})
_UNUSABLE = frozenset({"NoSuchBucket", "InvalidBucketName", "PermanentRedirect", "AuthorizationHeaderMalformed",
                       "IllegalLocationConstraintException", "301", "400"})
_Function = TypeVar("_Function", bound=Callable[..., Any])


def _storage_refusals(function: _Function) -> _Function:
    """Turn S3's refusals of the location into client errors naming it: StorageRefused (access
    denied), WarehouseError (no such bucket, another region's)."""
    @functools.wraps(function)
    def checked(where: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(where, *args, **kwargs)
        except Exception as error:
            code = (getattr(error, "response", None) or {}).get("Error", {}).get("Code")
            if code not in _DENIED and code not in _UNUSABLE:
                raise
            named = str(where if isinstance(where, str) else (where[0] if where else ""))[:300]
            if code in _DENIED:
                raise StorageRefused(f"The server may not use the location {named}: S3 answered {code}.") from None
            raise WarehouseError(f"The location {named} cannot be used: S3 answered {code}.") from None
    return checked  # type: ignore[return-value]


@_storage_refusals
def put(uri: str, data: bytes | str) -> None:
    """Write a whole file, replacing any: readers see the old content or the new, never a part."""
    body = data.encode("utf-8") if isinstance(data, str) else data
    scheme, where = _place(uri)
    if scheme == "file":
        _local_put(Path(where), body)
    else:
        bucket, key = where
        _s3().put_object(Bucket=bucket, Key=key, Body=body)


@_storage_refusals
def get(uri: str) -> bytes | None:
    """A file's content, or None if there is none."""
    scheme, where = _place(uri)
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


@_storage_refusals
def exists(uri: str) -> bool:
    """Whether the file exists."""
    scheme, where = _place(uri)
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


@_storage_refusals
def list_prefix(uri: str) -> list[str]:
    """URIs of every file under the directory ``uri`` (recursively), sorted."""
    scheme, where = _place(uri)
    if scheme == "file":
        base = Path(where)
        if not base.is_dir():
            return []
        # Named under ``uri`` as given (``where`` has its symlinks resolved).
        given = uri.rstrip("/")
        return sorted(f"{given}/{quote(p.relative_to(base).as_posix())}" for p in base.rglob("*") if p.is_file())
    bucket, key = where
    prefix = key.rstrip("/") + "/"
    return sorted(f"{scheme}://{bucket}/{k}" for k in _s3_keys(bucket, prefix))


@_storage_refusals
def delete(uri: str) -> None:
    """Remove one file (nothing if it is absent)."""
    scheme, where = _place(uri)
    if scheme == "file":
        Path(where).unlink(missing_ok=True)
    else:
        bucket, key = where
        _s3().delete_object(Bucket=bucket, Key=key)


@_storage_refusals
def delete_many(uris: list[str]) -> None:
    """Remove these files (absent ones: nothing), in the order given: on S3 a DeleteObjects per
    1,000 of a bucket's keys in a row instead of a DeleteObject each (a rollback over 10,000
    snapshots: 10 calls, not 10,000)."""
    located = [_place(uri) for uri in uris]
    for scheme, where in located:
        if scheme == "file":
            Path(where).unlink(missing_ok=True)
    in_buckets = [where for scheme, where in located if scheme != "file"]
    for bucket, entries in groupby(in_buckets, key=itemgetter(0)):
        for batch in _key_batches(key for _, key in entries):
            _s3_delete(_s3(), bucket, batch, f"s3://{bucket}")


@_storage_refusals
def delete_tree(uri: str, deadline: float | None = None, last: str | None = None) -> bool:
    """Remove the directory ``uri`` and everything under it (nothing if it is absent); True when
    it is gone. With ``deadline`` (``clock.monotonic``), stop once it has passed and answer False:
    what is left is still there, to remove by calling again. ``last``: a file under ``uri`` removed
    only after every other one (Paimon's schema-0, whose presence keeps a path taken: a table
    created meanwhile never moves into a directory that is still being removed)."""
    scheme, where = _place(uri)
    if scheme == "file":
        return _local_delete_tree(Path(where), deadline, Path(_place(last)[1]) if last else None)
    bucket, key = where
    last_key = _place(last)[1][1] if last else None
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
def _parse(uri: str) -> tuple[str, Any]:
    """("file", local path) or ("s3", (bucket, key)), the form checked but not the roots;
    WarehouseError for any URI the backends could read differently than it looks."""
    parts = urlsplit(uri)
    if not uri[len(parts.scheme):].startswith("://"):
        # `file:/x` or `s3:bucket` parse with a scheme but have no authority part: refused as
        # unsupported rather than read differently by each backend.
        raise WarehouseError(f"unsupported location {uri[:300]!r}: use file:// or s3://bucket/prefix")
    if "\x00" in uri:
        raise WarehouseError("a location must not contain NUL")
    scheme = parts.scheme.lower()  # urlsplit folds it already; said, since the roots compare it
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            # file://host/path names another machine's file (or, read carelessly, this one's).
            raise WarehouseError(f"unsupported location {uri[:300]!r}: a file:// location names no host")
        path = unquote(parts.path)  # decoded first: `..%2F` is checked as the `../` it becomes
        _check_segments(uri, path[1:])
        return "file", path
    if scheme in ("s3", "s3a"):
        # The key is the literal rest after the bucket, not urlsplit's path: table paths carry Glue
        # names as they are, and a `#` or `?` in one (Glue allows both) would otherwise start a
        # fragment or query, cutting the key short so that two tables' files shared one key.
        bucket, _, key = uri.split("://", 1)[1].partition("/")
        if not bucket:
            raise WarehouseError(f"no bucket in location {uri[:300]!r}")
        key = key.lstrip("/")
        # S3 keeps `..` literally, but S3-compatible stores and the clients reading the table may
        # not: refused as a segment, and as the segment its percent-decoding makes.
        _check_segments(uri, key)
        _check_segments(uri, unquote(key))
        return scheme, (bucket, key)
    raise WarehouseError(f"unsupported location {uri[:300]!r}: use file:// or s3://bucket/prefix")


def _check_segments(uri: str, path: str) -> None:
    """WarehouseError for a ``.``, ``..`` or empty segment of ``path`` (a trailing ``/`` is fine)."""
    segments = path.split("/")
    if segments and segments[-1] == "":
        segments.pop()
    for segment in segments:
        if segment in ("", ".", ".."):
            raise WarehouseError(f"the location {uri[:300]!r} has a {segment or 'empty'!r} path segment: "
                                 "give it without '.', '..' or '//'")


def _place(uri: str) -> tuple[str, Any]:
    """``_parse``, then the roots: the local path (symlinks resolved: the path to open) or the
    (bucket, key), if it lies inside a root the server owns; OutsideRoots otherwise."""
    scheme, where = _parse(uri)
    roots = _roots()
    if scheme == "file":
        resolved = os.path.realpath(where)
        for root_scheme, root in roots:
            if root_scheme == "file" and _inside(resolved, root, os.sep):
                return "file", resolved
    else:
        bucket, key = where
        for root_scheme, root in roots:
            if root_scheme == "s3" and root[0] == bucket and _inside(key, root[1], "/"):
                return scheme, where
    raise OutsideRoots(f"The location {uri[:300]} is outside the locations this catalog may use (its "
                       f"warehouse and {ALLOWED_SETTING}).")


def _inside(path: str, root: str, separator: str) -> bool:
    return root == "" or path == root or path.startswith(root.rstrip(separator) + separator)


_roots_cache: tuple[tuple[str | None, str | None], tuple[tuple[str, Any], ...]] | None = None


def _roots() -> tuple[tuple[str, Any], ...]:
    """The roots the server owns, parsed once per setting (a file root's symlinks resolved)."""
    global _roots_cache
    configured = (_configured_warehouse(), settings.current().allowed_locations)
    cached = _roots_cache
    if cached is not None and cached[0] == configured:
        return cached[1]
    found: list[tuple[str, Any]] = []
    for given in [configured[0] or "", *(configured[1] or "").split(",")]:
        given = given.strip().rstrip("/")
        if not given:
            continue
        scheme, where = _parse(given)  # a bad setting fails every file access, loudly
        if scheme == "file":
            found.append(("file", os.path.realpath(where)))
        else:
            found.append(("s3", where))
    roots = tuple(found)
    _roots_cache = (configured, roots)
    return roots


def check_caller_location(uri: str) -> None:
    """Refuse a location a caller chose (an Iceberg table's, an external Paimon table's) unless
    the server may use it: its form (WarehouseError), inside a root (OutsideRoots), and not in
    the managed Paimon directories ``<warehouse>/<name>.db/...``, whose files only the tables the
    catalog made there may own (OutsideRoots)."""
    _place(uri)
    if in_managed_area(uri):
        raise OutsideRoots(f"The location {uri[:300]} is the warehouse's own: its <name>{DB_SUFFIX} directories "
                           "hold the catalog's managed tables. Choose a location outside them.")


def in_managed_area(uri: str) -> bool:
    """Whether ``uri`` is the warehouse itself or lies in one of its ``<name>.db`` directories,
    where the catalog creates managed tables (False for a URI of another form or root)."""
    root = _configured_warehouse()
    if root is None:
        return False
    scheme, where = _parse(uri)
    root_scheme, root_where = _parse(root)
    if (scheme == "file") != (root_scheme == "file"):
        return False
    if scheme == "file":
        path, base = os.path.realpath(where), os.path.realpath(root_where)
        if not _inside(path, base, os.sep):
            return False
        relative = path[len(base):].lstrip(os.sep)
    else:
        if root_where[0] != where[0] or not _inside(where[1], root_where[1], "/"):
            return False
        relative = where[1][len(root_where[1]):].lstrip("/")
    return relative == "" or relative.split("/")[0].endswith(DB_SUFFIX)


def serves(uri: str) -> bool:
    """Whether ``uri`` has a form the warehouse can read and write (file://, s3://bucket/...)."""
    try:
        _parse(uri)
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
